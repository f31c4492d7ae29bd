"""The demo's fake Jira on the wire: the generated Jira of :mod:`.fake_jira` served as Jira's own
REST API v2 and Agile API, in Cloud's or Data Center's dialect, for the real agent
(:mod:`hubweb.jira_agent`) to read and write.

Shapes follow Atlassian's published REST documentation: Cloud answers ``/search/jql`` by
``nextPageToken`` (the old ``/search`` is gone: 410), cuts a search's ``changelog`` short and pages
``/issue/{key}/changelog``, names people by ``accountId`` and hides some e-mails, writes sprints as
objects and an epic as the ``parent``; Data Center answers ``/search`` by ``startAt``/``total``,
gives the whole changelog, names people by ``name``, writes sprints as
``com.atlassian.greenhopper.service.sprint.Sprint@…[…]`` texts and an epic in the Epic Link field,
and drops entity properties sent inside a create request (the agent sets them afterwards).
Errors are Jira's: ``{"errorMessages": […], "errors": {…}}``.

A plain WSGI callable (no framework): :func:`serve` runs it with waitress in a thread (the demo,
tests), ``scripts/fake_jira.py`` in a process of its own (the benchmark).
"""
from __future__ import annotations

import base64
import hashlib
import threading
import time as clock
import urllib.parse
from dataclasses import dataclass
from datetime import datetime, timezone

import orjson

from . import fake_jql
from .fake_jira import (AGENT_LOGIN, FIELD_IDS, KANBAN_BOARD, LINK_TYPES, PRIORITIES, PRIORITY_IDS,
                        SCRUM_BOARD, STATUS_IDS, STATUSES, TYPE_IDS, USERS, FakeJira, JiraError,
                        parse_jira_time)

CLOUD = 'Cloud'
SERVER = 'Server'
PROPERTY_PAGE = 100
SYSTEM_FIELDS = ('status', 'assignee', 'priority', 'summary', 'description', 'labels', 'duedate',
                 'resolution')
STATUS_CATEGORIES = {'Открыта': (2, 'new', 'К выполнению'), 'В работе': (4, 'indeterminate', 'В работе'),
                     'На проверке': (4, 'indeterminate', 'В работе'), 'Готово': (3, 'done', 'Готово'),
                     'Снято': (3, 'done', 'Готово')}
REASONS = {400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found',
           405: 'Method Not Allowed', 410: 'Gone', 429: 'Too Many Requests',
           503: 'Service Unavailable'}


def account_id(login: str) -> str:
    """A Cloud account id for ``login`` (stable, opaque)."""
    return '5b10' + hashlib.sha1(login.encode()).hexdigest()[:20]


def person_in_mirror(login: str | None, cloud: bool) -> str | None:
    """What the mirror holds for ``login`` read from this Jira: the login (Data Center); the
    e-mail, or the display name when the person hides it (Cloud)."""
    if login is None or not cloud:
        return login
    name, email = USERS.get(login, (login, None))
    return email or name


class Problem(Exception):
    """An error answer: status and Jira's error body."""

    def __init__(self, status: int, *messages: str, errors: dict | None = None,
                 headers: dict | None = None):
        super().__init__(status, messages)
        self.status = status
        self.body = {'errorMessages': list(messages), 'errors': errors or {}}
        self.headers = headers or {}


@dataclass
class Answer:
    status: int
    body: object = None
    headers: dict | None = None
    raw: bytes | None = None
    content_type: str = 'application/json;charset=UTF-8'


