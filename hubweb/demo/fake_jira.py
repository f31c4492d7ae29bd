"""A generated Jira held in memory: the model behind the demo's fake Jira REST server
(:mod:`hubweb.demo.jira_rest`), also read directly by tests and benchmarks.

Issue ``AURORA-n`` (1 ≤ n ≤ ``issues``) is a pure function of ``(seed, n)`` (and of the moment of
the scrum story, when one is told): nothing is generated until it is asked for, so a 50,000-issue
Jira costs no memory until it is read. What is written into it (created issues, edits, comments,
links, transitions, entity properties) is kept in small maps on top, saved to ``state_file`` when
one is given, so a restarted demo finds its Jira as it left it and never hands out a key twice.

The model speaks the hub's shapes (the ISSUE of ``/agent/state``, the items of ``/agent/history``,
the boards of ``/agent/boards``, Jira times with offsets like ``+0300``), people by their Jira
login: what a mirror filled from this Jira must hold (``jira_rest`` renders it as Jira's JSON, the
agent maps that back). Every issue's change history ends in its current status, assignee, priority
and sprints, as a real Jira's does.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta, timezone
from pathlib import Path

DEFAULT_LABELS = ('AWPCA', 'ORION', 'VEGA')
# Issues with this label are outside every project: they enter the mirror only as neighbours.
OUTSIDE_LABEL = 'ВНЕШНЯЯ'
OUTSIDE_EVERY = 20
EPIC_EVERY = 50  # AURORA-1, AURORA-51, … are epics; the issues after each belong to it

STATUSES = ('Открыта', 'В работе', 'На проверке', 'Готово', 'Снято')
PRIORITIES = ('Высокий', 'Средний', 'Низкий')
PEOPLE = ('ivanov', 'petrov', 'sidorova', 'kuznetsov', 'smirnova', None)
# Jira's accounts: login -> (display name, e-mail or None: hidden by the person's privacy settings).
USERS = {
    'ivanov': ('Иван Иванов', 'ivanov@aurora.example'),
    'petrov': ('Пётр Петров', 'petrov@aurora.example'),
    'sidorova': ('Анна Сидорова', None),
    'kuznetsov': ('Олег Кузнецов', 'kuznetsov@aurora.example'),
    'smirnova': ('Мария Смирнова', None),
    'sdlc-agent': ('Агент sdlc-hub', 'sdlc-agent@aurora.example'),
}
AGENT_LOGIN = 'sdlc-agent'
TYPES = (('Задача', 8), ('Ошибка', 2), ('Эпик', 1))
TYPE_IDS = {'Задача': '10002', 'Эпик': '10000', 'Ошибка': '10004'}
OFFSETS = ('+0300', '+0300', '+0000', '-0500', '+0530')
LINK_TYPES = {'Blocks': ('blocks', 'is blocked by'), 'Relates': ('relates to', 'relates to')}

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
PRIORITY_IDS = {name: str(index + 1) for index, name in enumerate(PRIORITIES)}
# Custom fields of this Jira (the demo's ``field_ids``).
FIELD_IDS = {'planned_start': 'customfield_10015', 'planned_end': 'customfield_10016',
             'epic_link': 'customfield_10014', 'story_points': 'customfield_10026',
             'sprint': 'customfield_10020', 'rank': 'customfield_10019'}
SPRINT_FIELD_ID = FIELD_IDS['sprint']
FLAG_FIELD_ID = 'customfield_10021'
MOSCOW = timezone(timedelta(hours=3))
CLOSED_SPRINTS = 6
SPRINT_GOALS = ('Каркас платёжного контура', 'Зеркало задач', 'Очередь команд', 'Журнал изменений',
                'Отчёты и выгрузки', 'Вложения', 'Отчёты по спринтам', 'Доска и фильтры')
STORY_POINTS = (1, 2, 2, 3, 3, 3, 5, 5, 8, 13, None)
WORKFLOW = (('Открыта', 'В работе'), ('В работе', 'На проверке'), ('На проверке', 'Готово'))
# How an issue reached its status: the workflow's steps from «Открыта».
PATHS = {'Открыта': (), 'В работе': WORKFLOW[:1], 'На проверке': WORKFLOW[:2],
         'Готово': WORKFLOW, 'Снято': (('Открыта', 'В работе'), ('В работе', 'Снято'))}
# Fields whose history is written beside the status walk, in turn; each chain of changes of one
# field ends in the issue's current value.
FILLERS = ('assignee', 'priority', 'planned_start', 'flag')
HISTORY_FIELDS = {'status': ('status', 'status'), 'assignee': ('assignee', 'assignee'),
                  'priority': ('priority', 'priority'), 'summary': ('summary', 'summary'),
                  'description': ('description', 'description'), 'labels': ('labels', 'labels'),
                  'duedate': ('duedate', 'duedate'),
                  'planned_start': (FIELD_IDS['planned_start'], 'Плановое начало'),
                  'planned_end': (FIELD_IDS['planned_end'], 'Плановое окончание'),
                  'epic_key': (FIELD_IDS['epic_link'], 'Epic Link'),
                  'flag': (None, 'Флажок'), 'sprint': (SPRINT_FIELD_ID, 'Sprint')}

_EPOCH = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
_KEY = re.compile(r'^([A-Z][A-Z0-9_]*)-([0-9]+)$')
STATE_VERSION = 1


class JiraError(Exception):
    """What the fake Jira answers to a request it cannot serve (unknown issue, attachment…).

    ``status`` is the HTTP status Jira gives for it."""

    def __init__(self, message: str, status: int = 404):
        super().__init__(message)
        self.status = status


def jira_time(moment: datetime, offset: str) -> str:
    """``moment`` written the way Jira writes it: local time, milliseconds, offset like ``+0300``."""
    sign = 1 if offset[0] == '+' else -1
    delta = timedelta(hours=int(offset[1:3]), minutes=int(offset[3:5])) * sign
    local = moment.astimezone(timezone(delta))
    return local.strftime('%Y-%m-%dT%H:%M:%S.') + f'{local.microsecond // 1000:03d}' + offset


def parse_jira_time(text: str) -> datetime:
    """A time written by :func:`jira_time` (or ISO with ``+03:00``/``Z``) as an aware datetime."""
    text = text.strip().replace('Z', '+00:00')
    if re.search(r'[+-]\d{4}$', text):
        text = text[:-2] + ':' + text[-2:]
    return datetime.fromisoformat(text)


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


def current_sprint_name(sprints: list[dict]) -> str | None:
    """The name of the active sprint among ``sprints``, else of the last one."""
    for sprint in sprints:
        if sprint.get('state') == 'active':
            return sprint.get('name')
    return sprints[-1].get('name') if sprints else None


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
    """A deterministic Jira: ``issues`` generated issues of ``project_key`` across ``labels``.

    Thread-safe: the REST server answers from several threads."""

    def __init__(self, issues: int = 200, seed: int = 1, project_key: str = 'AURORA',
                 labels: tuple[str, ...] = DEFAULT_LABELS, changes_per_issue: int = 3,
                 scrum_history: datetime | None = None, state_file: str | os.PathLike | None = None):
        """``scrum_history``: a moment; when given, the scrum board's sprints lie around it (six
        closed, the active one holding it, one future) and the issues of its project (label
        AWPCA) carry a plausible history up to it (see :meth:`_story`); the demo passes now.

        ``state_file``: where what is written into this Jira is kept. When it exists, it is read
        back, and the generation parameters it records (issues, seed, moment…) win over the
        arguments: a restarted demo serves the Jira it served before."""
        self.state_file = Path(state_file) if state_file is not None else None
        saved = self._read_state()
        if saved:
            generated = saved['generated']
            issues, seed, project_key = generated['issues'], generated['seed'], generated['project_key']
            labels, changes_per_issue = tuple(generated['labels']), generated['changes_per_issue']
            moment = generated.get('scrum_history')
            scrum_history = datetime.fromisoformat(moment) if moment else None
        self.count = issues
        self.seed = seed
        self.project_key = project_key
        self.labels = tuple(labels)
        self.changes_per_issue = changes_per_issue
        self.scrum_history = scrum_history
        self._sprints = scrum_sprints(scrum_history) if scrum_history is not None else None
        self._stories: dict[int, Story] = {}
        self._lock = threading.RLock()
        self._next_number = issues + 1
        self._created: dict[str, dict] = {}            # key -> issues created through the API
        self._fields: dict[str, dict] = {}             # key -> changed fields (summary, status…)
        self._comments: dict[str, list[dict]] = {}     # key -> comments added through the API
        self._links: dict[str, list[dict]] = {}        # key -> links added (both directions)
        self._unlinked: dict[str, list[dict]] = {}     # key -> links removed (both directions)
        self._history: dict[str, list[dict]] = {}      # key -> changes made through the API
        self._properties: dict[str, dict] = {}         # 'issue/KEY', 'comment/ID' -> {key: value}
        self._deleted: set[str] = set()
        self._sequence = 0                             # comment and history ids of writes
        self._version = 0                              # moves with every write (search cache)
        self._searches: dict[str, tuple[int, list[str]]] = {}
        self.calls = 0
        if saved:
            self._load(saved)
        else:
            self._save()

    # --- the state file ------------------------------------------------------------------------

    def _read_state(self) -> dict | None:
        if self.state_file is None or not self.state_file.is_file():
            return None
        state = json.loads(self.state_file.read_text(encoding='utf-8'))
        return state if state.get('version') == STATE_VERSION else None

    def _load(self, state: dict) -> None:
        self._next_number = state['next_number']
        self._created = state['created']
        self._fields = state['fields']
        self._comments = state['comments']
        self._links = state['links']
        self._unlinked = state.get('unlinked', {})
        self._history = state['history']
        self._properties = state['properties']
        self._deleted = set(state.get('deleted', ()))
        self._sequence = state['sequence']

    def _save(self) -> None:
        """Write the state file (a temporary file, then a rename: a crash never leaves half of it)."""
        self._version += 1
        if self.state_file is None:
            return
        state = {'version': STATE_VERSION,
                 'generated': {'issues': self.count, 'seed': self.seed,
                               'project_key': self.project_key, 'labels': list(self.labels),
                               'changes_per_issue': self.changes_per_issue,
                               'scrum_history': self.scrum_history.isoformat()
                               if self.scrum_history else None},
                 'next_number': self._next_number, 'created': self._created, 'fields': self._fields,
                 'comments': self._comments, 'links': self._links, 'unlinked': self._unlinked,
                 'history': self._history, 'properties': self._properties,
                 'deleted': sorted(self._deleted), 'sequence': self._sequence}
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.state_file.with_name(self.state_file.name + '.tmp')
        temporary.write_text(json.dumps(state, ensure_ascii=False), encoding='utf-8')
        os.replace(temporary, self.state_file)

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
        return (number is not None and key not in self._deleted
                and (1 <= number <= self.count or key in self._created))

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

    def _generated_links(self, number: int) -> list[dict]:
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

    def issue_type(self, number: int) -> str:
        """The type of AURORA-n: every 50th from the first is an epic, the rest tasks and bugs."""
        if number % EPIC_EVERY == 1:
            return 'Эпик'
        types, weights = zip(*TYPES[:2])
        return self._rng(number).choices(types, weights)[0]

    def summary(self, number: int) -> str:
        rng = self._rng(number, 3)
        return (f'Задача {number}: {rng.choice(("доработать", "проверить", "описать", "починить"))} '
                f'{rng.choice(("отчёт", "форму", "API", "миграцию", "импорт"))}')

    def _generated(self, number: int) -> dict:
        rng = self._rng(number)
        created, updated = self._times(number)
        offset = OFFSETS[number % len(OFFSETS)]
        issue_type = self.issue_type(number)
        sprint_ids = list(SPRINT_SETS[number % len(SPRINT_SETS)])
        epic = None if issue_type == 'Эпик' or number < EPIC_EVERY \
            else self.key(1 + ((number - 1) // EPIC_EVERY) * EPIC_EVERY)
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
        catalog = self.sprint_catalog()
        generated = {
            'key': self.key(number), 'id': str(10000 + number), 'issue_type': issue_type,
            'summary': self.summary(number),
            'description': f'h2. Описание\nСгенерированная задача {number} (seed {self.seed}).',
            'status': STATUSES[rng.randrange(len(STATUSES))],
            'priority': PRIORITIES[rng.randrange(len(PRIORITIES))],
            'assignee': PEOPLE[rng.randrange(len(PEOPLE))], 'reporter': PEOPLE[number % 5],
            'duedate': (start + timedelta(days=14)).isoformat() if number % 3 else None,
            'planned_start': start.isoformat() if number % 2 else None,
            'planned_end': (start + timedelta(days=10)).isoformat() if number % 2 else None,
            'epic_key': epic, 'labels': self._labels(number),
            'sprint': current_sprint_name([catalog[i] for i in sprint_ids]),
            'rank': f'0|i{number:05x}:', 'story_points': (1, 2, 3, 5, 8, None)[number % 6],
            'updated': jira_time(updated, offset), 'created': jira_time(created, offset),
            'links': self._generated_links(number), 'comments': comments, 'attachments': attachments,
            'sprint_ids': sprint_ids,
        }
        if self._sprints is not None and not self.is_scrum(number):
            generated.update(sprint_ids=[], sprint=None)  # the sprints are the scrum issues' own
        elif self._sprints is not None:
            story = self._story(number)
            last = max([moment for moment, *_ in story.changes] + [story.created])
            generated.update(
                status=story.status, sprint_ids=list(story.sprint_ids),
                sprint=current_sprint_name([catalog[i] for i in story.sprint_ids]),
                story_points=story.points, created=jira_time(story.created, offset),
                updated=jira_time(last + timedelta(minutes=5), offset))
        return generated

    def _generated_history(self, number: int, issue: dict) -> list[dict]:
        """``changes_per_issue`` changes between creation and the last update: the workflow's
        last steps to the issue's status, then changes of other fields, each field's chain ending
        in its current value (two changes to a history record, as Jira groups a save)."""
        rng = self._rng(number, 2)
        created, updated = parse_jira_time(issue['created']), parse_jira_time(issue['updated'])
        offset = OFFSETS[(number + 1) % len(OFFSETS)]
        budget = self.changes_per_issue
        steps = list(PATHS.get(issue['status'], ()))[-budget:] if budget else []
        kinds = [FILLERS[(index + number) % len(FILLERS)] for index in range(budget - len(steps))]
        chains = {kind: self._chain(kind, kinds.count(kind), issue, rng) for kind in set(kinds)}
        order = ['status'] * len(steps) + kinds
        rng.shuffle(order)
        position = dict.fromkeys(chains, 0)
        changes, status_index = [], 0
        for kind in order:
            if kind == 'status':
                before, after = steps[status_index]
                status_index += 1
            else:
                before, after = chains[kind][position[kind]]
                position[kind] += 1
            changes.append((kind, before, after))
        records = (len(changes) + 1) // 2
        span = (updated - created).total_seconds()
        moments = sorted(created + timedelta(seconds=int(span * (0.05 + 0.9 * rng.random())))
                         for _ in range(records))
        items = []
        for index, (kind, before, after) in enumerate(changes):
            items.append(self._change_item(
                key=self.key(number), history_id=str(number * 1000 + index // 2), seq=index % 2,
                created=jira_time(moments[index // 2], offset),
                author=PEOPLE[(number + index // 2) % 5], kind=kind, before=before, after=after))
        return items

    def _chain(self, kind: str, count: int, issue: dict, rng: random.Random) -> list[tuple]:
        """``count`` changes of ``kind`` in order, the last one to the issue's current value."""
        if kind == 'flag':
            values = [None, 'Да'] * count
            return [(values[index], values[index + 1]) for index in range(count)]
        current = issue.get(kind)
        if kind == 'assignee':
            pool = list(PEOPLE)
        elif kind == 'priority':
            pool = list(PRIORITIES)
        else:  # planned_start: a date moved forward, or first set
            day = datetime.fromisoformat(current).date() if current else created_day(issue)
            pool = [None] + [(day - timedelta(days=3 * step)).isoformat() for step in range(1, 4)]
        values = [current]
        for _ in range(count):
            values.insert(0, rng.choice([value for value in pool if value != values[0]]))
        return [(values[index], values[index + 1]) for index in range(count)]

    def _change_item(self, *, key: str, history_id: str, seq: int, created: str, author: str | None,
                     kind: str, before, after) -> dict:
        """One history item of ``kind`` (a name of :data:`HISTORY_FIELDS`) as Jira records it:
        ids in ``from``/``to``, names in ``fromString``/``toString``."""
        field_id, field_name = HISTORY_FIELDS[kind]
        if kind == 'status':
            values = (STATUS_IDS.get(before), before, STATUS_IDS.get(after), after)
        elif kind == 'priority':
            values = (PRIORITY_IDS.get(before), before, PRIORITY_IDS.get(after), after)
        elif kind == 'assignee':
            values = (before, display_name(before), after, display_name(after))
        elif kind == 'sprint':
            names = {sprint['id']: sprint['name'] for sprint in self.sprint_catalog().values()}
            values = (', '.join(map(str, before)), ', '.join(names.get(i, str(i)) for i in before),
                      ', '.join(map(str, after)), ', '.join(names.get(i, str(i)) for i in after))
        elif kind == 'labels':
            values = (None, ' '.join(before or ()), None, ' '.join(after or ()))
        else:
            values = (before, before, after, after)
        return {'history_id': history_id, 'seq': seq, 'key': key, 'created': created,
                'author': author, 'field_id': field_id, 'field_name': field_name,
                'from_value': values[0], 'from_string': values[1], 'to_value': values[2],
                'to_string': values[3]}

    # --- the scrum history --------------------------------------------------------------------

    def is_scrum(self, number: int) -> bool:
        """Whether AURORA-n gets the scrum history: a task or bug of the scrum board's project."""
        return (self._sprints is not None and SCRUM_LABEL in self._labels(number)
                and self.issue_type(number) != 'Эпик')

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
        return [self._change_item(key=self.key(number), history_id=str(number * 1000 + index),
                                  seq=0, created=jira_time(moment, offset),
                                  author=PEOPLE[(number + index) % 5], kind=kind, before=before,
                                  after=after)
                for index, (moment, kind, before, after) in enumerate(story.changes)]

    # --- reading ----------------------------------------------------------------------------

    def issue(self, key: str) -> dict:
        """The ISSUE payload of ``key`` (contract §8.1), without ``neighbor``."""
        with self._lock:
            self.calls += 1
            number = self.number(key)
            if key in self._deleted:
                raise JiraError(f'задача {key} не найдена в Jira')
            if key in self._created:
                issue = dict(self._created[key])
            elif number is not None and 1 <= number <= self.count:
                issue = self._generated(number)
            else:
                raise JiraError(f'задача {key} не найдена в Jira')
            issue.update(self._fields.get(key, {}))
            issue['comments'] = list(issue.get('comments', [])) + self._comments.get(key, [])
            removed = self._unlinked.get(key, [])
            issue['links'] = [link for link in list(issue.get('links', [])) + self._links.get(key, [])
                              if link not in removed and self.exists(link['key'])]
            return issue

    def issues(self, keys: list[str]) -> list[dict]:
        """ISSUE payloads of those of ``keys`` that exist."""
        return [self.issue(key) for key in keys if self.exists(key)]

    def history(self, key: str) -> list[dict]:
        """Change-history items of ``key`` (contract §8.2), oldest first."""
        number = self.number(key)
        if not number or number > self.count or key in self._deleted:
            items = []
        elif self.is_scrum(number):
            items = self._story_history(number)
        else:
            items = self._generated_history(number, self._generated(number))
        return items + self._history.get(key, [])

    def all_keys(self) -> list[str]:
        return [key for key in [self.key(n) for n in range(1, self.count + 1)] + list(self._created)
                if key not in self._deleted]

    def search(self, jql: str) -> list[str]:
        """Keys matching ``jql``. Understands ``labels in (…)``, ``labels = X`` and ``key in (…)``
        (the REST server evaluates more of JQL: :mod:`hubweb.demo.fake_jql`)."""
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
        return [key for key in self.all_keys() if wanted & set(self.labels_of(key))]

    def labels_of(self, key: str) -> list[str]:
        """The labels of ``key`` without generating the whole issue (the search's hot path)."""
        if key in self._fields and 'labels' in self._fields[key]:
            return self._fields[key]['labels']
        if key in self._created:
            return self._created[key]['labels']
        return self._labels(self.number(key))

    def cached_search(self, jql: str, evaluate) -> list[str]:
        """``evaluate(jql)``, remembered until the next write (the pages of one search)."""
        with self._lock:
            version, keys = self._searches.get(jql, (None, None))
            if version == self._version:
                return keys
        keys = evaluate(jql)
        with self._lock:
            if len(self._searches) > 64:
                self._searches.clear()
            self._searches[jql] = (self._version, keys)
        return keys

    def sprint_catalog(self) -> dict[int, dict]:
        """Sprint id → the sprint as the boards payload carries it."""
        sprints = [dict(sprint) for sprint in SPRINTS] if self._sprints is None \
            else [sprint.payload() for sprint in self._sprints]
        return {sprint['id']: sprint for sprint in sprints}

    def board_columns(self) -> dict[int, list[dict]]:
        """Board id → its columns (names of statuses), the kanban board with a backlog first."""
        columns = [{'name': 'Открыта', 'statuses': ['Открыта']},
                   {'name': 'В работе', 'statuses': ['В работе', 'На проверке']},
                   {'name': 'Готово', 'statuses': ['Готово', 'Снято']}]
        return {SCRUM_BOARD: columns,
                KANBAN_BOARD: [{'name': 'Бэклог', 'statuses': ['Открыта']}] + columns[1:]}

    def boards(self) -> list[dict]:
        """One scrum board with sprints and one kanban board with a backlog column (contract §8.3)."""
        columns = self.board_columns()
        return [
            {'board_id': SCRUM_BOARD, 'type': 'scrum', 'columns': columns[SCRUM_BOARD],
             'kanban_backlog': None, 'sprints': list(self.sprint_catalog().values())},
            {'board_id': KANBAN_BOARD, 'type': 'kanban', 'columns': columns[KANBAN_BOARD],
             'kanban_backlog': 1, 'sprints': []},
        ]

    # --- attachments ------------------------------------------------------------------------

    def _attachment_content(self, attachment_id: str) -> bytes:
        line = f'Вложение {attachment_id} (seed {self.seed}): сгенерированный файл\n'.encode()
        return line * (1 + int(attachment_id) % 7)

    def attachment(self, attachment_id: str) -> bytes:
        """The content of attachment ``attachment_id``."""
        self.calls += 1
        self.attachment_owner(attachment_id)
        return self._attachment_content(str(int(attachment_id)))

    def attachment_owner(self, attachment_id: str) -> tuple[str, dict]:
        """``(key, attachment)`` of an attachment; JiraError when there is none."""
        if not str(attachment_id).isdigit():
            raise JiraError(f'вложение {attachment_id} не найдено в Jira')
        number = int(attachment_id)
        key = self.key(number)
        if not (1 <= number <= self.count and number % 4 == 0) or not self.exists(key):
            raise JiraError(f'вложение {attachment_id} не найдено в Jira')
        attachment = self._generated(number)['attachments'][0]
        return key, attachment

    @staticmethod
    def sha256(content: bytes) -> str:
        return hashlib.sha256(content).hexdigest()

    # --- writing ----------------------------------------------------------------------------

    def _next_id(self) -> int:
        self._sequence += 1
        return self._sequence

    def _record(self, key: str, author: str, changes: list[tuple[str, object, object]],
                moment: datetime | None = None) -> None:
        """One history record of ``changes`` ``(kind, before, after)`` made by ``author`` now."""
        if not changes:
            return
        history_id = str(9_000_000_000 + self._next_id())
        created = jira_time(moment or datetime.now(timezone.utc), '+0300')
        extra = self._history.setdefault(key, [])
        for seq, (kind, before, after) in enumerate(changes):
            extra.append(self._change_item(key=key, history_id=history_id, seq=seq, created=created,
                                           author=author, kind=kind, before=before, after=after))

    def _check_issue(self, key: str) -> None:
        if not self.exists(key):
            raise JiraError(f'Задача {key} не существует.', 404)

    def create_issue(self, fields: dict, author: str = AGENT_LOGIN) -> str:
        """Create an issue from hub-shaped ``fields`` (``issue_type`` a type name); its key, never
        one handed out before."""
        with self._lock:
            key = self.key(self._next_number)
            self._next_number += 1
            now = jira_time(datetime.now(timezone.utc), '+0300')
            self._created[key] = {
                'key': key, 'id': str(10000 + self.number(key)),
                'issue_type': fields.get('issue_type') or 'Задача',
                'summary': fields.get('summary'), 'description': fields.get('description'),
                'status': 'Открыта', 'priority': fields.get('priority') or 'Средний',
                'assignee': fields.get('assignee'), 'reporter': author,
                'duedate': fields.get('duedate'), 'planned_start': fields.get('planned_start'),
                'planned_end': fields.get('planned_end'), 'epic_key': fields.get('epic_key'),
                'labels': list(fields.get('labels') or []), 'sprint': None, 'rank': None,
                'story_points': None, 'updated': now, 'created': now, 'links': [], 'comments': [],
                'attachments': [], 'sprint_ids': []}
            self._save()
            return key

    def edit_issue(self, key: str, changes: dict, author: str = AGENT_LOGIN) -> None:
        """Change hub-shaped fields of ``key``; each changed one is recorded in its history."""
        with self._lock:
            self._check_issue(key)
            before = self.issue(key)
            changed = {name: value for name, value in changes.items() if before.get(name) != value}
            if not changed:
                return
            self._record(key, author, [(name, before.get(name), value)
                                       for name, value in changed.items()
                                       if name in HISTORY_FIELDS])
            changed['updated'] = jira_time(datetime.now(timezone.utc), '+0300')
            self._fields.setdefault(key, {}).update(changed)
            self._save()

    def add_comment(self, key: str, body: str, author: str = AGENT_LOGIN) -> dict:
        """Add a comment; the comment."""
        with self._lock:
            self._check_issue(key)
            now = jira_time(datetime.now(timezone.utc), '+0300')
            comment = {'id': str(900_000_000 + self._next_id()), 'author': author, 'created': now,
                       'updated': now, 'body': body}
            self._comments.setdefault(key, []).append(comment)
            self._fields.setdefault(key, {})['updated'] = now
            self._save()
            return comment

    def link(self, source: str, target: str, link_type: str) -> bool:
        """Link ``source`` → ``target``; False when that link was already there."""
        with self._lock:
            for key in (source, target):
                self._check_issue(key)
            outward = {'type': link_type, 'direction': 'outward', 'key': target}
            inward = {'type': link_type, 'direction': 'inward', 'key': source}
            if outward in self.issue(source)['links']:
                return False
            for key, link in ((source, outward), (target, inward)):
                removed = self._unlinked.get(key, [])
                if link in removed:
                    removed.remove(link)
                else:
                    self._links.setdefault(key, []).append(link)
            self._save()
            return True

    def unlink(self, source: str, target: str, link_type: str) -> None:
        """Delete the link ``source`` → ``target`` (both ends)."""
        with self._lock:
            for key, link in ((source, {'type': link_type, 'direction': 'outward', 'key': target}),
                              (target, {'type': link_type, 'direction': 'inward', 'key': source})):
                added = self._links.get(key, [])
                if link in added:
                    added.remove(link)
                else:
                    self._unlinked.setdefault(key, []).append(link)
            self._save()

    def delete_issue(self, key: str) -> None:
        """Delete ``key``: it no longer exists, nor do links to it."""
        with self._lock:
            self._check_issue(key)
            self._deleted.add(key)
            self._save()

    def transitions(self, key: str) -> list[str]:
        """Statuses reachable from ``key``'s status (this workflow: every other status)."""
        status = self.issue(key)['status']
        return [name for name in STATUSES if name != status]

    def transition(self, key: str, status: str, author: str = AGENT_LOGIN) -> str:
        """Move ``key`` to ``status``; returns the status it had."""
        with self._lock:
            before = self.issue(key)['status']
            if status not in self.transitions(key):
                raise JiraError(f'переход в статус «{status}» недоступен', 400)
            now = datetime.now(timezone.utc)
            self._record(key, author, [('status', before, status)], now)
            fields = self._fields.setdefault(key, {})
            fields.update(status=status, updated=jira_time(now, '+0300'))
            self._save()
            return before

    def property(self, entity: str, name: str):
        """An entity property (``entity``: ``issue/KEY`` or ``comment/ID``), None when unset."""
        with self._lock:
            return self._properties.get(entity, {}).get(name)

    def set_property(self, entity: str, name: str, value) -> None:
        with self._lock:
            self._properties.setdefault(entity, {})[name] = value
            self._save()

    def comment_owner(self, comment_id: str) -> str | None:
        """The key of the issue a comment belongs to (comments added through the API only)."""
        with self._lock:
            for key, comments in self._comments.items():
                if any(comment['id'] == comment_id for comment in comments):
                    return key
            number = int(comment_id) // 10 if comment_id.isdigit() else 0
            if 1 <= number <= self.count and any(
                    comment['id'] == comment_id for comment in self._generated(number)['comments']):
                return self.key(number)
            return None

    def created_issues(self) -> dict[str, dict]:
        """Issues created through the API, by key."""
        with self._lock:
            return {key: dict(issue) for key, issue in self._created.items()}

    def added_comments(self) -> dict[str, list[dict]]:
        with self._lock:
            return {key: list(comments) for key, comments in self._comments.items()}


def display_name(login: str | None) -> str | None:
    """The display name Jira shows for ``login`` (the login itself for an unknown account)."""
    if login is None:
        return None
    return USERS.get(login, (login, None))[0]


def created_day(issue: dict):
    return parse_jira_time(issue['created']).date()


__all__ = ['FakeJira', 'JiraError', 'jira_time', 'parse_jira_time', 'scrum_sprints',
           'display_name', 'current_sprint_name', 'SCRUM_BOARD', 'KANBAN_BOARD', 'DEFAULT_LABELS',
           'OUTSIDE_LABEL', 'SCRUM_LABEL', 'SPRINT_FIELD_ID', 'FIELD_IDS', 'USERS', 'AGENT_LOGIN',
           'STATUSES', 'PRIORITIES', 'STATUS_IDS', 'PRIORITY_IDS', 'TYPE_IDS', 'LINK_TYPES',
           'FLAG_FIELD_ID']
