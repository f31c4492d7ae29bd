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

from .db import Hub
from .models import Issue, IssueComment, IssueSearch, SqlNames

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
        terms = [f'"{word}"{star}' for word, star in words]
    if not terms:
        return None
    expression = ' '.join(terms)
    return f'{{{column}}} : ({expression})' if column else expression


def matching_keys(match: str) -> str:
    """A subquery of the keys whose document matches the FTS5 expression in parameter ``match``
    (the SQL placeholder, e.g. ``:j3``): how JQL's ``~`` filters."""
    return (f'SELECT d.{_DOC.key} FROM {FTS_TABLE} f CROSS JOIN {_DOC} d '
            f'ON d.{_DOC.docid} = f.rowid WHERE {FTS_TABLE} MATCH {match}')


RANK_SQL = f'bm25({FTS_TABLE}, {", ".join(map(str, WEIGHTS))})'
SNIPPET_SQL = f"snippet({FTS_TABLE}, -1, '[', ']', '…', {SNIPPET_TOKENS})"

__all__ = ['FTS_TABLE', 'SOURCE_VIEW', 'exists', 'build', 'texts', 'reindex', 'INSERT_DOCUMENT',
           'DELETE_DOCUMENT', 'match_expression', 'matching_keys', 'COLUMN_OF', 'RANK_SQL',
           'SNIPPET_SQL']
