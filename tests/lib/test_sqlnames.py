"""SQL built once (``models.SqlNames`` text, ``db.Prepared`` peewee queries): names from the
models, and every statement a module builds at import is valid against a hub's real schema."""
from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import hublib
from hublib.db import Prepared
from hublib.models import Command, IssueSprint, SqlNames, sql_list


def test_names_come_from_the_model():
    command = SqlNames(Command)
    assert (str(command), command.status, command.batch_id) == ('command', 'status', 'batch_id')
    assert command.columns()[:3] == ('id', 'batch_id', 'seq')
    with pytest.raises(AttributeError, match='Command has no field'):
        command.stauts  # noqa: B018 — a typo fails where the statement is built


def test_insert_names_its_columns_and_placeholders():
    sprint = SqlNames(IssueSprint)
    assert sprint.insert('key', 'sprint_id') == \
        'INSERT INTO issue_sprint (key, sprint_id) VALUES (?, ?)'
    assert sprint.insert('key', 'sprint_id', conflict='IGNORE') == \
        'INSERT OR IGNORE INTO issue_sprint (key, sprint_id) VALUES (?, ?)'
    with pytest.raises(AttributeError):
        sprint.insert('key', 'sprint')


def test_sql_list_quotes_constant_names():
    assert sql_list(('queued', 'claimed')) == "'queued', 'claimed'"


STATEMENT = re.compile(r'\s*(WITH|SELECT|INSERT|UPDATE|DELETE)\b', re.IGNORECASE)


def module_statements() -> list[tuple[str, str]]:
    """(module.NAME, SQL) of every statement a hublib module keeps as a constant (text, or the
    SQL of a ``Prepared`` query)."""
    found = []
    for info in pkgutil.walk_packages(hublib.__path__, 'hublib.'):
        if info.name.startswith('hublib.migrations'):
            continue  # frozen DDL of old schemas
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, Prepared):
                value = value.sql
            values = value.values() if isinstance(value, dict) else \
                value if isinstance(value, tuple) else [value]
            for index, text in enumerate(values):
                if isinstance(text, str) and STATEMENT.match(text) and ' ' in text.strip():
                    found.append((f'{info.name}.{name}[{index}]', text))
    return found


def test_the_statements_are_found():
    names = {name.rsplit('[', 1)[0] for name, _ in module_statements()}
    assert {'hublib.mirror.UPSERT_ISSUE', 'hublib.claims._REPORT', 'hublib.reads._CARD_LINKS',
            'hublib.reads._CARD_SPRINTS',
            'hublib.slices._NEIGHBOURHOOD', 'hublib.history.INSERT_CHANGE'} <= names


def test_every_statement_built_at_import_is_valid_for_the_schema(hub):
    bad = []
    for name, text in module_statements():
        named = set(re.findall(r'(?<![:\w]):(\w+)', text))
        values = dict.fromkeys(named) if named else (None,) * text.count('?')
        try:
            hub.db.execute_sql('EXPLAIN ' + text, values)
        except Exception as error:  # noqa: BLE001 — collected and shown all at once
            bad.append(f'{name}: {error}')
    assert bad == []
