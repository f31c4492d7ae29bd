"""JSON in the hub's TEXT columns: setting values, command params and results.

One decoder for every reader: a value that is not JSON (written into the file by hand, or by an
old tool) reads as its raw text, so a reader shows it instead of failing, and a reader that needs
a certain shape (``pacing`` an object, ``auto_refresh_minutes`` an integer) passes it over like
any other value of the wrong shape.
"""
from __future__ import annotations

import json
from typing import Any


def dump(value: Any) -> str | None:
    """JSON text of a command's params or result as the queue stores it (``None`` stays NULL)."""
    return None if value is None else json.dumps(value, ensure_ascii=False)


def load(text: str | None) -> Any:
    """The value stored as ``text``: its JSON, or the text itself when it is not JSON."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


__all__ = ['dump', 'load']
