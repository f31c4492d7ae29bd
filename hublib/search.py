"""Full-text search over summaries, descriptions and comment bodies (SQLite FTS5), contract §10.

``issue_fts`` is a derived index: an external-content FTS5 table whose content is the view
``issue_fts_source`` over the mirror (one document per issue: summary, description and every
comment body), so the text is never stored twice. ``issue_search`` gives each issue a stable
integer ``docid`` (the issue table's own rowid may change on VACUUM). Ingest keeps the index
current in its own transaction (:func:`texts` before the page is written, :func:`reindex` after);
a file without the index gets it built at open (:func:`build`).

Decisions:
- Tokenizer ``unicode61 remove_diacritics 2`` folds case (Cyrillic included) and Latin
  diacritics. It does not fold ``ё`` into ``е``, so the source view and every query spell ``ё``
  as ``е``; a snippet therefore shows ``е`` where the text has ``ё``.
- A query is words, each optionally ending in ``*`` (a prefix); all must match. Anything else
  (quotes, operators, column filters) is read as plain words: FTS5's own syntax never reaches the
  engine, so no query can fail there. A text without a single word matches nothing.
- Ranking: bm25 with weights summary 10, description 3, comments 1 — a summary hit ranks first.
"""
from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from operator import itemgetter

from .db import Hub
from .models import Issue, IssueComment, IssueSearch, SqlNames
from .validation import INT64_MAX

WEIGHTS = (10.0, 3.0, 1.0)
SNIPPET_TOKENS = 12

# The index and its content are this module's own objects, not models: their names live here.
FTS_TABLE, SOURCE_VIEW = 'issue_fts', 'issue_fts_source'
_ISSUE, _COMMENT, _DOC = SqlNames(Issue), SqlNames(IssueComment), SqlNames(IssueSearch)

_FOLD = "replace(replace({text}, 'ё', 'е'), 'Ё', 'Е')"
_SOURCE_VIEW = f"""
CREATE VIEW IF NOT EXISTS {SOURCE_VIEW} AS
SELECT d.{_DOC.docid} AS docid, {_FOLD.format(text=f'i.{_ISSUE.summary}')} AS summary,
  {_FOLD.format(text=f'i.{_ISSUE.description}')} AS description,
  (SELECT group_concat({_FOLD.format(text=f'c.{_COMMENT.body}')}, char(10)) FROM {_COMMENT} c
   WHERE c.{_COMMENT.key} = d.{_DOC.key}) AS comments
FROM {_DOC} d JOIN {_ISSUE} i ON i.{_ISSUE.key} = d.{_DOC.key}
"""
_FTS_TABLE = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5(summary, description, comments,
  content='{SOURCE_VIEW}', content_rowid='docid', tokenize='unicode61 remove_diacritics 2')
