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
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta, timezone

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

# The scrum history (``FakeJira(scrum_history=now)``): two-week sprints around ``now`` on the
# scrum board, and for the issues of its project a history that walks them through the board.
SCRUM_LABEL = 'AWPCA'
STATUS_IDS = {name: str(index + 1) for index, name in enumerate(STATUSES)}
SPRINT_FIELD_ID = 'customfield_10020'
MOSCOW = timezone(timedelta(hours=3))
CLOSED_SPRINTS = 6
SPRINT_GOALS = ('Каркас платёжного контура', 'Зеркало задач', 'Очередь команд', 'Журнал изменений',
                'Отчёты и выгрузки', 'Вложения', 'Отчёты по спринтам', 'Доска и фильтры')
STORY_POINTS = (1, 2, 2, 3, 3, 3, 5, 5, 8, 13, None)
WORKFLOW = (('Открыта', 'В работе'), ('В работе', 'На проверке'), ('На проверке', 'Готово'))

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


@dataclass
class Sprint:
    """A sprint of the scrum history: its moments (aware datetimes) and state."""

    id: int
    name: str
    state: str
    start: datetime
    end: datetime
    complete: datetime | None
    goal: str

    def payload(self) -> dict:
        """The sprint as the boards payload carries it (contract §8.3); a future one has no dates."""
        future = self.state == 'future'
        return {'id': self.id, 'name': self.name, 'state': self.state,
                'start_date': None if future else jira_time(self.start, '+0300'),
                'end_date': None if future else jira_time(self.end, '+0300'),
                'complete_date': jira_time(self.complete, '+0300') if self.complete else None,
                'goal': self.goal}


def scrum_sprints(now: datetime) -> list[Sprint]:
    """Two-week sprints, Monday 10:00 to Friday of the second week 18:00 (Moscow time): six
    closed, completed half an hour after their end; the active one started on the Monday a week
    before ``now``'s week (so ``now`` is in its second week); one future sprint after it."""
    today = now.astimezone(MOSCOW).date()
    active_start = datetime.combine(today - timedelta(days=today.weekday() + 7), time(10, 0),
                                    MOSCOW)
    sprints = []
    for index in range(CLOSED_SPRINTS + 2):
        start = active_start + timedelta(days=14 * (index - CLOSED_SPRINTS))
        end = start + timedelta(days=11, hours=8)
        state = ('closed' if index < CLOSED_SPRINTS else
                 'active' if index == CLOSED_SPRINTS else 'future')
        sprints.append(Sprint(id=101 + index, name=f'Спринт {index + 1}', state=state,
                              start=start, end=end,
                              complete=end + timedelta(minutes=30) if state == 'closed' else None,
                              goal=SPRINT_GOALS[index % len(SPRINT_GOALS)]))
    return sprints


def _workday(moment: datetime) -> datetime:
    """``moment``, or when it falls on a weekend in Moscow, the same time on the next Monday."""
    weekday = moment.astimezone(MOSCOW).weekday()
    return moment + timedelta(days=7 - weekday) if weekday >= 5 else moment


@dataclass
class Story:
    """What the scrum history made of one issue: its creation, final status and sprints, story
    points and its changes ``(moment, field, before, after)`` in order (field ``status`` or
    ``sprint``; sprint values are lists of sprint ids)."""

    created: datetime
    status: str = 'Открыта'
    sprint_ids: list[int] = field(default_factory=list)
    points: int | None = None
    changes: list[tuple[datetime, str, object, object]] = field(default_factory=list)


