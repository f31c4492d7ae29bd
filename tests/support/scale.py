"""A Jira mirror of any size for the scale benchmark (issue 13), written straight into a hub file.

:class:`ScaleJira` describes the mirror: ``AURORA-1`` … ``AURORA-N`` plus a fiftieth as many
``ORBIT-n`` issues of another Jira project (reachable only as link targets: neighbours), five hub
projects with very different shares of the mirror (:data:`PROJECTS`) and some issues in none,
epics, ~2 outward links per issue (some across projects, some to ``ORBIT``, a few to keys outside
the mirror), ~2 comments, attachments on ~30 % of issues, sprints of two scrum boards and
``changes_per_issue`` change rows per ``AURORA`` issue (status, assignee, a date field, and the
issue's sprints entering through «Sprint» changes: the reports of issue 21 have a history to
read). Text is Russian-looking: summaries of ~8 words, descriptions of 50–150 and comments of
10–40 words drawn with a Zipf law from a vocabulary of real words and a long tail of made-up ones,
so the full-text index has a realistic shape. A few :data:`RARE_WORDS` sit in :data:`RARE_HITS`
issues whatever the size (a selective query), :data:`COMMON_WORD` in about half of the
descriptions (a common one).

Every issue is a pure function of ``(seed, number, revision)``: :meth:`ScaleJira.issue` gives the
ISSUE payload of contract §8.1 and :meth:`ScaleJira.history` the items of §8.2, so a benchmark can
re-send any stored issue (``revision=1``: new status, one more comment, new history records).

:func:`build_hub` creates the hub with ``hublib`` (settings, projects, boards through their public
functions), writes the mirror tables with ``sqlite3.executemany`` in large transactions, with the
secondary indexes of those tables dropped meanwhile and created again afterwards (the same SQL,
so the schema is the hub's to the byte), and lets ``hublib.startup.rebuild_derived`` build the
slices and the full-text index. 200,000 issues take a few minutes on 2 cores.

:func:`state_rows` turns ISSUE payloads into the rows the hub stores and the ``RAW_*`` statements
write them: the builder and the raw ``executemany`` baseline of the benchmark share them.
"""
from __future__ import annotations

import bisect
import collections
import functools
import itertools
import json
import random
import sqlite3
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from hublib import history, mirror, open_hub, projects, settings
from hublib.fieldmap import logical_field
from hublib.startup import rebuild_derived

PROJECT_KEY = 'AURORA'
ORBIT = 'ORBIT'
OUTSIDE = 'LEGACY'  # links to keys of a project that is not mirrored at all
FETCHED_AT = '2026-11-30T10:00:00+00:00'
FIELD_IDS = {'planned_start': 'customfield_10015', 'planned_end': 'customfield_10016'}
# Not in FIELD_IDS: the reports know a sprint change by the field's name «Sprint» (contract §17).
SPRINT_FIELD_ID = 'customfield_10020'


@dataclass(frozen=True)
class ScaleProject:
    label: str
    name: str
    share: float           # of the AURORA issues carrying this label as their main one
    board_id: int | None
    board_type: str | None


PROJECTS = (
    ScaleProject('AWPCA', 'АРМ КА', 0.40, 4216, 'scrum'),
    ScaleProject('ORION', 'Орион', 0.25, 4217, 'kanban'),
    ScaleProject('VEGA', 'Вега', 0.15, 4218, 'scrum'),
    ScaleProject('LYRA', 'Лира', 0.10, None, None),
    ScaleProject('TINY', 'Малый', 0.005, 4219, 'kanban'),
)
BIGGEST, SMALLEST = 'AWPCA', 'TINY'
TINY_EVERY = 200           # TINY is exactly every 200th issue: present even in a tiny mirror
EPIC_EVERY = 40            # AURORA-40, -80, … are epics
RARE_HITS = 20             # issues holding each rare word, whatever the size of the mirror
RARE_WORDS = ('лемниската', 'ёжевидный')   # in a description / in a comment
COMMON_WORD = 'данных'
EXTRA_LABELS = ('техдолг', 'срочно', 'регресс')
STATUSES = ('Открыта', 'В работе', 'На проверке', 'Готово', 'Снято')
DONE_STATUSES = ('Готово', 'Снято')
PEOPLE = ('ivanov', 'petrov', 'sidorova', 'kuznetsov', 'smirnova', 'volkova', 'orlov', None)
LINK_TYPES = ('Blocks', 'Relates', 'Relates', 'Duplicate', 'Cloners')
VERBS = ('доработать', 'проверить', 'исправить', 'описать', 'добавить', 'удалить', 'обновить',
         'перенести', 'согласовать', 'настроить', 'выгрузить', 'рассчитать', 'отобразить')