"""
_DOCS = f'INSERT OR IGNORE INTO {_DOC} ({_DOC.key}) SELECT value FROM json_each(:keys)'
_TEXTS = (f'SELECT d.{_DOC.key}, s.docid, s.summary, s.description, s.comments FROM {_DOC} d '
          f'JOIN {SOURCE_VIEW} s ON s.docid = d.{_DOC.docid} '
          f'WHERE d.{_DOC.key} IN (SELECT value FROM json_each(:keys))')
DELETE_DOCUMENT = (f'INSERT INTO {FTS_TABLE} ({FTS_TABLE}, rowid, summary, description, comments) '
                   "VALUES ('delete', ?, ?, ?, ?)")
INSERT_DOCUMENT = (f'INSERT INTO {FTS_TABLE} (rowid, summary, description, comments) '
                   'VALUES (?, ?, ?, ?)')

_WORD = re.compile(r'(\w+)(\*?)')


def exists(hub: Hub) -> bool:
    """Whether this file has the full-text index."""
    return hub.db.table_exists(FTS_TABLE)


_BUILD = (_SOURCE_VIEW, _FTS_TABLE,
          f'INSERT OR IGNORE INTO {_DOC} ({_DOC.key}) SELECT {_ISSUE.key} FROM {_ISSUE}',
          f"INSERT INTO {FTS_TABLE} ({FTS_TABLE}) VALUES ('rebuild')")


def build(hub: Hub) -> None:
    """Create the index over the whole mirror (caller holds the write transaction)."""
    for statement in _BUILD:
        hub.db.execute_sql(statement)


def texts(hub: Hub, keys: list[str]) -> dict[str, tuple]:
    """``key → (docid, summary, description, comments)`` as the index reads them now."""
    return {key: rest for key, *rest in map(tuple, hub.db.execute_sql(
        _TEXTS, {'keys': json.dumps(keys)}))}


def reindex(hub: Hub, keys: list[str], before: dict[str, tuple]) -> None:
    """Index ``keys`` again after a page was written; ``before`` = their ``texts`` before it.

    Only documents whose text changed are touched: external content is taken out of the index
    with the text it was indexed with, then put back with the new one. A refresh that finds an
    issue as it was costs two reads and no tokenizing.
    """
    hub.db.execute_sql(_DOCS, {'keys': json.dumps(keys)})
    after = texts(hub, keys)
    cursor = hub.db.cursor()
    cursor.executemany(DELETE_DOCUMENT, [old for key, old in before.items() if after.get(key) != old])
    cursor.executemany(INSERT_DOCUMENT, [new for key, new in after.items() if before.get(key) != new])


# JQL's text fields (contract §16) and the index column each searches (None: all three).
COLUMN_OF = {'summary': 'summary', 'description': 'description', 'comment': 'comments',
             'text': None}


def match_expression(text: str, column: str | None = None) -> str | None:
    """The FTS5 query for a user's search text: quoted words (``*`` keeps a prefix), all required;
    ``None`` when the text holds no word (it matches nothing).

    A text wrapped in double quotes (JQL ``summary ~ "\\"точная фраза\\""``) is a phrase: its
    words in that order. ``column`` restricts the match to one column of the index.
    """
    folded = text.replace('ё', 'е').replace('Ё', 'Е')
    stripped = folded.strip()
    words = _WORD.findall(folded)
    if len(stripped) > 1 and stripped[0] == stripped[-1] == '"' and '"' not in stripped[1:-1] \
            and words:
        star = words[-1][1]
        terms = ['"' + ' '.join(word for word, _ in words) + '"' + star]
    else:
        # a word written twice is required once (FTS5 would read its documents twice)
        terms = list(dict.fromkeys(f'"{word}"{star}' for word, star in words))
    if not terms:
        return None
    expression = ' '.join(terms)
    return f'{{{column}}} : ({expression})' if column else expression


def match_terms(texts: list[str]) -> list[tuple[str, bool]]:
    """The distinct terms of each text as :func:`match_expression` searches them: (word, is a
    prefix), ё folded as the index folds it; what a cost estimate weighs."""
    terms: list[tuple[str, bool]] = []
    for text in dict.fromkeys(texts):
        folded = text.replace('ё', 'е').replace('Ё', 'Е')
        terms.extend(dict.fromkeys((word.casefold(), bool(star))
                                   for word, star in _WORD.findall(folded)))
    return terms


def match_any(texts: list[str], column: str | None = None) -> str | None:
    """One FTS5 query matching any of ``texts`` (each read by :func:`match_expression`): the
    OR-ed ``~`` clauses of one field as one MATCH, not one per clause; None when none holds a
    word."""
    expressions = list(dict.fromkeys(
        expression for text in texts
        if (expression := match_expression(text, column)) is not None))
    if len(expressions) <= 1:
        return expressions[0] if expressions else None
    return ' OR '.join(f'({expression})' for expression in expressions)


def matching_keys(match: str) -> str:
    """A subquery of the keys whose document matches the FTS5 expression in parameter ``match``
    (the SQL placeholder, e.g. ``:j3``): how JQL's ``~`` filters."""
    return (f'SELECT d.{_DOC.key} FROM {FTS_TABLE} f CROSS JOIN {_DOC} d '
            f'ON d.{_DOC.docid} = f.rowid WHERE {FTS_TABLE} MATCH {match}')


