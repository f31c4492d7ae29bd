"""A hand-built mirror for the reports of contract §17: boards, sprints, issues and their change
history chosen so that every reconstruction rule decides something visible.

Everything goes in through hublib's ingest (a claimed refresh, ``ingest_state``, ``ingest_history``,
``ingest_boards``), as the agent would send it. Times are UTC unless an offset is written.

Project AWPCA (scrum board 4216, columns Открыта | В работе, На проверке | Готово, Снято),
sprints 101 (closed 2026-11-02 06:00 → 2026-11-13 16:00), 102 (active since 2026-11-16 06:00),
103 (future), 104 (active, no start date); the clock stands at 2026-11-25 12:00.
Sprint 102 holds:

===========  ================================================================  =============
key          history                                                           in the report
===========  ================================================================  =============
AURORA-1     no sprint change, issue_sprint [102]; Открыта → В работе (11-17),   committed,
             → Готово (11-20); 3 points                                        completed
AURORA-2     sprint change by ``field_ids.sprint`` (field name «Спринт»), 11-10: committed,
             '' → '102'; never moves; 5 points                                  not completed
AURORA-3     sprint change by the name ``sprint`` (another field id) 11-18:       added,
             '' → '102'; → Готово (11-24); no points                            completed
AURORA-4     '101' → '101, 102' at 101's close (11-13 16:00), '101, 102' →       committed,
             '101' on 11-19; 2 points                                           removed
AURORA-5     issue_sprint [102]; В работе → Готово (11-18), → В работе (11-21):  committed,
             done then reopened; 8 points                                       not completed
AURORA-6     '' → '102' (11-17), '102' → '' (11-18), '' → '102,102' (11-19);     added once,
             1 point                                                            not completed
AURORA-7     created 11-20 straight into the sprint (no change), issue_sprint   added,
             [102]; 2 points                                                    not completed
AURORA-8     label ORION, issue_sprint [102], status Готово, no change; 1 point  committed,
                                                                                completed
===========  ================================================================  =============

AURORA-9 is in the future sprint 103 only; AURORA-4 was in sprint 101 from its start.

Project ORION (kanban board 4217, same columns) holds the flow and cycle-time issues F-…
(``FLOW-1`` … ``FLOW-4``, label ORION); VEGA has no board (``closed_statuses`` decide).
"""
from __future__ import annotations

from hublib import history, mirror, projects, queue, settings

SCRUM, KANBAN = 4216, 4217
COLUMNS = [{'name': 'Открыта', 'statuses': ['Открыта']},
           {'name': 'В работе', 'statuses': ['В работе', 'На проверке']},
           {'name': 'Готово', 'statuses': ['Готово', 'Снято']}]
SPRINT_FIELD_ID = 'customfield_10020'
NOW = '2026-11-25T12:00:00+00:00'
SPRINTS = [
    {'id': 101, 'name': 'Спринт 1', 'state': 'closed', 'start_date': '2026-11-02T09:00:00.000+0300',
     'end_date': '2026-11-13T18:00:00.000+0300', 'complete_date': '2026-11-13T19:00:00.000+0300',
     'goal': 'Каркас'},
    {'id': 102, 'name': 'Спринт 2', 'state': 'active', 'start_date': '2026-11-16T09:00:00.000+0300',
     'end_date': '2026-11-27T18:00:00.000+0300', 'complete_date': None, 'goal': 'Отчёты'},
    {'id': 103, 'name': 'Спринт 3', 'state': 'future', 'start_date': None, 'end_date': None,
     'complete_date': None, 'goal': None},
    {'id': 104, 'name': 'Без даты', 'state': 'active', 'start_date': None, 'end_date': None,
     'complete_date': None, 'goal': None},
]


def issue(key: str, status: str, *, labels=('AWPCA',), created='2026-11-01T10:00:00Z',
          sprints=(), points=None) -> dict:
    return {'key': key, 'summary': f'Задача {key}', 'status': status, 'labels': list(labels),
            'created': created, 'updated': NOW, 'sprint_ids': list(sprints),
            'story_points': points, 'links': [], 'comments': [], 'attachments': []}


_SEQUENCE = iter(range(1, 10**6))


def change(key: str, at: str, field_id: str | None, field_name: str | None, before, after, *,
           values: bool = False) -> dict:
    """A history item; sprint changes carry ids in the values (``values=True``), statuses their
    names in the strings (and ids that mean nothing to the reports in the values)."""
    return {'history_id': str(next(_SEQUENCE)), 'seq': 0, 'key': key, 'created': at,
            'author': 'ivanov', 'field_id': field_id, 'field_name': field_name,
            'from_value': before if values else '1', 'to_value': after if values else '3',
            'from_string': before, 'to_string': after}


def status(key: str, at: str, before: str | None, after: str | None) -> dict:
    return change(key, at, 'status', 'status', before, after)


def sprint(key: str, at: str, before: str | None, after: str | None, *,
           field_id: str | None = SPRINT_FIELD_ID, field_name: str = 'Спринт') -> dict:
    return change(key, at, field_id, field_name, before, after, values=True)