START = 1_640_995_200      # 2022-01-01T00:00:00Z: the mirror's issues were created over 5 years
SPAN = 5 * 365 * 86_400
SPRINT_SECONDS = 14 * 86_400
SPRINT_BOARDS = {4216: 1000, 4218: 2000}   # scrum board -> first sprint id
JIRA_OFFSET = 3 * 3600     # Jira writes times in +0300

# --- the vocabulary ------------------------------------------------------------------------------

_HEAD = (
    'и в на для по с не к при из от до что как это все или после без через также '
    + COMMON_WORD + ' задача отчёт форма поле значение справочник пользователь роль доступ '
    'интеграция выгрузка загрузка сервис модуль система журнал ошибка проверка расчёт период '
    'склад остатков документ договор заявка счёт платёж клиент поставщик сотрудник подразделение '
    'регламент требование описание согласование версия релиз сборка тест сценарий интерфейс '
    'кнопка экран таблица колонка фильтр сортировка поиск запрос ответ сообщение уведомление '
    'письмо шаблон настройка параметр конфигурация сервер база индекс миграция схема протокол '
    'формат файл вложение архив копия доска спринт эпик история комментарий статус приоритет '
    'исполнитель автор срок дата неделя месяц квартал год лимит очередь пакет команда агент '
    'зеркало проект метка ключ ссылка связь учёт закупка накладная акт сверка реестр карточка '
    'номенклатура единица количество сумма цена налог скидка отгрузка приёмка инвентаризация '
    'новый старый основной дополнительный обязательный текущий предыдущий следующий единый '
    'общий отдельный ежемесячный ежедневный корректный неверный пустой полный доработать '
    'проверить исправить описать добавить удалить обновить перенести согласовать настроить '
    'выгрузить рассчитать отобразить реализовать протестировать подготовить уточнить API JSON '
    'SQL REST HTTP XML CSV Excel PDF').split()
_SYLLABLES = tuple(c + v for c in 'бвгдзклмнпрстхч' for v in 'аеиоуыя') + ('ст', 'нн', 'пр', 'тр')
_ENDINGS = ('', '', 'ов', 'ый', 'ая', 'ие', 'ами', 'ость', 'ение', 'ка')
TAIL_WORDS = 20_000
STREAM_WORDS = 1 << 22     # the drawn text every description and comment is a slice of


@functools.lru_cache(maxsize=1)
def _vocabulary() -> tuple[str, ...]:
    rng = random.Random(20261130)  # fixed: the same words whatever the seed of the mirror
    words, seen = list(_HEAD), set(_HEAD) | set(RARE_WORDS)
    while len(words) < len(_HEAD) + TAIL_WORDS:
        word = ''.join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))) + rng.choice(_ENDINGS)
        if word not in seen:
            seen.add(word)
            words.append(word)
    return tuple(words)


_M64 = (1 << 64) - 1


def _mix(value: int) -> int:
    """splitmix64: a cheap, well-spread hash of an integer (labels and links need no Random)."""
    value = (value + 0x9E3779B97F4A7C15) & _M64
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _M64
    return value ^ (value >> 31)


def _utc(seconds: int) -> str:
    return time.strftime('%Y-%m-%dT%H:%M:%S+00:00', time.gmtime(seconds))


def _jira(seconds: int) -> str:
    return time.strftime('%Y-%m-%dT%H:%M:%S.000+0300', time.gmtime(seconds + JIRA_OFFSET))


