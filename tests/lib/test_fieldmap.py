"""Logical field names of change-history rows (contract §4; spec «Журнал изменений задач»)."""
from __future__ import annotations

import pytest

from hublib.fieldmap import STANDARD_FIELDS, logical_field

FIELD_IDS = {'planned_start': 'customfield_10200', 'planned_end': 'customfield_10201',
             'epic_link': 'customfield_10008', 'story_points': 'customfield_10016',
             'sprint': 'customfield_10010', 'rank': 'customfield_10019'}


@pytest.mark.parametrize('field_id, field_name, field_ids, expected', [
    # 1. standard names by field_id …
    ('status', 'Status', FIELD_IDS, 'status'),
    ('description', 'Описание', FIELD_IDS, 'description'),
    ('summary', 'Тема', FIELD_IDS, 'summary'),
    ('assignee', 'Исполнитель', FIELD_IDS, 'assignee'),
    ('priority', 'Приоритет', FIELD_IDS, 'priority'),
    ('duedate', 'Срок', FIELD_IDS, 'duedate'),
    ('labels', 'Метки', FIELD_IDS, 'labels'),
    ('resolution', 'Решение', FIELD_IDS, 'resolution'),
    # … or by field_name when field_id is null or empty (spec scenario «Повтор записи журнала»)
    (None, 'status', FIELD_IDS, 'status'),
    ('', 'labels', FIELD_IDS, 'labels'),
    (None, 'resolution', None, 'resolution'),
    # a field_id that is not standard wins over a standard-looking field_name
    ('customfield_1', 'status', FIELD_IDS, 'status'),
    # 2. configured planned dates (spec scenario «Плановая дата по id поля»)
    ('customfield_10201', 'Плановое окончание', FIELD_IDS, 'planned_end'),
    ('customfield_10200', 'Плановое начало', FIELD_IDS, 'planned_start'),
    # 3. epic link
    ('customfield_10008', 'Epic Link', FIELD_IDS, 'epic_link'),
    # 4. otherwise field_name as is (spec scenario «Неизвестное поле»)
    (None, 'Fix Version', FIELD_IDS, 'Fix Version'),
    ('customfield_10016', 'Story Points', FIELD_IDS, 'Story Points'),
    ('customfield_10010', 'Sprint', FIELD_IDS, 'Sprint'),
    ('customfield_99999', 'Что-то', FIELD_IDS, 'Что-то'),
    ('customfield_99999', None, FIELD_IDS, None),
    (None, None, FIELD_IDS, None),
    # settings ids that are null or absent never match
    ('customfield_10201', 'Плановое окончание', {'planned_end': None}, 'Плановое окончание'),
    ('customfield_10201', 'Плановое окончание', {}, 'Плановое окончание'),
    ('customfield_10201', 'Плановое окончание', None, 'Плановое окончание'),
    (None, 'Плановое окончание', {'planned_end': None}, 'Плановое окончание'),
    ('', 'Epic Link', {'epic_link': ''}, 'Epic Link'),
    # standard names are case-sensitive Jira ids
    ('Status', 'Status', FIELD_IDS, 'Status'),
    (None, 'Status', FIELD_IDS, 'Status'),
])
def test_logical_field(field_id, field_name, field_ids, expected):
    assert logical_field(field_id, field_name, field_ids) == expected


def test_standard_fields_are_the_contract_list():
    assert STANDARD_FIELDS == {'status', 'description', 'summary', 'assignee', 'priority',
                               'duedate', 'labels', 'resolution'}