class FakeJira:
    """A deterministic Jira: ``issues`` generated issues of ``project_key`` across ``labels``."""

    def __init__(self, issues: int = 200, seed: int = 1, project_key: str = 'AURORA',
                 labels: tuple[str, ...] = DEFAULT_LABELS, changes_per_issue: int = 3,
                 scrum_history: datetime | None = None):
        """``scrum_history``: a moment; when given, the scrum board's sprints lie around it (six
        closed, the active one holding it, one future) and the issues of its project (label
        AWPCA) carry a plausible history up to it (see :meth:`_story`); the demo passes now."""
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
        self.scrum_history = scrum_history
        self._sprints = scrum_sprints(scrum_history) if scrum_history is not None else None
        self._stories: dict[int, Story] = {}

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
        generated = {
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
        if self._sprints is not None and not self.is_scrum(number):
            generated.update(sprint_ids=[], sprint=None)  # the sprints are the scrum issues' own
        elif self._sprints is not None:
            story = self._story(number)
            last = max([moment for moment, *_ in story.changes] + [story.created])
            names = {sprint.id: sprint.name for sprint in self._sprints}
            generated.update(
                status=story.status, sprint_ids=list(story.sprint_ids),
                sprint=names[story.sprint_ids[-1]] if story.sprint_ids else None,
                story_points=story.points, created=jira_time(story.created, offset),
                updated=jira_time(last + timedelta(minutes=5), offset))
        return generated

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

    # --- the scrum history --------------------------------------------------------------------

    def is_scrum(self, number: int) -> bool:
        """Whether AURORA-n gets the scrum history: a task or bug of the scrum board's project."""
        return (self._sprints is not None and SCRUM_LABEL in self._labels(number)
                and self._issue_type(number) != 'Эпик')

    def _issue_type(self, number: int) -> str:
        types, weights = zip(*TYPES)
        return self._rng(number).choices(types, weights)[0]

    def _story(self, number: int) -> Story:
        """A plausible life of a scrum issue, fixed by ``(seed, number, scrum_history)``.

        The project's issues are dealt round-robin to the eight sprints and the backlog. An issue
        of a sprint is created and put into it during planning (one in seven is created and added
        after the start instead), then walks Открыта → В работе → На проверке → Готово at a
        random pace from a random moment of the sprint; one in eleven is taken out of the sprint
        a few days in, one in thirteen is reopened after review and done again. What is not done
        when a sprint is completed moves on to the next sprint (``101`` → ``101, 102``, as Jira
        keeps closed sprints in the field). Nothing happens after ``scrum_history``; a future
        sprint's issues wait open.
        """
        if number in self._stories:
            return self._stories[number]
        rng = self._rng(number, 5)
        now = self.scrum_history
        slot = (number // 3) % (len(self._sprints) + 1)
        story = Story(created=self._sprints[0].start - timedelta(days=rng.uniform(5, 60)),
                      points=rng.choice(STORY_POINTS))
        self._stories[number] = story
        if slot == len(self._sprints):  # the backlog
            return story
        index = slot
        sprint = self._sprints[index]
        added = sprint.state != 'future' and number % 7 == 3
        if added:
            story.created = _workday(sprint.start + timedelta(days=rng.randrange(1, 5),
                                                              hours=rng.uniform(0, 7)))
            enter = story.created + timedelta(minutes=rng.randrange(5, 120))
        else:
            enter = sprint.start - timedelta(hours=rng.uniform(2, 70))
            story.created = enter - timedelta(days=rng.uniform(1, 25))
        if enter > now:  # the future sprint's planning is still going on
            enter = now - timedelta(hours=rng.uniform(1, 48))
            story.created = min(story.created, enter - timedelta(hours=1))
        story.changes.append((enter, 'sprint', [], [sprint.id]))
        story.sprint_ids = [sprint.id]
        if sprint.state == 'future':
            return story
        if number % 11 == 5:  # taken out of the sprint a few days in, back to the backlog
            moment = _workday(max(sprint.start + timedelta(days=rng.randrange(1, 5),
                                                           hours=rng.uniform(0, 7)),
                                  enter + timedelta(hours=rng.uniform(2, 30))))
            if moment <= now:
                story.changes.append((moment, 'sprint', [sprint.id], []))
                story.sprint_ids = []
            return story
        moment = max(sprint.start, enter) + timedelta(hours=rng.uniform(1, 6 * 24))
        steps = list(WORKFLOW)
        if number % 13 == 7:  # reopened after review, then done again
            steps += [('Готово', 'В работе'), ('В работе', 'Готово')]
        for before, after in steps:
            while sprint.complete is not None and moment > sprint.complete \
                    and index + 1 < len(self._sprints):
                # not done when the sprint was completed: carried over to the next one
                following = self._sprints[index + 1]
                story.changes.append((sprint.complete, 'sprint', list(story.sprint_ids),
                                      story.sprint_ids + [following.id]))
                story.sprint_ids = story.sprint_ids + [following.id]
                index, sprint = index + 1, following
                moment = max(moment, sprint.start + timedelta(hours=rng.uniform(1, 30)))
            moment = _workday(moment)
            if moment > now:
                break
            story.changes.append((moment, 'status', before, after))
            story.status = after
            moment += timedelta(hours=rng.uniform(4, 24) if after != 'В работе'
                                else rng.uniform(12, 60))
        return story

    def _story_history(self, number: int) -> list[dict]:
        story = self._story(number)
        offset = OFFSETS[(number + 1) % len(OFFSETS)]
        names = {sprint.id: sprint.name for sprint in self._sprints}
        items = []
        for index, (moment, kind, before, after) in enumerate(story.changes):
            if kind == 'status':
                field_id, field_name = 'status', 'Status'
                values = (STATUS_IDS[before], before, STATUS_IDS[after], after)
            else:
                field_id, field_name = SPRINT_FIELD_ID, 'Sprint'
                values = (', '.join(map(str, before)), ', '.join(names[i] for i in before),
                          ', '.join(map(str, after)), ', '.join(names[i] for i in after))
            items.append({
                'history_id': str(number * 1000 + index), 'seq': 0, 'key': self.key(number),
                'created': jira_time(moment, offset), 'author': PEOPLE[(number + index) % 5],
                'field_id': field_id, 'field_name': field_name, 'from_value': values[0],
                'from_string': values[1], 'to_value': values[2], 'to_string': values[3]})
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
        if not number or number > self.count:
            items = []
        elif self.is_scrum(number):
            items = self._story_history(number)
        else:
            items = self._generated_history(number)
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
             'sprints': [dict(sprint) for sprint in SPRINTS] if self._sprints is None
             else [sprint.payload() for sprint in self._sprints]},
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


__all__ = ['FakeJira', 'JiraError', 'jira_time', 'scrum_sprints', 'SCRUM_BOARD', 'KANBAN_BOARD',
           'DEFAULT_LABELS', 'OUTSIDE_LABEL', 'SCRUM_LABEL', 'SPRINT_FIELD_ID']