class ScaleJira:
    """The generated Jira behind a benchmark mirror of ``issues`` AURORA issues."""

    def __init__(self, issues: int, *, seed: int = 13, changes_per_issue: int = 10):
        if issues < 1:
            raise ValueError('issues must be at least 1')
        self.count = issues
        self.seed = seed
        self.changes_per_issue = changes_per_issue
        self.orbit_count = max(1, issues // 50)
        self.rare_stride = max(1, issues // RARE_HITS)
        words = _vocabulary()
        weights = list(itertools.accumulate(1.0 / (rank + 2) for rank in range(len(words))))
        # Texts are slices of one drawn stream: ~3 µs per text instead of ~45 µs of choices().
        self.stream_size = min(STREAM_WORDS, max(1 << 16, issues * 64))
        self.stream = random.Random(seed).choices(words, cum_weights=weights, k=self.stream_size)
        # Main label of each AURORA issue: cumulative shares of every project but TINY (which is
        # exactly every TINY_EVERY-th issue), the rest in no project.
        others = [p for p in PROJECTS if p.label != SMALLEST]
        self._bounds = [int(bound / (1 - PROJECTS[-1].share) * 2 ** 64) for bound in
                        itertools.accumulate(p.share for p in others)]
        self._bucket_labels = [p.label for p in others] + [None]
        self._sprints = {board: self._board_sprints(board, first) for board, first in
                         SPRINT_BOARDS.items()}
        self._sprint_names = {sprint['id']: sprint['name'] for board in self._sprints.values()
                              for sprint in board}

    # --- keys and labels -------------------------------------------------------------------------

    def keys(self) -> list[str]:
        """Every key of the mirror: AURORA-1 … AURORA-N, then ORBIT-1 … ORBIT-M."""
        return ([f'{PROJECT_KEY}-{n}' for n in range(1, self.count + 1)]
                + [f'{ORBIT}-{n}' for n in range(1, self.orbit_count + 1)])

    def _unit(self, number: int, salt: int) -> float:
        return _mix((self.seed << 40) ^ (salt << 32) ^ number) / 2.0 ** 64

    def main_label(self, number: int) -> str | None:
        """The hub project AURORA-``number`` belongs to first (None: in no project)."""
        if number % TINY_EVERY == 3:
            return SMALLEST
        return self._bucket_labels[bisect.bisect_right(
            self._bounds, _mix((self.seed << 40) ^ (1 << 32) ^ number))]

    def labels(self, number: int) -> list[str]:
        """Jira labels of AURORA-``number``: its project, sometimes a second one, other labels."""
        main = self.main_label(number)
        labels = [main] if main else []
        if self._unit(number, 2) < 0.03:  # own issue of two projects
            other = PROJECTS[int(self._unit(number, 3) * 4)].label
            if other not in labels:
                labels.append(other)
        if self._unit(number, 4) < 0.10:
            labels.append(EXTRA_LABELS[int(self._unit(number, 5) * len(EXTRA_LABELS))])
        return labels

    # --- text ----------------------------------------------------------------------------------------

    def _words(self, rng: random.Random, low: int, high: int) -> list[str]:
        size = rng.randint(low, high)
        start = rng.randrange(self.stream_size - size)
        return self.stream[start:start + size]

    def _summary(self, rng: random.Random, number: int) -> str:
        return f'{rng.choice(VERBS)} ' + ' '.join(self._words(rng, 6, 8))

    def _description(self, rng: random.Random, number: int) -> str:
        words = self._words(rng, 50, 150)
        if number % self.rare_stride == 7 % self.rare_stride:
            words = [*words[:10], RARE_WORDS[0], *words[10:]]
        return 'h2. Описание\n' + ' '.join(words)

    # --- the ISSUE payload ----------------------------------------------------------------------------

    def created_at(self, number: int) -> int:
        return START + SPAN * number // (self.count + 1) + int(self._unit(number, 6) * 3600)

    def epic_of(self, number: int) -> str | None:
        """An epic near AURORA-``number``, of its own project when one is close enough."""
        if number % EPIC_EVERY == 0 or number < EPIC_EVERY or self._unit(number, 7) >= 0.85:
            return None
        main = self.main_label(number)
        newest = number // EPIC_EVERY * EPIC_EVERY
        for epic in range(newest, max(0, newest - 8 * EPIC_EVERY), -EPIC_EVERY):
            if self.main_label(epic) == main:
                return f'{PROJECT_KEY}-{epic}'
        return f'{PROJECT_KEY}-{newest}'

    def _links(self, number: int) -> list[dict]:
        main = self.main_label(number)
        links, targets = [], set()
        for index in range((1, 2, 2, 3)[_mix(number * 7 + self.seed) % 4]):
            u = self._unit(number, 10 + index)
            if u < 0.04:
                target = f'{ORBIT}-{1 + _mix(number * 31 + index) % self.orbit_count}'
            elif u < 0.05:
                target = f'{OUTSIDE}-{1 + _mix(number * 37 + index) % 5000}'
            else:
                target = None
                for attempt in range(8):  # mostly the own project, sometimes across projects
                    h = _mix(number * 1009 + index * 101 + attempt)
                    other = number + 1 + h % 400 - 200
                    if 1 <= other <= self.count and other != number and (
                            u > 0.85 or self.main_label(other) == main):
                        target = f'{PROJECT_KEY}-{other}'
                        break
            if target and target not in targets:
                targets.add(target)
                links.append({'type': LINK_TYPES[_mix(number + index) % len(LINK_TYPES)],
                              'direction': 'outward', 'key': target})
        return links

    def _board_sprints(self, board: int, first: int) -> list[dict]:
        sprints = []
        for index in range(SPAN // SPRINT_SECONDS + 2):
            start = START + index * SPRINT_SECONDS
            end = start + SPRINT_SECONDS - 86_400
            state = 'closed' if end < START + SPAN - SPRINT_SECONDS else (
                'active' if start < START + SPAN else 'future')
            sprints.append({'id': first + index, 'name': f'Спринт {index + 1}', 'state': state,
                            'start_date': _jira(start), 'end_date': _jira(end),
                            'complete_date': _jira(end + 3600) if state == 'closed' else None,
                            'goal': f'Цель спринта {index + 1}'})
        return sprints

    def _sprint_ids(self, number: int, labels: list[str], created: int) -> list[int]:
        project = next((p for p in PROJECTS if p.label in labels and p.board_id in SPRINT_BOARDS),
                       None)
        u = self._unit(number, 8)
        if project is None or u < 0.2:
            return []
        first = SPRINT_BOARDS[project.board_id]
        index = min((created - START) // SPRINT_SECONDS + 1, SPAN // SPRINT_SECONDS + 1)
        return [first + index, first + index + 1] if u > 0.9 and index <= SPAN // SPRINT_SECONDS \
            else [first + index]

    def issue(self, key: str, revision: int = 0) -> dict:
        """The ISSUE payload of ``key`` (contract §8.1); ``revision`` > 0: as changed later in Jira."""
        project, _, number_text = key.partition('-')
        number = int(number_text)
        if project == ORBIT:
            return self._orbit(number, revision)
        rng = random.Random(self.seed * 1_000_003 + number)
        created = self.created_at(number)
        updated = created + rng.randrange(3600, 200 * 86_400)
        labels = self.labels(number)
        issue_type = 'Эпик' if number % EPIC_EVERY == 0 else ('Ошибка' if rng.random() < 0.2
                                                               else 'Задача')
        comments = [self._comment(rng, number, index, created) for index in
                    range((0, 1, 2, 2, 3, 4)[rng.randrange(6)])]
        if number % self.rare_stride == 11 % self.rare_stride:
            comments.append({**self._comment(rng, number, 9, created),
                             'body': f'Проверено: {RARE_WORDS[1]} случай воспроизводится'})
        attachments = [{
            'id': str(number * 10 + index), 'filename': f'приложение-{number}-{index}.pdf',
            'size': 1000 + _mix(number + index) % 5_000_000, 'mime_type': 'application/pdf',
            'author': PEOPLE[(number + index) % 7], 'created': _jira(created + 600 * (index + 1)),
        } for index in range(self._attachment_count(number))]
        sprint_ids = self._sprint_ids(number, labels, created)
        status = STATUSES[rng.randrange(len(STATUSES))]
        summary, description = self._summary(rng, number), self._description(rng, number)
        if revision:
            status = STATUSES[(STATUSES.index(status) + revision) % len(STATUSES)]
            updated = START + SPAN + revision * 86_400 + number % 86_400
            later = random.Random(self.seed * 7_000_003 + number * 8 + revision)
            comments.append(self._comment(later, number, 5 + revision, updated - 60))
        return {
            'key': key, 'id': str(100_000 + number), 'issue_type': issue_type,
            'summary': summary, 'description': description, 'status': status,
            'priority': ('Высокий', 'Средний', 'Средний', 'Низкий')[rng.randrange(4)],
            'assignee': PEOPLE[rng.randrange(len(PEOPLE))], 'reporter': PEOPLE[number % 7],
            'duedate': time.strftime('%Y-%m-%d', time.gmtime(created + 30 * 86_400))
            if number % 3 else None,
            'planned_start': time.strftime('%Y-%m-%d', time.gmtime(created + 86_400))
            if number % 2 else None,
            'planned_end': time.strftime('%Y-%m-%d', time.gmtime(created + 15 * 86_400))
            if number % 2 else None,
            'epic_key': self.epic_of(number), 'labels': labels,
            'sprint': self._sprint_names[sprint_ids[-1]] if sprint_ids else None,
            'rank': f'0|i{number:07x}:', 'story_points': (1, 2, 3, 5, 8, None)[number % 6],
            'updated': _jira(updated), 'created': _jira(created),
            'neighbor': not any(p.label in labels for p in PROJECTS),
            'links': self._links(number), 'comments': comments, 'attachments': attachments,
            'sprint_ids': sprint_ids,
        }

    def _attachment_count(self, number: int) -> int:
        u = self._unit(number, 9)
        return 0 if u >= 0.30 else (2 if u < 0.08 else 1)

    def _comment(self, rng: random.Random, number: int, index: int, after: int) -> dict:
        moment = after + (index + 1) * 3600 + rng.randrange(86_400)
        return {'id': str(number * 10 + index), 'author': PEOPLE[(number + index) % 7],
                'created': _jira(moment), 'updated': _jira(moment),
                'body': ' '.join(self._words(rng, 10, 40))}

    def _orbit(self, number: int, revision: int) -> dict:
        rng = random.Random(self.seed * 2_000_003 + number)
        created = START + SPAN * number // (self.orbit_count + 1)
        partner = 1 + (number * 7) % self.orbit_count
        return {
            'key': f'{ORBIT}-{number}', 'id': str(900_000_000 + number), 'issue_type': 'Задача',
            'summary': self._summary(rng, number), 'description': self._description(rng, 0),
            'status': STATUSES[(rng.randrange(len(STATUSES)) + revision) % len(STATUSES)],
            'priority': 'Средний', 'assignee': PEOPLE[rng.randrange(len(PEOPLE))],
            'reporter': 'orlov', 'duedate': None, 'planned_start': None, 'planned_end': None,
            'epic_key': None, 'labels': [], 'sprint': None, 'rank': None, 'story_points': None,
            'updated': _jira(created + 86_400 * (1 + revision)), 'created': _jira(created),
            'neighbor': True,
            'links': [] if partner == number else [
                {'type': 'Relates', 'direction': 'outward', 'key': f'{ORBIT}-{partner}'}],
            'comments': [self._comment(rng, number, index, created) for index in
                         range(rng.randrange(3))],
            'attachments': [], 'sprint_ids': [],
        }

    # --- history -------------------------------------------------------------------------------------

    def _changes(self, number: int, revision: int) -> Iterator[tuple]:
        """(history_id, seq, key, seconds, author, field_id, field_name, from, to) of an issue."""
        key = f'{PROJECT_KEY}-{number}'
        records = (self.changes_per_issue + 1) // 2
        # Fixed-width ids that grow with the issue: the primary key index is appended to.
        base = 1_000_000_000 + (number * records if not revision
                                else 4_000_000_000 + (number * 16 + revision) * records)
        moment = self.created_at(number) + (SPAN + revision * 86_400 if revision else 0)
        step = _mix(number * 13 + self.seed)
        # The issue's sprints enter through its first «Флажок» rows (the row count stays
        # changes_per_issue): '' → 'k', then 'k' → 'k, k+1' for one carried over (issue 21).
        sprints = [] if revision else self._sprint_ids(number, self.labels(number),
                                                       self.created_at(number))
        entered = 0
        for index in range(self.changes_per_issue):
            history, seq = divmod(index, 2)
            if seq == 0:
                step = _mix(step)
                moment += 3600 + step % (5 * 86_400)
            kind = (index + number) % 4
            if kind == 0:
                field = ('status', 'Status', STATUSES[index % 5], STATUSES[(index + 1) % 5])
            elif kind == 1:
                field = ('assignee', 'Assignee', PEOPLE[index % 7], PEOPLE[(index + 2) % 7])
            elif kind == 2:
                day = time.strftime('%Y-%m-%d', time.gmtime(moment))
                field = ('customfield_10015', 'Плановое начало', None, day)
            elif entered < len(sprints):
                before = ', '.join(map(str, sprints[:entered])) or None
                entered += 1
                field = (SPRINT_FIELD_ID, 'Sprint', before, ', '.join(map(str, sprints[:entered])))
            else:
                field = (None, 'Флажок', None, 'Да')
            yield (str(base + history), seq, key, moment, PEOPLE[(number + history) % 7], *field)

    def history(self, key: str, revision: int = 0) -> list[dict]:
        """History items of ``key`` (contract §8.2); ``revision`` > 0: records added later."""
        project, _, number = key.partition('-')
        if project != PROJECT_KEY:
            return []
        return [{'history_id': history_id, 'seq': seq, 'key': key, 'created': _jira(moment),
                 'author': author, 'field_id': field_id, 'field_name': field_name,
                 'from_value': before, 'from_string': before, 'to_value': after, 'to_string': after}
                for history_id, seq, key, moment, author, field_id, field_name, before, after
                in self._changes(int(number), revision)]

    def change_rows(self, number: int, revision: int = 0) -> list[tuple]:
        """``issue_change`` rows of AURORA-``number`` (:data:`CHANGE_COLUMNS`), as the hub stores
        the items of :meth:`history` (``at`` in UTC, the logical field)."""
        rows, last, at, created = [], None, None, None
        for history_id, seq, key, moment, author, field_id, field_name, before, after \
                in self._changes(number, revision):
            if moment != last:  # the two fields of a record share their time
                last, at, created = moment, _utc(moment), _jira(moment)
            rows.append((history_id, seq, key, at, created, author,
                         _field(field_id, field_name), field_id, field_name, before, before,
                         after, after, FETCHED_AT))
        return rows

    # --- boards --------------------------------------------------------------------------------------

    def boards(self) -> list[dict]:
        """Boards of the projects (contract §8.3): columns, and sprints of the scrum ones."""
        columns = [{'name': 'К работе', 'statuses': ['Открыта']},
                   {'name': 'В работе', 'statuses': ['В работе']},
                   {'name': 'Проверка', 'statuses': ['На проверке']},
                   {'name': 'Готово', 'statuses': list(DONE_STATUSES)}]
        return [{'board_id': p.board_id, 'type': p.board_type, 'columns': columns,
                 'kanban_backlog': 1 if p.board_type == 'kanban' else None,
                 'sprints': self._sprints.get(p.board_id, [])}
                for p in PROJECTS if p.board_id is not None]


_FIELDS: dict[tuple, str | None] = {}


def _field(field_id: str | None, field_name: str | None) -> str | None:
    key = (field_id, field_name)
    if key not in _FIELDS:
        _FIELDS[key] = logical_field(field_id, field_name, FIELD_IDS)
    return _FIELDS[key]


# --- rows and raw statements ----------------------------------------------------------------------

CHANGE_COLUMNS = ('history_id', 'seq', 'key', 'at', 'created', 'author', 'field', 'field_id',
                  'field_name', 'from_value', 'from_string', 'to_value', 'to_string', 'fetched_at')

# The hub's own statements (hublib.mirror, hublib.history): the builder and the raw baseline of the
# benchmark write exactly what ingest writes, row for row.
RAW_INSERT_CHANGE = history.INSERT_CHANGE
RAW_DELETE_BY_KEY = {model._meta.table_name: sql for model, sql in mirror.DELETE_BY.items()}


def state_rows(issues: Iterable[dict], fetched_at: str = FETCHED_AT) -> dict[str, list[tuple]]:
    """The rows the hub stores for a page of ISSUE payloads, per table (links: outward only, as
    :class:`ScaleJira` sends them; times of comments and attachments normalized by ``mirror.utc``)."""
    rows: dict[str, list[tuple]] = {'issue': [], 'issue_link': [], 'issue_comment': [],
                                    'issue_attachment': [], 'issue_sprint': []}
    utc = mirror.utc
    for issue in issues:
        key = issue['key']
        points = issue['story_points']
        rows['issue'].append((
            key, issue['id'], issue['issue_type'], issue['summary'], issue['description'],
            issue['status'], issue['priority'], issue['assignee'], issue['reporter'],
            issue['duedate'], issue['planned_start'], issue['planned_end'], issue['epic_key'],
            json.dumps(issue['labels'], ensure_ascii=False), issue['sprint'], issue['rank'],
            float(points) if points is not None else None, issue['updated'], issue['created'],
            1 if issue['neighbor'] else 0, fetched_at))
        rows['issue_link'].extend((key, link['key'], link['type']) for link in issue['links'])
        rows['issue_comment'].extend(
            (key, c['id'], c['author'], c['created'], c['updated'], c['body'], utc(c['created']))
            for c in issue['comments'])
        rows['issue_attachment'].extend(
            (a['id'], key, a['filename'], a['size'], a['mime_type'], a['author'], a['created'],
             utc(a['created'])) for a in issue['attachments'])
        rows['issue_sprint'].extend((key, sprint) for sprint in issue['sprint_ids'])
    return rows


RAW_INSERT = {'issue': mirror.UPSERT_ISSUE, 'issue_link': mirror.INSERT_LINK,
              'issue_comment': mirror.INSERT_COMMENT, 'issue_attachment': mirror.INSERT_ATTACHMENT,
              'issue_sprint': mirror.INSERT_SPRINT}
BULK_TABLES = ('issue', 'issue_link', 'issue_comment', 'issue_attachment', 'issue_sprint',
               'issue_change')


# --- building a hub ----------------------------------------------------------------------------------
# Generating rows costs more than SQLite takes to write them, so worker processes generate chunks
# (each its own ScaleJira of the same parameters) while this process writes them, in key order.

_WORKER: dict = {}


def _worker_jira(spec: tuple[int, int, int]) -> ScaleJira:
    if _WORKER.get('spec') != spec:
        issues, seed, changes_per_issue = spec
        _WORKER.update(spec=spec, jira=ScaleJira(issues, seed=seed,
                                                 changes_per_issue=changes_per_issue))
    return _WORKER['jira']


def _issue_chunk(spec: tuple[int, int, int], keys: list[str]) -> dict[str, list[tuple]]:
    jira = _worker_jira(spec)
    return state_rows([jira.issue(key) for key in keys])


def _change_chunk(spec: tuple[int, int, int], numbers: range) -> list[tuple]:
    jira = _worker_jira(spec)
    return [row for number in numbers for row in jira.change_rows(number)]


def _in_order(pool: ProcessPoolExecutor | None, function: Callable, spec: tuple,
              chunks: Iterable, ahead: int = 4) -> Iterator:
    """``function(spec, chunk)`` of every chunk, in order; at most ``ahead`` chunks in flight."""
    if pool is None:
        _WORKER.clear()
        yield from (function(spec, chunk) for chunk in chunks)
        return
    pending: collections.deque = collections.deque()
    for chunk in chunks:
        pending.append(pool.submit(function, spec, chunk))
        if len(pending) >= ahead:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def _chunks(items, size: int) -> Iterator:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def build_hub(data_dir: str | Path, jira: ScaleJira, *, workers: int = 2, chunk: int = 5_000,
              log: Callable[[str], None] = lambda message: None) -> dict[str, float]:
    """Create a hub in ``data_dir`` holding ``jira``'s whole mirror; seconds of each phase.

    ``workers`` processes generate the rows (0: this process alone). The directory must not hold
    a hub yet.
    """
    data_dir = Path(data_dir)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    hub = open_hub(data_dir)
    try:
        if hub.opened_at_version is not None:
            raise ValueError(f'{data_dir} already holds a hub')
        settings.update_settings(hub, {'project_key': PROJECT_KEY, 'field_ids': FIELD_IDS})
        for project in PROJECTS:
            projects.create_project(hub, project.label, project.name, project.board_id)
        mirror.ingest_boards(hub, 'jira', None, jira.boards())
    finally:
        hub.close()
    spec = (jira.count, jira.seed, jira.changes_per_issue)
    pool = ProcessPoolExecutor(workers) if workers else None
    connection = sqlite3.connect(str(data_dir / 'hub.sqlite'), isolation_level=None)
    try:
        # A bulk load that nobody reads meanwhile: no journal, no sync, a big page cache; the
        # file goes back to WAL (the hub's mode) at the end.
        for pragma in ('journal_mode = OFF', 'synchronous = OFF', 'cache_size = -1048576',
                       'threads = 2'):
            connection.execute(f'PRAGMA {pragma}')
        indexes = connection.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
            f'AND tbl_name IN ({", ".join("?" * len(BULK_TABLES))})', BULK_TABLES).fetchall()
        for name, _ in indexes:
            connection.execute(f'DROP INDEX "{name}"')
        mark = time.perf_counter()
        keys = jira.keys()
        for done, rows in enumerate(_in_order(pool, _issue_chunk, spec, _chunks(keys, chunk)), 1):
            connection.execute('BEGIN')
            for table, statement in RAW_INSERT.items():
                connection.executemany(statement, rows[table])
            connection.execute('COMMIT')
            if done % 20 == 0:
                log(f'  {min(done * chunk, len(keys)):,} issues: {time.perf_counter() - mark:.0f} s')
        timings['issues'] = time.perf_counter() - mark
        mark = time.perf_counter()
        numbers = range(1, jira.count + 1)
        for done, rows in enumerate(_in_order(pool, _change_chunk, spec, _chunks(numbers, chunk)), 1):
            connection.execute('BEGIN')
            connection.executemany(RAW_INSERT_CHANGE, rows)
            connection.execute('COMMIT')
            if done % 20 == 0:
                log(f'  changes of {min(done * chunk, jira.count):,} issues: '
                    f'{time.perf_counter() - mark:.0f} s')
        timings['changes'] = time.perf_counter() - mark
        mark = time.perf_counter()
        for _, sql in indexes:
            connection.execute(sql)
        timings['indexes'] = time.perf_counter() - mark
        log(f'  indexes: {timings["indexes"]:.0f} s')
        connection.execute('PRAGMA journal_mode = WAL')
    finally:
        connection.close()
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    mark = time.perf_counter()
    hub = open_hub(data_dir)
    try:
        rebuild_derived(hub)
        hub.db.execute_sql('PRAGMA wal_checkpoint(TRUNCATE)')
    finally:
        hub.close()
    timings['derived'] = time.perf_counter() - mark
    log(f'  slices and full-text index: {timings["derived"]:.0f} s')
    timings['total'] = time.perf_counter() - started
    return timings


__all__ = ['ScaleJira', 'ScaleProject', 'PROJECTS', 'BIGGEST', 'SMALLEST', 'RARE_WORDS', 'RARE_HITS',
           'COMMON_WORD', 'FETCHED_AT', 'FIELD_IDS', 'build_hub', 'state_rows', 'RAW_INSERT',
           'RAW_INSERT_CHANGE', 'RAW_DELETE_BY_KEY', 'CHANGE_COLUMNS']