class JiraRest:
    """The WSGI app. ``deployment``: ``Cloud`` or ``Server`` (Data Center). Cloud takes Basic
    ``user``:``token``, Data Center ``Bearer token``; either way the caller is ``login``."""

    def __init__(self, jira: FakeJira, *, deployment: str = SERVER, token: str = 'demo-token',
                 user: str = 'sdlc-agent@aurora.example', login: str = AGENT_LOGIN,
                 base_url: str = 'http://127.0.0.1', field_ids: dict | None = None,
                 epic_type: str = 'Эпик', comment_limit: int = 20, changelog_limit: int = 40,
                 page_limit: int = 100, latency: float = 0.0, write_latency: float = 0.0):
        self.jira = jira
        self.deployment = deployment
        self.cloud = deployment == CLOUD
        self.login = login
        self.base_url = base_url.rstrip('/')
        self.field_ids = dict(FIELD_IDS if field_ids is None else field_ids)
        self.epic_type = epic_type
        self.comment_limit = comment_limit
        self.changelog_limit = changelog_limit
        self.page_limit = page_limit
        self.latency = latency
        self.write_latency = write_latency
        if self.cloud:
            self._auth = 'Basic ' + base64.b64encode(f'{user}:{token}'.encode()).decode()
        else:
            self._auth = f'Bearer {token}'
        self._accounts = {account_id(name): name for name in USERS}

    # --- WSGI ------------------------------------------------------------------------------------

    def __call__(self, environ, start_response):
        method = environ['REQUEST_METHOD']
        path = environ.get('PATH_INFO') or '/'
        params = dict(urllib.parse.parse_qsl(environ.get('QUERY_STRING') or '',
                                             keep_blank_values=True))
        length = int(environ.get('CONTENT_LENGTH') or 0)
        body = environ['wsgi.input'].read(length) if length else b''
        answer = self.respond(method, path, params, body, environ.get('HTTP_AUTHORIZATION'))
        raw = answer.raw if answer.raw is not None else (
            orjson.dumps(answer.body) if answer.body is not None else b'')
        headers = [('Content-Type', answer.content_type), ('Content-Length', str(len(raw)))]
        headers += list((answer.headers or {}).items())
        start_response(f'{answer.status} {REASONS.get(answer.status, "OK")}', headers)
        return [raw]

    def respond(self, method: str, path: str, params: dict, body: bytes,
                authorization: str | None) -> Answer:
        """One request, answered (the WSGI glue aside: tests call it through the wire only)."""
        if self.latency:
            clock.sleep(self.latency)
        if self.write_latency and method in ('POST', 'PUT'):
            clock.sleep(self.write_latency)
        try:
            if path != '/rest/api/2/serverInfo' and authorization != self._auth:
                raise Problem(401, 'Вы не авторизованы: неверные учётные данные.')
            payload = orjson.loads(body) if body else None
            return self.route(method, path, params, payload)
        except Problem as problem:
            return Answer(problem.status, problem.body, problem.headers)
        except JiraError as error:
            return Answer(error.status, {'errorMessages': [str(error)], 'errors': {}})
        except fake_jql.JqlError as error:
            return Answer(400, {'errorMessages': [str(error)], 'errors': {}})
        except orjson.JSONDecodeError:
            return Answer(400, {'errorMessages': ['Тело запроса — не JSON.'], 'errors': {}})

    # --- routes ----------------------------------------------------------------------------------

    def route(self, method: str, path: str, params: dict, body) -> Answer:
        parts = [urllib.parse.unquote(part) for part in path.strip('/').split('/')]
        if parts[:3] == ['rest', 'api', '2']:
            return self.api(method, parts[3:], params, body)
        if parts[:3] == ['rest', 'agile', '1.0'] and len(parts) >= 5 and parts[3] == 'board':
            return self.agile(method, parts[4:], params)
        if parts[:2] == ['secure', 'attachment'] and len(parts) >= 3 and method == 'GET':
            return Answer(200, raw=self.jira.attachment(parts[2]),
                          content_type='text/plain; charset=utf-8')
        raise Problem(404, 'Нет такого ресурса.')

    def api(self, method: str, parts: list[str], params: dict, body) -> Answer:
        head = parts[0] if parts else ''
        if method == 'GET' and parts == ['serverInfo']:
            return Answer(200, self.server_info())
        if method == 'GET' and parts == ['myself']:
            return Answer(200, self.user(self.login))
        if method == 'GET' and parts == ['search']:
            if self.cloud:
                raise Problem(410, 'The requested API has been removed. Please migrate to the '
                                   '/rest/api/3/search/jql API.')
            return Answer(200, self.search_server(params))
        if method == 'GET' and parts == ['search', 'jql']:
            if not self.cloud:
                raise Problem(404, 'Нет такого ресурса.')
            return Answer(200, self.search_cloud(params))
        if method == 'GET' and parts == ['status']:
            return Answer(200, [self.status(name) for name in STATUSES])
        if method == 'GET' and parts == ['user', 'search'] and self.cloud:
            return Answer(200, self.find_users(params.get('query') or ''))
        if head == 'issue':
            return self.issue_api(method, parts[1:], params, body)
        if head == 'comment' and len(parts) == 4 and parts[2] == 'properties':
            if self.jira.comment_owner(parts[1]) is None:
                raise Problem(404, f'Комментарий {parts[1]} не найден.')
            return self.property_api(method, f'comment/{parts[1]}', parts[3], body)
        if method == 'POST' and parts == ['issueLink']:
            return self.create_link(body or {})
        if method == 'GET' and head == 'attachment' and len(parts) == 2:
            return Answer(200, self.attachment(parts[1]))
        raise Problem(404, 'Нет такого ресурса.')

    def issue_api(self, method: str, parts: list[str], params: dict, body) -> Answer:
        if not parts:
            if method == 'POST':
                return self.create_issue(body or {})
            raise Problem(405, 'Метод не поддерживается.')
        key = parts[0].upper()
        if not self.jira.exists(key):
            raise Problem(404, 'Задача не существует или у вас нет разрешения на её просмотр.')
        rest = parts[1:]
        if not rest and method == 'GET':
            return Answer(200, self.render(key, _names(params.get('fields')),
                                           set(_names(params.get('expand')) or ()),
                                           _names(params.get('properties')) or ()))
        if not rest and method == 'PUT':
            self.edit_issue(key, (body or {}).get('fields') or {})
            return Answer(204)
        if rest == ['changelog'] and method == 'GET' and self.cloud:
            return Answer(200, self.changelog_page(key, params))
        if rest == ['comment'] and method == 'GET':
            return Answer(200, self.comment_page(key, params))
        if rest == ['comment'] and method == 'POST':
            return Answer(201, self.add_comment(key, body or {}))
        if rest == ['transitions'] and method == 'GET':
            return Answer(200, {'expand': 'transitions',
                                'transitions': [self.transition_of(name)
                                                for name in self.jira.transitions(key)]})
        if rest == ['transitions'] and method == 'POST':
            self.do_transition(key, body or {})
            return Answer(204)
        if len(rest) == 2 and rest[0] == 'properties':
            return self.property_api(method, f'issue/{key}', rest[1], body)
        raise Problem(404, 'Нет такого ресурса.')

    def property_api(self, method: str, entity: str, name: str, body) -> Answer:
        if method == 'GET':
            value = self.jira.property(entity, name)
            if value is None:
                raise Problem(404, f'Свойство с ключом {name} не найдено.')
            return Answer(200, {'key': name, 'value': value})
        if method == 'PUT':
            created = self.jira.property(entity, name) is None
            self.jira.set_property(entity, name, body)
            return Answer(201 if created else 200)
        raise Problem(405, 'Метод не поддерживается.')

    def agile(self, method: str, parts: list[str], params: dict) -> Answer:
        if method != 'GET' or not parts[0].isdigit():
            raise Problem(404, 'Нет такого ресурса.')
        board_id = int(parts[0])
        columns = self.jira.board_columns()
        if board_id not in columns:
            raise Problem(404, f'Доска {board_id} не найдена или у вас нет разрешения на её просмотр.')
        board_type = 'scrum' if board_id == SCRUM_BOARD else 'kanban'
        self_url = f'{self.base_url}/rest/agile/1.0/board/{board_id}'
        location = {'type': 'project', 'key': self.jira.project_key, 'id': '10000',
                    'name': self.jira.project_key}
        if parts[1:] == []:
            return Answer(200, {'id': board_id, 'self': self_url, 'name': f'Доска {board_id}',
                                'type': board_type, 'location': location})
        if parts[1:] == ['configuration']:
            return Answer(200, {
                'id': board_id, 'name': f'Доска {board_id}', 'type': board_type,
                'self': self_url + '/configuration', 'location': location,
                'filter': {'id': str(10000 + board_id), 'self': f'{self.base_url}/rest/api/2/filter'},
                'subQuery': {'query': 'resolution = EMPTY OR resolution changed after -2w'},
                'columnConfig': {'constraintType': 'issueCount', 'columns': [
                    {'name': column['name'], 'statuses': [
                        {'id': STATUS_IDS[name], 'self': f'{self.base_url}/rest/api/2/status/'
                                                         f'{STATUS_IDS[name]}'}
                        for name in column['statuses']]} for column in columns[board_id]]},
                'estimation': {'type': 'field', 'field': {
                    'fieldId': self.field_ids.get('story_points'), 'displayName': 'Story Points'}},
                'ranking': {'rankCustomFieldId': int(self.field_ids['rank'].split('_')[-1])
                            if self.field_ids.get('rank') else None}})
        if parts[1:] == ['sprint']:
            if board_id == KANBAN_BOARD:
                raise Problem(400, 'The board does not support sprints')
            sprints = [self.agile_sprint(sprint, board_id)
                       for sprint in self.jira.sprint_catalog().values()]
            start = int(params.get('startAt') or 0)
            size = min(int(params.get('maxResults') or 50), 50)
            page = sprints[start:start + size]
            return Answer(200, {'maxResults': size, 'startAt': start,
                                'isLast': start + len(page) >= len(sprints), 'values': page})
        raise Problem(404, 'Нет такого ресурса.')

    # --- the site --------------------------------------------------------------------------------

    def server_info(self) -> dict:
        now = _jira_now()
        if self.cloud:
            return {'baseUrl': self.base_url, 'version': '1001.0.0-SNAPSHOT',
                    'versionNumbers': [1001, 0, 0], 'deploymentType': CLOUD, 'buildNumber': 100282,
                    'buildDate': '2026-11-20T04:40:51.000+0000', 'serverTime': now,
                    'scmInfo': '9f0b1a3c', 'serverTitle': 'Jira'}
        return {'baseUrl': self.base_url, 'version': '9.12.15', 'versionNumbers': [9, 12, 15],
                'deploymentType': SERVER, 'buildNumber': 9120015,
                'buildDate': '2026-10-01T00:00:00.000+0300', 'serverTime': now,
                'scmInfo': '1b8e0d2f', 'serverTitle': 'Jira Аврора'}

    def user(self, login: str | None) -> dict | None:
        if login is None:
            return None
        name, email = USERS.get(login, (login, None))
        if self.cloud:
            user = {'self': f'{self.base_url}/rest/api/2/user?accountId={account_id(login)}',
                    'accountId': account_id(login), 'displayName': name, 'active': True,
                    'timeZone': 'Europe/Moscow', 'accountType': 'atlassian'}
            if email:
                user['emailAddress'] = email
            return user
        return {'self': f'{self.base_url}/rest/api/2/user?username={login}', 'name': login,
                'key': f'JIRAUSER{10000 + sorted(USERS).index(login) if login in USERS else 0}',
                'emailAddress': email or f'{login}@aurora.example', 'displayName': name,
                'active': True, 'timeZone': 'Europe/Moscow'}

    def login_of(self, reference) -> str:
        """The login a write names: ``{name}`` (Data Center) or ``{accountId}`` (Cloud)."""
        if not isinstance(reference, dict):
            raise Problem(400, errors={'assignee': 'Ожидается объект пользователя.'})
        if self.cloud:
            login = self._accounts.get(str(reference.get('accountId')))
        else:
            login = reference.get('name') if reference.get('name') in USERS else None
        if login is None:
            raise Problem(400, errors={'assignee': 'Пользователь не существует.'})
        return login

    def find_users(self, query: str) -> list[dict]:
        wanted = query.casefold()
        return [self.user(login) for login, (name, email) in USERS.items()
                if wanted and (wanted in login or wanted in name.casefold()
                               or (email and wanted in email.casefold()))]

    def status(self, name: str) -> dict:
        category_id, category_key, category_name = STATUS_CATEGORIES[name]
        return {'self': f'{self.base_url}/rest/api/2/status/{STATUS_IDS[name]}',
                'description': '', 'name': name, 'id': STATUS_IDS[name],
                'statusCategory': {'id': category_id, 'key': category_key, 'name': category_name}}

    def transition_of(self, name: str) -> dict:
        return {'id': str(10 + STATUSES.index(name)), 'name': f'Перевести: {name}',
                'to': self.status(name), 'hasScreen': False, 'isGlobal': True}

    # --- issues as Jira writes them --------------------------------------------------------------

    def issue_type(self, name: str) -> dict:
        type_id = TYPE_IDS.get(name, '10002')
        return {'self': f'{self.base_url}/rest/api/2/issuetype/{type_id}', 'id': type_id,
                'name': name, 'subtask': False}

    def priority(self, name: str | None) -> dict | None:
        if name is None:
            return None
        priority_id = PRIORITY_IDS.get(name, '3')
        return {'self': f'{self.base_url}/rest/api/2/priority/{priority_id}', 'id': priority_id,
                'name': name}

    def sprint_value(self, sprint: dict, board_id: int = SCRUM_BOARD):
        """A sprint in the issue's sprint field: Cloud's object, Data Center's text."""
        if self.cloud:
            return {'id': sprint['id'], 'name': sprint['name'], 'state': sprint['state'],
                    'boardId': board_id, 'goal': sprint['goal'] or '',
                    **{name: _iso(sprint[key]) for name, key in (
                        ('startDate', 'start_date'), ('endDate', 'end_date'),
                        ('completeDate', 'complete_date')) if sprint[key]}}
        digest = hashlib.sha1(str(sprint['id']).encode()).hexdigest()[:8]
        values = [('id', sprint['id']), ('rapidViewId', board_id),
                  ('state', sprint['state'].upper()), ('name', sprint['name']),
                  ('startDate', _iso(sprint['start_date'])), ('endDate', _iso(sprint['end_date'])),
                  ('completeDate', _iso(sprint['complete_date'])),
                  ('activatedDate', _iso(sprint['start_date'])), ('sequence', sprint['id']),
                  ('goal', sprint['goal'] or ''), ('synced', 'false'), ('autoStartStop', 'false'),
                  ('incompleteIssuesDestinationId', None)]
        inner = ','.join(f'{name}={"<null>" if value is None else value}' for name, value in values)
        return f'com.atlassian.greenhopper.service.sprint.Sprint@{digest}[{inner}]'

    def agile_sprint(self, sprint: dict, board_id: int) -> dict:
        value = {'id': sprint['id'], 'self': f'{self.base_url}/rest/agile/1.0/sprint/{sprint["id"]}',
                 'state': sprint['state'], 'name': sprint['name'], 'originBoardId': board_id}
        for name, key in (('startDate', 'start_date'), ('endDate', 'end_date'),
                          ('completeDate', 'complete_date')):
            if sprint[key]:
                value[name] = sprint[key]
        if sprint['goal']:
            value['goal'] = sprint['goal']
        return value

    def linked(self, key: str) -> dict:
        issue = self.jira.issue(key)
        return {'id': issue['id'], 'key': key, 'self': f'{self.base_url}/rest/api/2/issue/{issue["id"]}',
                'fields': {'summary': issue['summary'], 'status': self.status(issue['status']),
                           'priority': self.priority(issue['priority']),
                           'issuetype': self.issue_type(issue['issue_type'])}}

    def comment(self, comment: dict, key: str) -> dict:
        rendered = {'self': f'{self.base_url}/rest/api/2/issue/{key}/comment/{comment["id"]}',
                    'id': comment['id'], 'author': self.user(comment['author']),
                    'body': comment['body'], 'updateAuthor': self.user(comment['author']),
                    'created': comment['created'], 'updated': comment['updated']}
        if self.cloud:
            rendered['jsdPublic'] = True
        return rendered

    def attachment_of(self, attachment: dict) -> dict:
        filename = urllib.parse.quote(attachment['filename'])
        return {'self': f'{self.base_url}/rest/api/2/attachment/{attachment["id"]}',
                'id': attachment['id'], 'filename': attachment['filename'],
                'author': self.user(attachment['author']), 'created': attachment['created'],
                'size': attachment['size'], 'mimeType': attachment['mime_type'],
                'content': f'{self.base_url}/secure/attachment/{attachment["id"]}/{filename}'}

    def attachment(self, attachment_id: str) -> dict:
        _, attachment = self.jira.attachment_owner(attachment_id)
        return self.attachment_of(attachment)

    def histories(self, key: str) -> list[dict]:
        """The change history of ``key`` as Jira's changelog entries, oldest first."""
        entries: dict[str, dict] = {}
        for item in self.jira.history(key):
            entry = entries.get(item['history_id'])
            if entry is None:
                entry = entries[item['history_id']] = {
                    'id': item['history_id'], 'author': self.user(item['author']),
                    'created': item['created'], 'items': []}
            change = {'field': item['field_name'],
                      'fieldtype': 'jira' if item['field_id'] in SYSTEM_FIELDS else 'custom'}
            if self.cloud and item['field_id']:
                change['fieldId'] = item['field_id']  # Data Center writes no fieldId
            change.update({'from': item['from_value'], 'fromString': item['from_string'],
                           'to': item['to_value'], 'toString': item['to_string']})
            entry['items'].append(change)
        return list(entries.values())

    def render(self, key: str, wanted: list[str] | None, expand: set[str],
               properties: tuple[str, ...] | list[str] = (), *, search: bool = False) -> dict:
        """Issue ``key`` as ``GET /issue/{key}`` (or a search) returns it."""
        issue = self.jira.issue(key)
        cloud = self.cloud
        ids = self.field_ids
        comments = issue['comments']
        limit = self.comment_limit
        fields = {
            'summary': issue['summary'], 'description': issue['description'],
            'issuetype': self.issue_type(issue['issue_type']), 'status': self.status(issue['status']),
            'priority': self.priority(issue['priority']), 'assignee': self.user(issue['assignee']),
            'reporter': self.user(issue['reporter']), 'creator': self.user(issue['reporter']),
            'project': {'id': '10000', 'key': self.jira.project_key, 'name': self.jira.project_key},
            'duedate': issue['duedate'], 'labels': list(issue['labels']),
            'created': issue['created'], 'updated': issue['updated'],
            'issuelinks': [self.link_of(key, link) for link in issue['links']],
            'comment': {'comments': [self.comment(item, key) for item in comments[:limit]],
                        'maxResults': limit, 'total': len(comments), 'startAt': 0},
            'attachment': [self.attachment_of(item) for item in issue['attachments']],
        }
        epic = issue['epic_key']
        if cloud and epic and self.jira.exists(epic):
            fields['parent'] = self.linked(epic)
        for name, field_id in ids.items():
            if not field_id:
                continue
            if name == 'sprint':
                catalog = self.jira.sprint_catalog()
                sprints = [self.sprint_value(catalog[i]) for i in issue['sprint_ids'] if i in catalog]
                fields[field_id] = sprints or None
            elif name == 'epic_link':
                fields[field_id] = None if cloud else epic
            else:
                fields[field_id] = issue.get(name)
        if wanted is not None and '*all' not in wanted and '*navigable' not in wanted:
            fields = {name: value for name, value in fields.items() if name in wanted}
        rendered = {'expand': 'renderedFields,names,schema,operations,editmeta,changelog',
                    'id': issue['id'], 'self': f'{self.base_url}/rest/api/2/issue/{issue["id"]}',
                    'key': key, 'fields': fields}
        if 'changelog' in expand:
            histories = self.histories(key)
            total = len(histories)
            if cloud and search and total > self.changelog_limit:
                # Cloud's search gives the latest histories only, newest first
                histories = list(reversed(histories))[:self.changelog_limit]
            elif cloud and search:
                histories = list(reversed(histories))
            rendered['changelog'] = {'startAt': 0, 'maxResults': len(histories), 'total': total,
                                     'histories': histories}
        if properties:
            rendered['properties'] = {name: value for name in properties
                                      if (value := self.jira.property(f'issue/{key}', name))
                                      is not None}
        return rendered

    def link_of(self, key: str, link: dict) -> dict:
        outward, inward = LINK_TYPES.get(link['type'], ('relates to', 'relates to'))
        type_id = str(10000 + sorted(LINK_TYPES).index(link['type'])) \
            if link['type'] in LINK_TYPES else '10099'
        source, target = (key, link['key']) if link['direction'] == 'outward' else (link['key'], key)
        link_id = str(int(hashlib.sha1(f'{source}>{target}:{link["type"]}'.encode())
                          .hexdigest()[:7], 16))
        side = 'outwardIssue' if link['direction'] == 'outward' else 'inwardIssue'
        return {'id': link_id, 'self': f'{self.base_url}/rest/api/2/issueLink/{link_id}',
                'type': {'id': type_id, 'name': link['type'], 'inward': inward, 'outward': outward,
                         'self': f'{self.base_url}/rest/api/2/issueLinkType/{type_id}'},
                side: self.linked(link['key'])}

    # --- searches --------------------------------------------------------------------------------

    def matching(self, jql: str) -> list[str]:
        """Keys matching ``jql``, in its order (Jira's 400 for what it cannot answer)."""
        query = fake_jql.parse(jql, user=self.login)
        for key in query.keys:
            if not self.jira.exists(key):
                raise Problem(400, f"An issue with key '{key}' does not exist for field 'key'.")

        def evaluate(_):
            rows = [_Row(self.jira, key) for key in self.jira.all_keys() if self.searchable(key)]
            found = [row for row in rows if query.test(row)]
            for field, descending in reversed(query.order or [('key', False)]):
                found.sort(key=lambda row: _sortable(row.value(field)), reverse=descending)
            return [row.key for row in found]
        return self.jira.cached_search(jql, evaluate) if self.cache_searches else evaluate(jql)

    # The pages of one search are cut from one evaluation, remembered until the next write.
    cache_searches = True

    def searchable(self, key: str) -> bool:
        """Whether the search index already holds ``key`` (always, here; tests make it lag)."""
        return True

    def search_server(self, params: dict) -> dict:
        keys = self.matching(params.get('jql') or '')
        start = int(params.get('startAt') or 0)
        size = min(int(params.get('maxResults') or 50), self.page_limit)
        page = keys[start:start + size]
        return {'expand': 'schema,names', 'startAt': start, 'maxResults': size, 'total': len(keys),
                'issues': self._rendered(page, params)}

    def search_cloud(self, params: dict) -> dict:
        keys = self.matching(params.get('jql') or '')
        start = _offset(params.get('nextPageToken'))
        size = min(int(params.get('maxResults') or 50), self.page_limit)
        page = keys[start:start + size]
        answer = {'issues': self._rendered(page, params), 'isLast': start + size >= len(keys)}
        if not answer['isLast']:
            answer['nextPageToken'] = base64.urlsafe_b64encode(
                f'offset:{start + size}'.encode()).decode()
        return answer

    def _rendered(self, keys: list[str], params: dict) -> list[dict]:
        fields = _names(params.get('fields'))
        if self.cloud and fields is None:
            fields = ['id']  # /search/jql returns ids only unless fields are named
        expand = set(_names(params.get('expand')) or ())
        properties = _names(params.get('properties')) or ()
        return [self.render(key, fields, expand, properties, search=True) for key in keys]

    def changelog_page(self, key: str, params: dict) -> dict:
        histories = self.histories(key)
        start = int(params.get('startAt') or 0)
        size = min(int(params.get('maxResults') or 100), 100)
        page = histories[start:start + size]
        answer = {'self': f'{self.base_url}/rest/api/2/issue/{key}/changelog?startAt={start}'
                          f'&maxResults={size}', 'maxResults': size, 'startAt': start,
                  'total': len(histories), 'isLast': start + len(page) >= len(histories),
                  'values': page}
        if not answer['isLast']:
            answer['nextPage'] = (f'{self.base_url}/rest/api/2/issue/{key}/changelog?startAt='
                                  f'{start + size}&maxResults={size}')
        return answer

    def comment_page(self, key: str, params: dict) -> dict:
        comments = self.jira.issue(key)['comments']
        start = int(params.get('startAt') or 0)
        size = min(int(params.get('maxResults') or 50), 100)
        return {'startAt': start, 'maxResults': size, 'total': len(comments),
                'comments': [self.comment(item, key) for item in comments[start:start + size]]}

    # --- writes ----------------------------------------------------------------------------------

    def fields_of(self, fields: dict, *, create: bool) -> dict:
        """Jira's ``fields`` of a create or edit as the model's hub-shaped values; Jira's 400
        (naming the field) for one it would refuse."""
        known = {value: name for name, value in self.field_ids.items() if value}
        values, errors = {}, {}
        for name, value in fields.items():
            if name == 'project':
                if not isinstance(value, dict) or value.get('key') != self.jira.project_key:
                    errors['project'] = 'Укажите корректный проект.'
            elif name == 'issuetype':
                type_name = next((type_ for type_, type_id in TYPE_IDS.items()
                                  if isinstance(value, dict) and (value.get('id') == type_id
                                                                  or value.get('name') == type_)),
                                 None)
                if type_name is None:
                    errors['issuetype'] = 'Укажите корректный тип задачи.'
                values['issue_type'] = type_name
            elif name in ('summary', 'description', 'duedate'):
                values[name] = value
            elif name == 'labels':
                values['labels'] = list(value or [])
            elif name == 'priority':
                priority = value.get('name') if isinstance(value, dict) else None
                if priority not in PRIORITIES:
                    errors['priority'] = f'Приоритет «{priority}» не существует.'
                values['priority'] = priority
            elif name == 'assignee':
                values['assignee'] = None if value is None else self.login_of(value)
            elif name == 'parent':
                values['epic_key'] = value.get('key') if isinstance(value, dict) else None
            elif name in known and known[name] in ('planned_start', 'planned_end', 'epic_link',
                                                   'story_points'):
                logical = known[name]
                if logical == 'epic_link' and self.cloud:
                    errors[name] = (f"Поле '{name}' нельзя задать: Epic Link заменён полем "
                                    'parent.')
                values['epic_key' if logical == 'epic_link' else logical] = value
            else:
                errors[name] = (f"Поле '{name}' нельзя задать. Его нет на нужном экране, или оно "
                                'неизвестно.')
        if create:
            for name in ('project', 'issuetype', 'summary'):
                if name not in fields:
                    errors[name] = f'Поле {name} обязательно.'
        if errors:
            raise Problem(400, errors=errors)
        return values

    def create_issue(self, body: dict) -> Answer:
        values = self.fields_of(body.get('fields') or {}, create=True)
        key = self.jira.create_issue(values, author=self.login)
        if self.cloud:  # Data Center ignores entity properties in a create request
            for item in body.get('properties') or ():
                self.jira.set_property(f'issue/{key}', item['key'], item['value'])
        issue_id = self.jira.issue(key)['id']
        return Answer(201, {'id': issue_id, 'key': key,
                            'self': f'{self.base_url}/rest/api/2/issue/{issue_id}'})

    def edit_issue(self, key: str, fields: dict) -> None:
        values = self.fields_of(fields, create=False)
        values.pop('issue_type', None)
        self.jira.edit_issue(key, values, author=self.login)

    def add_comment(self, key: str, body: dict) -> dict:
        text = body.get('body')
        if not isinstance(text, str) or not text.strip():
            raise Problem(400, errors={'comment': 'Комментарий не может быть пустым.'})
        comment = self.jira.add_comment(key, text, author=self.login)
        if self.cloud:
            for item in body.get('properties') or ():
                self.jira.set_property(f'comment/{comment["id"]}', item['key'], item['value'])
        return self.comment(comment, key)

    def create_link(self, body: dict) -> Answer:
        name = (body.get('type') or {}).get('name')
        if name not in LINK_TYPES:
            raise Problem(404, f"Тип связи с именем '{name}' не найден.")
        source = ((body.get('inwardIssue') or {}).get('key') or '').upper()
        target = ((body.get('outwardIssue') or {}).get('key') or '').upper()
        for key in (source, target):
            if not self.jira.exists(key):
                raise Problem(404, f'Задача {key} не существует.')
        self.jira.link(source, target, name)
        return Answer(201)

    def do_transition(self, key: str, body: dict) -> None:
        wanted = str((body.get('transition') or {}).get('id'))
        for name in self.jira.transitions(key):
            if self.transition_of(name)['id'] == wanted:
                self.jira.transition(key, name, author=self.login)
                return
        raise Problem(400, f'Переход {wanted} недоступен для задачи {key}.')


