"""Reading a paged answer of hublib (``items`` and ``next_cursor``) from its first page to its
last, as an interface that pages would."""
from __future__ import annotations

from typing import Callable


def every_item(read: Callable[..., dict], *args, pages: int, **query) -> list:
    """The items of every page of ``read(*args, **query, cursor=…)``, following ``next_cursor``
    from none until it ends; AssertionError when it has not ended after ``pages`` pages."""
    items, cursor = [], None
    for _ in range(pages):
        page = read(*args, **query, cursor=cursor)
        items += page['items']
        cursor = page['next_cursor']
        if cursor is None:
            return items
    raise AssertionError(f'the cursor did not end after {pages} pages: {len(items)} items')
