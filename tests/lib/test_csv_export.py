"""The CSV export (contract §20).

- Cells (OWASP «CSV Injection»): a text cell beginning with ``= + - @``, a tab or a carriage
  return, or the fullwidth ``＝ ＋ － ＠``, gets a leading ``'`` so that a spreadsheet shows it as
  text instead of evaluating it; every other cell is written as stored.
- An export that fails after its first chunk ends with the line ``# ошибка: …`` and the error goes
  on up (the server then breaks the response off: ``tests/test_serve_csv.py``)."""
from __future__ import annotations

import csv
import io

import pytest

from hublib import mirror, reads

FORMULAS = ['=HYPERLINK("http://x","y")', '+1+1', '-2+3', '@SUM(1,2)', '\tTAB', '\rCR',
            '＝1+1', '＋1', '－1', '＠SUM(1)']
HARMLESS = ['Сверка остатков', ' =1+1', 'a=b', '1-2', "'уже с кавычкой", 'email@x', '',
            '"=1"']
# The issue's text fields; the CSV's ``sprint`` column is the names of its sprints (below).
TEXT_COLUMNS = ('id', 'issue_type', 'summary', 'description', 'status', 'priority', 'assignee',
                'reporter', 'duedate', 'planned_start', 'planned_end', 'epic_key', 'rank')


def export(hub, **query) -> list[dict]:
    text = ''.join(reads.issues_csv(hub, **query))
    assert text.startswith('\ufeff')
    rows = list(csv.reader(io.StringIO(text[1:], newline='')))
    return [dict(zip(rows[0], row)) for row in rows[1:]]


def issue(key: str, value: str, **extra) -> dict:
    return {'key': key, **{name: value for name in TEXT_COLUMNS}, 'labels': [value, 'AWPCA'],
            'updated': value, 'created': value, **extra}


@pytest.fixture
def exported(hub, claimed_refresh):
    values = FORMULAS + HARMLESS
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [
        issue(f'AURORA-{number}', value) for number, value in enumerate(values, start=1)])
    rows = export(hub, fields=','.join(reads.CSV_FIELDS), jql='ORDER BY key')
    return {row['key']: row for row in rows}, values


def test_a_text_cell_that_begins_like_a_formula_gets_a_leading_quote(exported):
    rows, values = exported
    for number, value in enumerate(FORMULAS, start=1):
        row = rows[f'AURORA-{number}']
        for name in (*TEXT_COLUMNS, 'created', 'updated'):
            assert row[name] == "'" + value, (name, value)
        assert row['labels'] == f"'{value};AWPCA", value


def test_every_other_cell_is_written_as_stored(exported):
    rows, values = exported
    for number, value in enumerate(HARMLESS, start=len(FORMULAS) + 1):
        row = rows[f'AURORA-{number}']
        for name in (*TEXT_COLUMNS, 'created', 'updated'):
            assert row[name] == value, (name, value)
        assert row['labels'] == (f'{value};AWPCA' if value else ';AWPCA')
        assert row['neighbor'] == 'false'


def test_sprint_names_are_cells_like_any_text(hub, claimed_refresh):
    command_id = claimed_refresh(hub)
    mirror.ingest_boards(hub, 'jira', command_id, [{'board_id': 1, 'sprints': [
        {'id': 101, 'name': '-Спринт 1'}, {'id': 102, 'name': 'Спринт 2'}]}])
    mirror.ingest_state(hub, 'jira', command_id, [{'key': 'AURORA-1', 'sprint_ids': [101, 102]},
                                                  {'key': 'AURORA-2', 'sprint_ids': [102, 101]}])
    rows = export(hub, fields='key,sprint', jql='ORDER BY key')
    assert [row['sprint'] for row in rows] == ["'-Спринт 1;Спринт 2", "'-Спринт 1;Спринт 2"]


def test_numbers_and_empty_cells_are_not_quoted(hub, claimed_refresh):
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [
        {'key': 'AURORA-1', 'story_points': -2}, {'key': 'AURORA-2', 'story_points': -0.5},
        {'key': 'AURORA-3'}])
    rows = export(hub, fields='key,story_points,summary,labels,sprint,created', jql='ORDER BY key')
    assert [(row['story_points'], row['summary'], row['labels'], row['sprint'], row['created'])
            for row in rows] == [('-2', '', '', '', ''), ('-0.5', '', '', '', ''),
                                 ('', '', '', '', '')]


def test_the_check_is_one_frozenset_of_first_characters():
    assert reads.FORMULA_START == frozenset('=+-@\t\r＝＋－＠')
    assert [reads.csv_text(value) for value in ('=1', 'x=1', None, '')] == ["'=1", 'x=1', None, '']


# --- an export that fails after its first chunk ----------------------------------------------------

def test_a_failure_after_the_header_ends_the_file_with_an_error_line_and_goes_on_up(
        hub, claimed_refresh):
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [{'key': 'AURORA-1', 'sprint_ids': [1]}])
    chunks = reads.issues_csv(hub, fields='key,sprint')
    assert next(chunks) == '\ufeffkey,sprint\r\n'
    hub.db.execute_sql('ALTER TABLE jira_sprint RENAME TO jira_sprint_gone')  # the read fails
    line = next(chunks)
    assert line == ('# ошибка: внутренняя ошибка хаба, подробности в журнале сервера; выгрузка '
                    'прервана, файл неполный\r\n')
    assert 'jira_sprint' not in line                       # no SQL in the file
    with pytest.raises(Exception, match='jira_sprint'):
        next(chunks)


def test_a_failure_between_pages_keeps_the_rows_written_and_ends_with_the_error_line(
        hub, claimed_refresh):
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [
        {'key': f'AURORA-{number}', 'summary': 'Задача'} for number in range(1, reads.CSV_PAGE + 2)])
    chunks = reads.issues_csv(hub, fields='key,summary')
    header, first_page = next(chunks), next(chunks)
    assert first_page.count('\r\n') == reads.CSV_PAGE
    hub.db.execute_sql('ALTER TABLE issue RENAME TO issue_gone')
    assert next(chunks).startswith('# ошибка: ')
    with pytest.raises(Exception):
        next(chunks)
    # the rows that did arrive are whole lines; the error line is the last one, and no line of
    # data starts with '#' (a key or a quoted cell cannot)
    assert (header + first_page).endswith('\r\n')


def test_an_export_that_completes_has_no_error_line(hub, claimed_refresh):
    mirror.ingest_state(hub, 'jira', claimed_refresh(hub), [{'key': 'AURORA-1'}])
    assert '# ошибка' not in ''.join(reads.issues_csv(hub, fields='key'))
