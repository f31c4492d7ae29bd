"""A generated Jira held in memory, for the simulated agent, the demo, benchmarks and tests.

Issue ``AURORA-n`` (1 ≤ n ≤ ``issues``) is a pure function of ``(seed, n)``: nothing is generated
until it is asked for, so a 50,000-issue Jira costs no memory until it is read. What the agent
changes (created issues, comments, links, transitions) is kept in small override maps on top.
Shapes follow contract §8 exactly (the ISSUE of ``/agent/state``, the items of ``/agent/history``,
the boards of ``/agent/boards``), with Jira times carrying offsets like ``+0300``.
"""
from __future__ import annotations

import hashlib
import random
import re
import threading
from datetime import datetime, timedelta, timezone

DEFAULT_LABELS = ('AWPCA', 'ORION', 'VEGA')
# Issues with this label are outside every project: they enter the mirror only as neighbours.
OUTSIDE_LABEL = 'ВНЕШНЯЯ'
OUTSIDE_EVERY = 20

STATUSES = ('Открыта', 'В работе', 'На проверке', 'Готово', 'Снято')
PRIORITIES = ('Высокий', 'Средний', 'Низкий')
PEOPLE = ('ivanov', 'petrov', 'sidorova', 'kuznetsov', 'smirnova', None)
TYPES = (('Задача', 8), ('Ошибка', 2), ('Эпик', 1))
OFFSETS = ('+0300', '+0300', '+0000', '-0500', '+0530')

SCRUM_BOARD = 4216
KANBAN_BOARD = 4217
SPRINTS = (
    {'id': 101, 'name': 'Спринт 1', 'state': 'closed', 'start_date': '2026-09-01T09:00:00.000+0300',
     'end_date': '2026-09-14T18:00:00.000+0300', 'complete_date': '2026-09-14T19:02:11.000+0300',
     'goal': 'Каркас'},
    {'id': 102, 'name': 'Спринт 2', 'state': 'closed', 'start_date': '2026-09-15T09:00:00.000+0300',
     'end_date': '2026-09-28T18:00:00.000+0300', 'complete_date': '2026-09-28T17:40:00.000+0300',
     'goal': 'Зеркало'},
    {'id': 103, 'name': 'Спринт 3', 'state': 'active', 'start_date': '2026-11-23T09:00:00.000+0300',
     'end_date': '2026-12-06T18:00:00.000+0300', 'complete_date': None, 'goal': 'Очередь команд'},
    {'id': 104, 'name': 'Спринт 4', 'state': 'future', 'start_date': None, 'end_date': None,
     'complete_date': None, 'goal': None},
)
SPRINT_SETS = ((101,), (101, 102), (103,), (), (104,), ())

_EPOCH = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
_KEY = re.compile(r'^([A-Z][A-Z0-9_]*)-([0-9]+)$')


class JiraError(Exception):
    """What the fake Jira answers to a request it cannot serve (unknown issue, attachment…)."""


def jira_time(moment: datetime, offset: str) -> str:
    """``moment`` written the way Jira writes it: local time, milliseconds, offset like ``+0300``."""
    sign = 1 if offset[0] == '+' else -1
    delta = timedelta(hours=int(offset[1:3]), minutes=int(offset[3:5])) * sign
    local = moment.astimezone(timezone(delta))
    return local.strftime('%Y-%m-%dT%H:%M:%S.') + f'{local.microsecond // 1000:03d}' + offset