class _Row:
    """An issue as the fake JQL reads it: cheap fields first, the whole issue only when asked."""

    __slots__ = ('jira', 'key', '_issue')

    def __init__(self, jira: FakeJira, key: str):
        self.jira = jira
        self.key = key
        self._issue = None

    def value(self, field: str):
        if field == 'key':
            return self.key
        if field == 'project':
            return self.key.rsplit('-', 1)[0]
        if field == 'labels':
            return self.jira.labels_of(self.key)
        if self._issue is None:
            self._issue = self.jira.issue(self.key)
        issue = self._issue
        if field in ('created', 'updated'):
            return parse_jira_time(issue[field])
        if field == 'creator':
            return issue['reporter']
        return issue.get({'issuetype': 'issue_type'}.get(field, field))


def _sortable(value):
    if value is None:
        return (1, '')
    if isinstance(value, str) and '-' in value and value.rsplit('-', 1)[1].isdigit():
        project, number = value.rsplit('-', 1)
        return (0, project, int(number))
    return (0, value)


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [part.strip() for part in text.split(',') if part.strip()]


def _offset(token: str | None) -> int:
    if not token:
        return 0
    try:
        return int(base64.urlsafe_b64decode(token.encode()).decode().split(':', 1)[1])
    except (ValueError, IndexError):
        raise Problem(400, 'Неверный nextPageToken.') from None


