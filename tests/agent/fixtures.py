"""Recorded Jira answers (``fixtures/*.json``, in the shapes of Atlassian's REST documentation for
Cloud and Data Center) and the agent settings they were recorded under."""
from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / 'fixtures'
SETTINGS = {
    'project_key': 'AURORA',
    'field_ids': {'planned_start': 'customfield_10015', 'planned_end': 'customfield_10016',
                  'epic_link': 'customfield_10014', 'story_points': 'customfield_10026',
                  'sprint': 'customfield_10020', 'rank': 'customfield_10019'},
    'issue_types': {'task': {'name': 'Задача', 'id': '10002'}, 'epic': {'name': 'Эпик', 'id': '10000'}},
    'priority_map': {'high': 'Высокий', 'medium': 'Средний', 'low': 'Низкий'},
    'link_types': {'blocks': 'Blocks', 'relates': 'Relates'},
    'pacing': {'interval_ms': 0, 'pause_on_rate_limit_seconds': 60},
    'base_jql': 'project = AURORA AND labels in ("AWPCA")',
    'projects': [{'label': 'AWPCA', 'name': 'Аврора', 'board_id': 4216, 'board_type': None}],
}


def recorded(name: str):
    """The recorded answer ``fixtures/<name>.json``."""
    return json.loads((FIXTURES / f'{name}.json').read_text(encoding='utf-8'))