def sprint_issues() -> tuple[list[dict], list[dict]]:
    issues = [
        issue('AURORA-1', 'Готово', sprints=[102], points=3),
        issue('AURORA-2', 'Открыта', sprints=[102], points=5),
        issue('AURORA-3', 'Готово', sprints=[102]),
        issue('AURORA-4', 'В работе', sprints=[101], points=2),
        issue('AURORA-5', 'В работе', sprints=[102], points=8),
        issue('AURORA-6', 'Открыта', sprints=[102], points=1),
        issue('AURORA-7', 'Открыта', sprints=[102], points=2, created='2026-11-20T10:00:00Z'),
        issue('AURORA-8', 'Готово', labels=['ORION'], sprints=[102], points=1),
        issue('AURORA-9', 'Открыта', sprints=[103], points=13),
    ]
    changes = [
        status('AURORA-1', '2026-11-17T10:00:00Z', 'Открыта', 'В работе'),
        status('AURORA-1', '2026-11-20T10:00:00Z', 'В работе', 'Готово'),
        sprint('AURORA-2', '2026-11-10T10:00:00Z', '', '102'),
        sprint('AURORA-3', '2026-11-18T12:00:00Z', None, '102', field_id='customfield_99999',
               field_name='sprint'),
        status('AURORA-3', '2026-11-24T10:00:00Z', 'Открыта', 'Готово'),
        sprint('AURORA-4', '2026-11-01T10:00:00Z', '', '101'),
        sprint('AURORA-4', '2026-11-13T16:00:00Z', '101', '101, 102'),
        sprint('AURORA-4', '2026-11-19T08:00:00Z', '101, 102', '101'),
        status('AURORA-5', '2026-11-18T10:00:00Z', 'В работе', 'Готово'),
        status('AURORA-5', '2026-11-21T10:00:00Z', 'Готово', 'В работе'),
        sprint('AURORA-6', '2026-11-17T10:00:00Z', '', '102'),
        sprint('AURORA-6', '2026-11-18T10:00:00Z', '102', ''),
        sprint('AURORA-6', '2026-11-19T10:00:00Z', None, '102,102'),
        # not sprint changes: another custom field named like nothing the rules know
        change('AURORA-2', '2026-11-18T10:00:00Z', 'customfield_10021', 'Sprint goal', '', '103',
               values=True),
    ]
    return issues, changes


def flow_issues() -> tuple[list[dict], list[dict]]:
    """ORION's own issues for the flow and cycle time; VEGA's one issue has no board."""
    issues = [
        # Открыта → В работе (11-12 10:00) → «Заблокирована», a status in no column (11-13 10:00)
        issue('FLOW-1', 'Заблокирована', labels=['ORION'], created='2026-11-10T10:00:00Z'),
        # no created (always exists), no change: its current status all along
        issue('FLOW-2', 'Готово', labels=['ORION'], created=None),
        # created 11-12 12:00, done 11-12 21:30 UTC = 11-13 00:30 in Moscow
        issue('FLOW-3', 'Готово', labels=['ORION'], created='2026-11-12T12:00:00Z'),
        # created in progress (never in the first column), done 11-20, reopened and done again
        issue('FLOW-4', 'Снято', labels=['ORION'], created='2026-11-05T00:00:00Z'),
        issue('VEGA-1', 'Готово', labels=['VEGA'], created='2026-11-01T00:00:00Z'),
    ]
    changes = [
        status('FLOW-1', '2026-11-12T10:00:00Z', 'Открыта', 'В работе'),
        status('FLOW-1', '2026-11-13T10:00:00Z', 'В работе', 'Заблокирована'),
        status('FLOW-3', '2026-11-12T21:30:00Z', 'Открыта', 'Готово'),
        status('FLOW-4', '2026-11-10T00:00:00Z', 'В работе', 'Готово'),
        status('FLOW-4', '2026-11-11T00:00:00Z', 'Готово', 'На проверке'),
        status('FLOW-4', '2026-11-14T12:00:00Z', 'На проверке', 'Готово'),
        status('FLOW-4', '2026-11-15T00:00:00Z', 'Готово', 'Снято'),
        status('VEGA-1', '2026-11-03T00:00:00Z', 'Открыта', 'Готово'),
    ]
    return issues, changes


def build(hub) -> None:
    """Fill ``hub`` (whose clock the caller set to :data:`NOW`) with the mirror described above."""
    settings.update_settings(hub, {'project_key': 'AURORA',
                                   'field_ids': {'sprint': SPRINT_FIELD_ID}})
    projects.create_project(hub, 'AWPCA', 'АРМ КА', SCRUM)
    projects.create_project(hub, 'ORION', 'Орион', KANBAN)
    projects.create_project(hub, 'VEGA', 'Вега')
    queue.create_batch(hub, title='Загрузка', author='tests',
                       commands=[{'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}}])
    command = queue.claim_command(hub, agent='jira', agent_version='tests', settings_version=None,
                                  last_jira_call_at=None)['command']
    issues, changes = sprint_issues()
    more_issues, more_changes = flow_issues()
    mirror.ingest_state(hub, 'jira', command['id'], issues + more_issues)
    history.ingest_history(hub, 'jira', command['id'], changes + more_changes)
    mirror.ingest_boards(hub, 'jira', command['id'], [
        {'board_id': SCRUM, 'type': 'scrum', 'columns': COLUMNS, 'kanban_backlog': None,
         'sprints': SPRINTS},
        {'board_id': KANBAN, 'type': 'kanban', 'columns': COLUMNS, 'kanban_backlog': 0,
         'sprints': []}])
    queue.report_command(hub, command['id'], agent='jira', status='done', result={'issues': 14},
                         error=None, jira_calls=3, rate_limited=0)
