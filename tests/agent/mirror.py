"""What a mirror filled from the fake Jira holds, and what it must hold: both as plain rows."""
from __future__ import annotations

import json

from hubweb.demo.fake_jira import FakeJira
from hubweb.demo.jira_rest import person_in_mirror

ISSUE_COLUMNS = ('key', 'id', 'issue_type', 'summary', 'description', 'status', 'priority',
                 'assignee', 'reporter', 'duedate', 'planned_start', 'planned_end', 'epic_key',
                 'labels', 'sprint', 'rank', 'story_points', 'jira_updated', 'created', 'neighbor')
HISTORY_COLUMNS = ('history_id', 'seq', 'key', 'created', 'author', 'field_id', 'field_name',
                   'from_value', 'from_string', 'to_value', 'to_string')


def rows(hub, sql: str, params=()) -> list[tuple]:
    return hub.db.execute_sql(sql, params).fetchall()


def stored(hub) -> dict:
    """The mirror's tables as sets of rows."""
    issues = {row[0]: row for row in rows(hub, f'SELECT {", ".join(ISSUE_COLUMNS)} FROM issue')}
    return {
        'issues': issues,
        'links': set(rows(hub, 'SELECT source_key, target_key, link_type FROM issue_link')),
        'comments': set(rows(hub, 'SELECT key, comment_id, author, created, updated, body '
                                  'FROM issue_comment')),
        'attachments': set(rows(hub, 'SELECT attachment_id, key, filename, size, mime_type, author, '
                                     'created FROM issue_attachment')),
        'sprints_of_issues': set(rows(hub, 'SELECT key, sprint_id FROM issue_sprint')),
        'history': set(rows(hub, f'SELECT {", ".join(HISTORY_COLUMNS)} FROM issue_change')),
        'boards': set(rows(hub, 'SELECT board_id, type, columns, kanban_backlog FROM jira_board')),
        'sprints': set(rows(hub, 'SELECT sprint_id, board_id, name, state, start_date, end_date, '
                                 'complete_date, goal FROM jira_sprint')),
    }


def expected(jira: FakeJira, own: list[str], neighbours: list[str], cloud: bool) -> dict:
    """The rows a refresh of ``own`` (with ``neighbours`` read through links) must leave."""
    def person(login):
        return person_in_mirror(login, cloud)

    issues, links, comments, attachments, sprints_of_issues, history = {}, set(), set(), set(), \
        set(), set()
    for key in own + neighbours:
        issue = jira.issue(key)
        points = issue['story_points']
        issues[key] = (key, issue['id'], issue['issue_type'], issue['summary'], issue['description'],
                       issue['status'], issue['priority'], person(issue['assignee']),
                       person(issue['reporter']), issue['duedate'], issue['planned_start'],
                       issue['planned_end'], issue['epic_key'],
                       json.dumps(issue['labels'], ensure_ascii=False), issue['sprint'],
                       issue['rank'], float(points) if points is not None else None,
                       issue['updated'], issue['created'], int(key in neighbours))
        for link in issue['links']:
            links.add((key, link['key'], link['type']) if link['direction'] == 'outward'
                      else (link['key'], key, link['type']))
        comments |= {(key, item['id'], person(item['author']), item['created'], item['updated'],
                      item['body']) for item in issue['comments']}
        attachments |= {(item['id'], key, item['filename'], item['size'], item['mime_type'],
                         person(item['author']), item['created']) for item in issue['attachments']}
        sprints_of_issues |= {(key, sprint_id) for sprint_id in issue['sprint_ids']}
        history |= {(item['history_id'], item['seq'], key, item['created'], person(item['author']),
                     item['field_id'] if cloud else None, item['field_name'], item['from_value'],
                     item['from_string'], item['to_value'], item['to_string'])
                    for item in jira.history(key)}
    boards, sprints = set(), set()
    for board in jira.boards():
        boards.add((board['board_id'], board['type'], json.dumps(board['columns'], ensure_ascii=False),
                    board['kanban_backlog']))
        sprints |= {(sprint['id'], board['board_id'], sprint['name'], sprint['state'],
                     sprint['start_date'], sprint['end_date'], sprint['complete_date'],
                     sprint['goal']) for sprint in board['sprints']}
    return {'issues': issues, 'links': links, 'comments': comments, 'attachments': attachments,
            'sprints_of_issues': sprints_of_issues, 'history': history, 'boards': boards,
            'sprints': sprints}


def neighbours_of(jira: FakeJira, own: list[str]) -> list[str]:
    """Keys linked from ``own`` that ``own`` does not hold (the refresh's neighbours)."""
    inside = set(own)
    return list(dict.fromkeys(link['key'] for key in own for link in jira.issue(key)['links']
                              if link['key'] not in inside))