RANK_SQL = f'bm25({FTS_TABLE}, {", ".join(map(str, WEIGHTS))})'
SNIPPET_SQL = f"snippet({FTS_TABLE}, -1, '[', ']', '…', {SNIPPET_TOKENS})"


# --- bounded ranking (issue 24, contract §10 ``ranked_within``) ---------------------------------
#
# bm25 scores one match at a time (~2.4 µs each with its issue), so ranking every match of a
# common word costs what the word costs: "данных", in half the documents, took 2.0 s CPU for a
# first page at 1,000,000 issues. FTS5 walks a word's documents in rowid order and can stop
# early, so the hub ranks within a window: the RANK_WINDOW newest matches (highest docid: docids
# are given when the mirror first receives an issue, so these are the issues it got last) are
# ranked together, best first; then the next RANK_WINDOW older ones, best first; and so on until
# the matches end. The answer says ``ranked_within: RANK_WINDOW`` on every page of such a walk.
# A query with at most RANK_WINDOW matches (a rare word, or a common one narrowed by a project, a
# second word or another clause) is one window: its ranking is exact and nothing is said.
#
# Why 1,000: the first page of 100 is then the best tenth of the newest thousand matches, and
# the cost per page is bounded whatever the word. CPU per window query, "данных" (half the
# documents), 200,000 issues, shared machine: 1,000 rows 6–8 ms, 2,000 rows 8–11 ms, 5,000 rows
# 16–21 ms, plus bm25's own count of the word's documents (its IDF, ~3 ms at 200,000, ~15–23 ms
# at 1,000,000), paid once a query. Only the page's rows become hits (~3 µs each).
RANK_WINDOW = 1000
_NO_TOP = INT64_MAX  # the first window has no upper docid


@dataclass(frozen=True)
class Hit:
    """A ranked match: its document, where it stands, and the window it was ranked in (``top``:
    the window holds the matches below this docid)."""

    docid: int
    relevance: float
    sort_key: str
    neighbor: int | None
    top: int


def ranked_hits(hub: Hub, window_sql: str, params: dict, after: list | None,
                limit: int) -> tuple[list[Hit], bool]:
    """Up to ``limit + 1`` matches after the cursor ``after`` (``[top, bounded, relevance,
    sort_key]`` of the last one shown) in window order, and whether ranking was bounded.

    ``window_sql`` selects ``(docid, relevance, sort_key, neighbor)`` of the matches below
    ``:top``, newest first, ``LIMIT :window``. Each window is fetched with one more row than it
    holds, which says whether another follows; a page that exhausts its window goes on with the
    next. The first window's top is its newest docid + 1, and every cursor carries its window's
    top, so documents indexed while a client pages do not shift the windows it walks.
    """
    size = RANK_WINDOW
    top, bounded = (after[0], bool(after[1])) if after is not None else (None, False)
    mark = (after[2], after[3]) if after is not None else None
    hits: list[Hit] = []
    while len(hits) <= limit:
        rows = hub.db.execute_sql(window_sql, {**params, 'top': _NO_TOP if top is None else top,
                                               'window': size + 1}).fetchall()
        if not rows:
            break
        if top is None:
            top = rows[0][0] + 1
        more = len(rows) > size
        bounded = bounded or more
        ranked = sorted(rows[:size], key=itemgetter(1, 2))
        start = 0
        if mark is not None:
            start = bisect_right(ranked, mark, key=itemgetter(1, 2))
            mark = None
        # only the rows the page shows become hits (a window holds thousands)
        hits.extend(Hit(docid, relevance, sort_key, neighbor, top) for docid, relevance, sort_key,
                    neighbor in ranked[start:start + limit + 1 - len(hits)])
        if not more:
            break
        top = rows[size - 1][0]
    return hits[:limit + 1], bounded


__all__ = ['FTS_TABLE', 'SOURCE_VIEW', 'exists', 'build', 'texts', 'reindex', 'INSERT_DOCUMENT',
           'DELETE_DOCUMENT', 'match_expression', 'match_any', 'match_terms', 'matching_keys', 'COLUMN_OF', 'RANK_SQL',
           'SNIPPET_SQL', 'RANK_WINDOW', 'Hit', 'ranked_hits']
