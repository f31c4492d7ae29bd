"""A small hand-built mirror for the JQL tests (issue 20): issues with every field the language
reads, a history of status, assignee and priority changes, sprints of three states, a note."""
from __future__ import annotations

from hublib import history, mirror, notes, projects, settings

PRIORITIES = {'highest': 'Наивысший', 'high': 'Высокий', 'medium': 'Средний', 'low': 'Низкий'}

ISSUES = [
    {'key': 'AURORA-1', 'status': 'Открыта', 'priority': 'Высокий', 'issue_type': 'Задача',
     'assignee': 'ivanov', 'reporter': 'petrov', 'labels': ['AWPCA', 'срочно'],
     'created': '2026-11-01T00:30:00.000+0300', 'updated': '2026-11-30T09:00:00.000+0000',
     'duedate': '2026-12-01', 'planned_start': '2026-11-20', 'planned_end': '2026-12-10',
     'epic_key': 'AURORA-5', 'story_points': 3, 'summary': 'Сверка остатков',
     'description': 'Склад: сверка с бухгалтерией', 'rank': '0|i0002:',
     'comments': [{'id': '1', 'body': 'Проверено ёжиком'}], 'sprint_ids': [10],
     'links': [{'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-2'}]},
    {'key': 'AURORA-2', 'status': 'В работе', 'priority': 'Средний', 'issue_type': 'Ошибка',
     'assignee': 'Petrov', 'reporter': 'ivanov', 'labels': ['AWPCA'],
     'created': '2026-11-27T10:00:00.000+0300', 'updated': '2026-11-29T12:00:00Z',
     'story_points': 5, 'summary': 'Отчёт по складу', 'description': 'Точная фраза тут',
     'rank': '0|i0001:', 'sprint_ids': [10, 11], 'planned_start': '2026-11-28'},
    {'key': 'AURORA-3', 'status': 'Готово', 'priority': 'Низкий', 'issue_type': 'задача',
     'assignee': None, 'reporter': 'sidorova', 'labels': [],
     'created': '2026-10-01T10:00:00.000+0300', 'updated': '2026-10-06T10:00:00.000+0300',
     'duedate': '2026-11-30', 'story_points': 1, 'epic_key': 'AURORA-5',
     'summary': 'Выгрузка, "кавычки"\nи перевод строки', 'sprint_ids': [9], 'rank': '0|i0003:',
     'links': [{'type': 'Relates', 'direction': 'inward', 'key': 'AURORA-10'}]},
    {'key': 'AURORA-5', 'status': 'В работе', 'priority': None, 'issue_type': 'Эпик',
     'assignee': 'ivanov', 'reporter': 'petrov', 'labels': ['ORION'],
     'created': '2026-11-01T12:00:00.000+0300', 'updated': '2026-11-02T12:00:00.000+0300',
     'summary': 'Эпик склада', 'description': 'фраза точная тут'},
    {'key': 'AURORA-10', 'status': 'Снято', 'priority': 'Высокий', 'issue_type': 'Задача',
     'assignee': 'sidorova', 'reporter': 'sidorova', 'labels': ['Срочно'],
     'created': '2025-12-31T23:00:00.000+0000', 'updated': '2026-11-29T10:00:00.000+0000',
     'summary': 'Ещё задача', 'story_points': 8, 'planned_end': '2026-01-15'},
    {'key': 'AURORA-11', 'status': None, 'priority': 'Неизвестный', 'issue_type': 'Задача',
     'assignee': '', 'reporter': None, 'labels': ['x"y'], 'created': None, 'updated': None,
     'summary': None},
    {'key': 'ORBIT-1', 'status': 'Открыта', 'priority': 'Средний', 'issue_type': 'Задача',
     'assignee': 'orlov', 'reporter': 'orlov', 'labels': [],
     'created': '2026-01-01T00:00:00Z', 'updated': '2026-01-02T00:00:00Z',
     'summary': 'Соседняя задача'},
]
ALL = ['AURORA-1', 'AURORA-2', 'AURORA-3', 'AURORA-5', 'AURORA-10', 'AURORA-11', 'ORBIT-1']


def change(history_id: str, key: str, at: str, author: str, field: str, before, after) -> dict:
    return {'history_id': history_id, 'seq': 0, 'key': key, 'created': at, 'author': author,
            'field_id': field, 'field_name': field, 'from_string': before, 'to_string': after,
            'from_value': before, 'to_value': after}


CHANGES = [
    change('1', 'AURORA-1', '2026-11-20T10:00:00Z', 'petrov', 'status', 'Открыта', 'В работе'),
    change('2', 'AURORA-1', '2026-11-25T10:00:00Z', 'ivanov', 'status', 'В работе', 'Открыта'),
    change('3', 'AURORA-2', '2026-11-28T10:00:00Z', 'Petrov', 'status', 'Открыта', 'В работе'),
    change('4', 'AURORA-2', '2026-11-28T11:00:00Z', 'ivanov', 'assignee', 'ivanov', 'Petrov'),
    change('5', 'AURORA-3', '2026-10-05T10:00:00Z', 'sidorova', 'status', 'Открыта', 'Готово'),
    change('6', 'AURORA-3', '2026-10-03T10:00:00Z', 'sidorova', 'priority', 'Средний', 'Низкий'),
    change('7', 'AURORA-10', '2026-11-29T10:00:00Z', 'ivanov', 'status', 'В работе', 'Снято'),
]




def build_mirror(hub, command_id: int):
    """Fill ``hub`` with :data:`ISSUES` (a claimed refresh ``command_id``), :data:`CHANGES`, the
    sprints 9 (closed), 10 (active), 11 (future), projects AWPCA and ORION, a note on AURORA-2."""
    settings.update_settings(hub, {'project_key': 'AURORA', 'priority_map': PRIORITIES})
    projects.create_project(hub, 'AWPCA', 'АРМ КА')
    projects.create_project(hub, 'ORION', 'Орион')
    mirror.ingest_boards(hub, 'jira', None, [{'board_id': 1, 'type': 'scrum', 'sprints': [
        {'id': 9, 'name': 'Спринт 9', 'state': 'closed'},
        {'id': 10, 'name': 'Спринт 10', 'state': 'active'},
        {'id': 11, 'name': 'Спринт 11', 'state': 'future'}]}])
    mirror.ingest_state(hub, 'jira', command_id, ISSUES)
    history.ingest_history(hub, 'jira', None, CHANGES)
    notes.put_note(hub, 'AURORA-2', {'work_kind': 'разработка', 'updated_by': 'ivanov'})
    return hub