class FakeJira:
    """A deterministic Jira: ``issues`` generated issues of ``project_key`` across ``labels``."""

    def __init__(self, issues: int = 200, seed: int = 1, project_key: str = 'AURORA',
                 labels: tuple[str, ...] = DEFAULT_LABELS, changes_per_issue: int = 3):
        self.count = issues
        self.seed = seed
        self.project_key = project_key
        self.labels = tuple(labels)
        self.changes_per_issue = changes_per_issue
        self._lock = threading.Lock()
        self._next_number = issues + 1
        self._created: dict[str, dict] = {}            # key -> fields of issues created by agents
        self._fields: dict[str, dict] = {}             # key -> changed fields (summary, status…)
        self._extra_comments: dict[str, list[dict]] = {}
        self._extra_links: dict[str, list[dict]] = {}  # key -> extra links (both directions)
        self._extra_history: dict[str, list[dict]] = {}
        self._created_by: dict[object, str] = {}       # idempotency token (e.g. command id) -> key
        self._comment_seq = 0
        self.calls = 0

    # --- identity ---------------------------------------------------------------------------

    def key(self, number: int) -> str:
        return f'{self.project_key}-{number}'

    def number(self, key: str) -> int | None:
        match = _KEY.match(key or '')
        if not match or match.group(1) != self.project_key:
            return None
        return int(match.group(2))

    def exists(self, key: str) -> bool:
        number = self.number(key)
        return number is not None and (1 <= number <= self.count or key in self._created)

    def _rng(self, number: int, salt: int = 0) -> random.Random:
        return random.Random(self.seed * 1_000_003 + number * 7 + salt)

    # --- generated parts of issue n ---------------------------------------------------------

    def _labels(self, number: int) -> list[str]:
        if number % OUTSIDE_EVERY == 0:
            return [OUTSIDE_LABEL]
        labels = [self.labels[number % len(self.labels)]]
        if number % 11 == 0 and len(self.labels) > 1:
            labels.append(self.labels[(number + 1) % len(self.labels)])
        return labels

    def _links(self, number: int) -> list[dict]:
        links = []
        if number % 3 == 0 and number + 1 <= self.count:
            links.append({'type': 'Blocks', 'direction': 'outward', 'key': self.key(number + 1)})
        if (number - 1) % 3 == 0 and number - 1 >= 1:
            links.append({'type': 'Blocks', 'direction': 'inward', 'key': self.key(number - 1)})
        if number % 5 == 0 and number + 7 <= self.count:
            links.append({'type': 'Relates', 'direction': 'outward', 'key': self.key(number + 7)})
        if (number - 7) % 5 == 0 and number - 7 >= 1:
            links.append({'type': 'Relates', 'direction': 'inward', 'key': self.key(number - 7)})
        return links

    def _times(self, number: int) -> tuple[datetime, datetime]:
        rng = self._rng(number, 1)
        created = _EPOCH + timedelta(minutes=number * 13 + rng.randrange(60))
        updated = created + timedelta(days=rng.randrange(1, 200), seconds=rng.randrange(86400))
        return created, updated

    def _generated(self, number: int) -> dict:
        rng = self._rng(number)
        created, updated = self._times(number)
        offset = OFFSETS[number % len(OFFSETS)]
        types, weights = zip(*TYPES)
        issue_type = rng.choices(types, weights)[0]
        sprint_ids = list(SPRINT_SETS[number % len(SPRINT_SETS)])
        epic = None if issue_type == 'Эпик' or number < 10 else self.key(1 + (number // 50) * 50)
        start = created.date() + timedelta(days=rng.randrange(30))
        comments = [{
            'id': str(number * 10 + i), 'author': PEOPLE[(number + i) % 5],
            'created': jira_time(created + timedelta(hours=i + 1), offset),
            'updated': jira_time(created + timedelta(hours=i + 2), offset),
            'body': f'Комментарий {i + 1} к задаче {self.key(number)}: '
                    'проверить *разметку* и {code}x{code}',
        } for i in range(rng.randrange(4))]
        attachments = []
        if number % 4 == 0:
            content = self._attachment_content(str(number))
            attachments.append({
                'id': str(number), 'filename': f'спецификация-{number}.txt', 'size': len(content),
                'mime_type': 'text/plain', 'author': PEOPLE[number % 5],
                'created': jira_time(created + timedelta(minutes=5), offset)})
        return {
            'key': self.key(number), 'id': str(10000 + number), 'issue_type': issue_type,
            'summary': f'Задача {number}: {rng.choice(("доработать", "проверить", "описать", "починить"))} '
                       f'{rng.choice(("отчёт", "форму", "API", "миграцию", "импорт"))}',
            'description': f'h2. Описание\nСгенерированная задача {number} (seed {self.seed}).',
            'status': STATUSES[rng.randrange(len(STATUSES))],
            'priority': PRIORITIES[rng.randrange(len(PRIORITIES))],
            'assignee': PEOPLE[rng.randrange(len(PEOPLE))], 'reporter': PEOPLE[number % 5],
            'duedate': (start + timedelta(days=14)).isoformat() if number % 3 else None,
            'planned_start': start.isoformat() if number % 2 else None,
            'planned_end': (start + timedelta(days=10)).isoformat() if number % 2 else None,
            'epic_key': epic, 'labels': self._labels(number),
            'sprint': SPRINTS[sprint_ids[-1] - 101]['name'] if sprint_ids else None,
            'rank': f'0|i{number:05x}:', 'story_points': (1, 2, 3, 5, 8, None)[number % 6],
            'updated': jira_time(updated, offset), 'created': jira_time(created, offset),
            'links': self._links(number), 'comments': comments, 'attachments': attachments,
            'sprint_ids': sprint_ids,
        }

    def _generated_history(self, number: int) -> list[dict]:
        rng = self._rng(number, 2)
        created, _ = self._times(number)
        offset = OFFSETS[(number + 1) % len(OFFSETS)]
        items = []
        moment = created
        statuses = ('Открыта',) + STATUSES[1:]
        for index in range(self.changes_per_issue):
            # Two fields per history record, as Jira groups them: (history_id, seq 0/1).
            history = index // 2
            seq = index % 2
            if seq == 0:
                moment += timedelta(hours=rng.randrange(1, 72), seconds=rng.randrange(60))
            kind = index % 4
            if kind == 0:
                field = ('status', 'Status', statuses[index % 5], statuses[(index + 1) % 5])
            elif kind == 1:
                field = ('assignee', 'Assignee', PEOPLE[index % 5], PEOPLE[(index + 2) % 5])
            elif kind == 2:
                field = ('customfield_10015', 'Плановое начало', None, moment.date().isoformat())
            else:
                field = (None, 'Флажок', None, 'Да')
            field_id, field_name, before, after = field
            items.append({
                'history_id': str(number * 1000 + history), 'seq': seq, 'key': self.key(number),
                'created': jira_time(moment, offset), 'author': PEOPLE[(number + index) % 5],
                'field_id': field_id, 'field_name': field_name,
                'from_value': before, 'from_string': before, 'to_value': after, 'to_string': after,
            })
        return items

    # --- reading ----------------------------------------------------------------------------

    def issue(self, key: str) -> dict:
        """The ISSUE payload of ``key`` (contract §8.1), without ``neighbor``."""
        with self._lock:
            self.calls += 1
            number = self.number(key)
            if key in self._created:
                issue = dict(self._created[key])
            elif number is not None and 1 <= number <= self.count:
                issue = self._generated(number)
            else:
                raise JiraError(f'задача {key} не найдена в Jira')
            issue.update(self._fields.get(key, {}))
            issue['comments'] = list(issue.get('comments', [])) + self._extra_comments.get(key, [])
            issue['links'] = list(issue.get('links', [])) + self._extra_links.get(key, [])
            return issue

    def issues(self, keys: list[str]) -> list[dict]:
        """ISSUE payloads of those of ``keys`` that exist."""
        return [self.issue(key) for key in keys if self.exists(key)]

    def history(self, key: str) -> list[dict]:
        """Change-history items of ``key`` (contract §8.2)."""
        number = self.number(key)
        items = self._generated_history(number) if number and number <= self.count else []
        return items + self._extra_history.get(key, [])

    def all_keys(self) -> list[str]:
        return [self.key(n) for n in range(1, self.count + 1)] + list(self._created)

    def search(self, jql: str) -> list[str]:
        """Keys matching ``jql``. Understands ``labels in (…)``, ``labels = X`` and ``key in (…)``."""
        self.calls += 1
        keys_match = re.search(r'\bkey\s+in\s*\(([^)]*)\)', jql, re.I)
        if keys_match:
            wanted = [part.strip().strip('"') for part in keys_match.group(1).split(',')]
            return [key for key in wanted if self.exists(key)]
        labels_match = re.search(r'\blabels\s+in\s*\(([^)]*)\)', jql, re.I)
        label_match = re.search(r'\blabels\s*=\s*"?([^"\s)]+)"?', jql, re.I)
        if labels_match:
            wanted = {part.strip().strip('"') for part in labels_match.group(1).split(',')}
        elif label_match:
            wanted = {label_match.group(1)}
        else:
            return self.all_keys()
        found = [self.key(n) for n in range(1, self.count + 1) if wanted & set(self._labels(n))]
        found += [key for key, issue in self._created.items() if wanted & set(issue['labels'])]
        return found

    def boards(self) -> list[dict]:
        """One scrum board with sprints and one kanban board with a backlog column (contract §8.3)."""
        columns = [{'name': 'Открыта', 'statuses': ['Открыта']},
                   {'name': 'В работе', 'statuses': ['В работе', 'На проверке']},
                   {'name': 'Готово', 'statuses': ['Готово', 'Снято']}]
        return [
            {'board_id': SCRUM_BOARD, 'type': 'scrum', 'columns': columns, 'kanban_backlog': None,
             'sprints': [dict(sprint) for sprint in SPRINTS]},
            {'board_id': KANBAN_BOARD, 'type': 'kanban',
             'columns': [{'name': 'Бэклог', 'statuses': ['Открыта']}] + columns[1:],
             'kanban_backlog': 1, 'sprints': []},
        ]

    # --- attachments ------------------------------------------------------------------------

    def _attachment_content(self, attachment_id: str) -> bytes:
        line = f'Вложение {attachment_id} (seed {self.seed}): сгенерированный файл\n'.encode()
        return line * (1 + int(attachment_id) % 7)

    def attachment(self, attachment_id: str) -> bytes:
        """The content of attachment ``attachment_id``."""
        self.calls += 1
        if not str(attachment_id).isdigit():
            raise JiraError(f'вложение {attachment_id} не найдено в Jira')
        number = int(attachment_id)
        if not (1 <= number <= self.count and number % 4 == 0):
            raise JiraError(f'вложение {attachment_id} не найдено в Jira')
        return self._attachment_content(str(number))

    @staticmethod
    def sha256(content: bytes) -> str:
        return hashlib.sha256(content).hexdigest()

    # --- writing ----------------------------------------------------------------------------

    def _change(self, key: str, author: str, field_id: str, before: object, after: object) -> None:
        moment = datetime.now(timezone.utc).replace(microsecond=0)
        number = self.number(key) or 0
        extra = self._extra_history.setdefault(key, [])
        extra.append({
            'history_id': f'{number * 1000 + 900 + len(extra)}', 'seq': 0, 'key': key,
            'created': jira_time(moment, '+0300'), 'author': author, 'field_id': field_id,
            'field_name': field_id.capitalize(), 'from_value': before, 'from_string': before,
            'to_value': after, 'to_string': after})

    def ensure_issue(self, fields: dict, token: object = None, author: str = 'sim-agent') -> str:
        """Create an issue (or update ``fields['key']``); the same ``token`` never creates twice."""
        self.calls += 1
        with self._lock:
            key = fields.get('key') or (self._created_by.get(token) if token is not None else None)
            now = jira_time(datetime.now(timezone.utc), '+0300')
            if key:
                if not (key in self._created or (self.number(key) or 0) in range(1, self.count + 1)):
                    raise JiraError(f'задача {key} не найдена в Jira')
                changes = {name: value for name, value in fields.items()
                           if name not in ('key', 'temp_key', 'issue_type', 'issue_type_name')
                           and value is not None}
                changes['updated'] = now
                self._fields.setdefault(key, {}).update(changes)
                return key
            key = self.key(self._next_number)
            self._next_number += 1
            self._created[key] = {
                'key': key, 'id': str(10000 + self.number(key)),
                'issue_type': fields.get('issue_type_name') or fields.get('issue_type') or 'Задача',
                'summary': fields.get('summary'), 'description': fields.get('description'),
                'status': 'Открыта', 'priority': fields.get('priority'),
                'assignee': fields.get('assignee'), 'reporter': author,
                'duedate': fields.get('duedate'), 'planned_start': fields.get('planned_start'),
                'planned_end': fields.get('planned_end'), 'epic_key': fields.get('epic_key'),
                'labels': list(fields.get('labels') or []), 'sprint': None, 'rank': None,
                'story_points': None, 'updated': now, 'created': now, 'links': [], 'comments': [],
                'attachments': [], 'sprint_ids': []}
            if token is not None:
                self._created_by[token] = key
            return key

    def ensure_link(self, source: str, target: str, link_type: str) -> bool:
        """Link ``source`` → ``target``; False when the link was already there."""
        self.calls += 1
        for key in (source, target):
            if not self.exists(key):
                raise JiraError(f'задача {key} не найдена в Jira')
        with self._lock:
            outward = {'type': link_type, 'direction': 'outward', 'key': target}
            existing = self._extra_links.get(source, [])
            if outward in existing:
                return False
            self._extra_links.setdefault(source, []).append(outward)
            self._extra_links.setdefault(target, []).append(
                {'type': link_type, 'direction': 'inward', 'key': source})
            return True

    def add_comment(self, key: str, body: str, author: str = 'sim-agent', token: object = None) -> str:
        """Add a comment; the same ``token`` never adds twice. Returns the comment id."""
        self.calls += 1
        if not self.exists(key):
            raise JiraError(f'задача {key} не найдена в Jira')
        with self._lock:
            if token is not None and ('comment', token) in self._created_by:
                return self._created_by[('comment', token)]
            self._comment_seq += 1
            comment_id = str(900_000_000 + self._comment_seq)
            now = jira_time(datetime.now(timezone.utc), '+0300')
            self._extra_comments.setdefault(key, []).append(
                {'id': comment_id, 'author': author, 'created': now, 'updated': now, 'body': body})
            if token is not None:
                self._created_by[('comment', token)] = comment_id
            return comment_id

    def transition(self, key: str, status: str, author: str = 'sim-agent') -> str:
        """Move ``key`` to ``status``; returns the status it had."""
        self.calls += 1
        before = self.issue(key)['status']
        if status not in STATUSES:
            raise JiraError(f'нет перехода в статус «{status}»')
        with self._lock:
            self._fields.setdefault(key, {})['status'] = status
            self._fields[key]['updated'] = jira_time(datetime.now(timezone.utc), '+0300')
            self._change(key, author, 'status', before, status)
        return before


__all__ = ['FakeJira', 'JiraError', 'jira_time', 'SCRUM_BOARD', 'KANBAN_BOARD', 'DEFAULT_LABELS',
           'OUTSIDE_LABEL']