def _iso(text: str | None) -> str | None:
    """A Jira time as the Agile API writes it (``2026-11-23T10:00:00.000+03:00``)."""
    if text is None:
        return None
    moment = parse_jira_time(text)
    return moment.isoformat(timespec='milliseconds')


def _jira_now() -> str:
    return datetime.now(timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.000+0000')


class Server:
    """A WSGI app served by waitress on 127.0.0.1 in a daemon thread: ``url``, ``close()``."""

    def __init__(self, app, host: str = '127.0.0.1', port: int = 0, threads: int = 4):
        from waitress.server import create_server

        self._channels: dict = {}  # waitress's socket map: the listener and open connections
        self._server = create_server(app, host=host, port=port, threads=threads, ident='fake-jira',
                                     map=self._channels, asyncore_loop_timeout=0.2)
        self.url = f'http://{host}:{self._server.effective_port}'
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._run, name='fake-jira', daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._server.run()
        except OSError:
            if not self._closing.is_set():  # closing the socket under run() ends it with EBADF
                raise

    def close(self) -> None:
        self._closing.set()
        self._server.close()
        # a client's keep-alive connection would keep the loop running until it times out
        for channel in list(self._channels.values()):
            channel.close()
        self._thread.join(timeout=5)


def serve(app: JiraRest, host: str = '127.0.0.1', port: int = 0, threads: int = 4) -> Server:
    """Serve ``app``; its ``base_url`` becomes the server's address (attachments link to it)."""
    server = Server(app, host, port, threads)
    app.base_url = server.url
    return server


__all__ = ['JiraRest', 'Server', 'serve', 'person_in_mirror', 'account_id', 'CLOUD', 'SERVER']
