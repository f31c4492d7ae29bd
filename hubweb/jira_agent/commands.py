"""What the agent does for each command type (docs/agent.md, docs/agent-protocol.md §3).

Reads push what they read to the hub page by page; writes look, on a redelivery, for what an
earlier delivery of the same command already did in Jira before they do it (nothing twice):

- an issue or a comment the agent creates carries the entity property ``sdlc-hub`` =
  ``{"command_id": N}`` (Cloud: in the create request itself; Data Center: set right after it);
- ``ensure_issue`` delivered again searches the issues this Jira account created in the project
  (newest first, by summary) and reads their property; Jira's search index may lag behind a
  creation by a few seconds, so when nothing is found it waits ``index_lag`` seconds and looks
  once more before creating (JQL cannot search a property that no Jira app has declared for
  indexing, so ``issue.property[sdlc-hub]`` is not used);
- ``add_comment`` delivered again reads the issue's comments (no index involved) and the property
  of those by this account with the same text;
- ``ensure_link`` is done when the source already has a link of that type to the target;
- ``transition`` to the status the issue already has is ``confirmed_by_state``.
"""
from __future__ import annotations

import hashlib
import logging
import tempfile
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Iterator

from . import mapping
from .clock import Clock
from .hub import HubClient
from .jira import JiraAuthError, JiraClient, JiraError

log = logging.getLogger('hubweb.jira_agent')

STATE_PAGE = 100          # issues per POST /agent/state
HISTORY_PAGE = 1000       # items per POST /agent/history
KEYS_PER_QUERY = 100      # keys per ``key in (…)``
FIND_PAGES = 5            # pages of recent issues a redelivered ensure_issue looks through
FIND_WINDOW = '-30d'      # how far back it looks
MEMORY_LIMIT = 16 << 20   # an attachment larger than this is spooled to a temporary file


class CommandFailed(Exception):
    """The command cannot be done as asked: reported ``failed`` with this (Russian) message."""


@dataclass
class RefreshRun:
    """What one delivery of a refresh has sent so far."""

    command_id: int
    issues: int = 0
    links: int = 0
    history_issues: int = 0
    changes: int = 0
    incomplete: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    sent: set[str] = field(default_factory=set)
    linked: dict[str, None] = field(default_factory=dict)
    history: list[dict] = field(default_factory=list)
    boards: int = 0
    board_errors: list[str] = field(default_factory=list)
    unparsed_times: int = 0

    def note(self, answer) -> None:
        """What the hub said of a page: Jira times it could not read (kept as sent, counted)."""
        if isinstance(answer, dict) and isinstance(answer.get('unparsed_times'), int):
            self.unparsed_times += answer['unparsed_times']

    def result(self) -> dict:
        result = {'issues': self.issues, 'links': self.links,
                  'history': {'issues': self.history_issues, 'changes': self.changes,
                              'incomplete': self.incomplete}}
        if self.missing:
            result['missing'] = self.missing
        if self.board_errors:
            result['board_errors'] = self.board_errors
        if self.unparsed_times:
            result['unparsed_times'] = self.unparsed_times
        return result


class Executor:
    """Runs one command against Jira and the hub; ``settings`` are the agent settings in force."""

    def __init__(self, jira: JiraClient, hub: HubClient, *, module: str = 'jira',
                 clock: Clock | None = None, index_lag: float = 5.0):
        self.jira = jira
        self.hub = hub
        self.module = module
        self.clock = clock or jira.clock
        self.index_lag = index_lag
        self.settings: dict = {}

    def execute(self, command: dict) -> tuple[str, dict | None, str | None]:
        """``(status, result, error)`` of ``command``. JiraError of a request and CommandFailed
        become ``failed``; Jira being unreachable, a refused token, the hub refusing a page and a
        stop request propagate (the caller decides)."""
        handler = getattr(self, f'_do_{command["type"]}', None)
        if handler is None:
            return 'failed', None, f'агент не умеет команду {command["type"]}'
        try:
            outcome = handler(command)
        except JiraAuthError:
            raise
        except (JiraError, CommandFailed) as error:
            return 'failed', None, str(error)
        if isinstance(outcome, tuple):
            return outcome[0], outcome[1], None
        return 'done', outcome, None

    # --- settings --------------------------------------------------------------------------------

    def _setting(self, name: str) -> dict:
        value = self.settings.get(name)
        return value if isinstance(value, dict) else {}

    # --- refresh ---------------------------------------------------------------------------------

    def _do_refresh(self, command: dict) -> dict:
        params = command['params']
        run = RefreshRun(command['id'])
        base = self.settings.get('base_jql')
        full = params.get('jql') is not None and params['jql'] == base
        if params.get('keys'):
            for chunk in _chunks(list(dict.fromkeys(params['keys'])), KEYS_PER_QUERY):
                self._read(run, _keys_query(chunk), chunk, own=None if base else True)
        else:
            self._read(run, params['jql'], None, own=True if full or not base else None)
        outside = [key for key in run.linked if key not in run.sent]
        for chunk in _chunks(outside, KEYS_PER_QUERY):
            self._read(run, _keys_query(chunk), chunk, own=False if full or not base else None)
        self._flush_history(run, force=True)
        if params.get('jql') is not None:
            self._boards(run, params)
        if run.unparsed_times:
            log.warning('команда #%s: хаб не смог прочитать %d времён Jira (сохранены как есть)',
                        run.command_id, run.unparsed_times)
        return run.result()

    def _read(self, run: RefreshRun, jql: str, keys: list[str] | None, own: bool | None) -> None:
        """Search, map and push every page of ``jql``. ``own``: whether the result lies inside
        the base JQL (None: ask Jira, page by page)."""
        for page in self._search(run, jql, keys):
            page = [raw for raw in page if raw.get('key') not in run.sent]
            if not page:
                continue
            members = None if own is not None else self._members([raw['key'] for raw in page])
            issues = []
            for raw in page:
                inside = own if own is not None else raw['key'] in members
                issue = mapping.issue_of(raw, self.settings, self.jira.cloud,
                                         neighbor=not inside, comments=self._all_comments(raw))
                issues.append(issue)
                run.history.extend(self._history(run, raw))
                run.history_issues += 1
            for chunk in _chunks(issues, STATE_PAGE):
                run.note(self.hub.call('POST', '/agent/state', {
                    'agent': self.module, 'command_id': run.command_id, 'issues': chunk}))
            for issue in issues:
                run.sent.add(issue['key'])
                run.issues += 1
                run.links += len(issue['links'])
                for link in issue['links']:
                    run.linked.setdefault(link['key'], None)
            self._flush_history(run)

    def _search(self, run: RefreshRun, jql: str, keys: list[str] | None) -> Iterator[list[dict]]:
        """Pages of the search; a ``key in (…)`` that names issues Jira no longer has (deleted,
        moved, out of reach) is asked again without them, and they are noted as ``missing``."""
        fields = mapping.search_fields(self.settings)
        while True:
            try:
                yield from self.jira.search(jql, fields, expand='changelog')
                return
            except JiraError as error:
                gone = [key for key in keys or () if error.status == 400 and key in str(error)]
                if not gone:
                    raise
                run.missing.extend(gone)
                keys = [key for key in keys if key not in gone]
                if not keys:
                    return
                jql = _keys_query(keys)

    def _members(self, keys: list[str]) -> set[str]:
        """Which of ``keys`` the base JQL holds (the others are neighbours: spec «Соседняя задача»)."""
        jql = f'({self.settings["base_jql"]}) AND {_keys_query(keys)}'
        return {raw.get('key') for page in self.jira.search(jql, ['key']) for raw in page}

    def _all_comments(self, raw: dict) -> list[dict] | None:
        """Every comment, read page by page when the search gave only the first ones."""
        _, complete = mapping.comments_field(raw.get('fields') or {})
        if complete:
            return None
        try:
            return self.jira.comments(raw['key'])
        except JiraError as error:
            if error.status != 404:
                raise
            return None

    def _history(self, run: RefreshRun, raw: dict) -> list[dict]:
        """The issue's whole changelog: the embedded one when complete, else Cloud's changelog
        pages (Data Center: the issue read again with ``expand=changelog``)."""
        key = raw['key']
        histories, complete = mapping.changelog_of(raw)
        if not complete:
            try:
                if self.jira.cloud:
                    histories = [history for page in self.jira.changelog(key) for history in page]
                else:
                    again = self.jira.get(f'/rest/api/2/issue/{key}',
                                          {'fields': 'key', 'expand': 'changelog'}) or {}
                    histories, complete = mapping.changelog_of(again)
                    if not complete:
                        run.incomplete.append(key)
            except JiraError as error:
                log.warning('журнал %s не прочитан: %s', key, error)
                run.incomplete.append(key)
        return mapping.history_of(key, histories, self.jira.cloud)

    def _flush_history(self, run: RefreshRun, force: bool = False) -> None:
        while run.history and (force or len(run.history) >= HISTORY_PAGE):
            chunk, run.history = run.history[:HISTORY_PAGE], run.history[HISTORY_PAGE:]
            run.note(self.hub.call('POST', '/agent/history', {
                'agent': self.module, 'command_id': run.command_id, 'items': chunk}))
            run.changes += len(chunk)

    def _boards(self, run: RefreshRun, params: dict) -> None:
        """The projects' boards (and a legacy fallback board) with columns and sprints."""
        ids = [project.get('board_id') for project in self.settings.get('projects') or ()
               if isinstance(project, dict)]
        ids += [params.get('board_id'), self.settings.get('board_id')]
        ids = list(dict.fromkeys(board_id for board_id in ids
                                 if isinstance(board_id, int) and board_id > 0))
        if not ids:
            return
        try:
            statuses = self.jira.statuses()
        except JiraError as error:
            log.warning('статусы Jira не прочитаны, доски пропущены: %s', error)
            run.board_errors.append(f'статусы: {error}')
            return
        boards = []
        for board_id in ids:
            try:
                board = self.jira.board(board_id)
                configuration = self.jira.board_configuration(board_id)
                sprints = self.jira.sprints(board_id) if board.get('type') != 'kanban' else []
            except JiraError as error:
                log.warning('доска %s не прочитана: %s', board_id, error)
                run.board_errors.append(f'{board_id}: {error}')
                continue
            boards.append(mapping.board_of(board_id, board, configuration, statuses, sprints))
        if boards:
            run.note(self.hub.call('POST', '/agent/boards', {
                'agent': self.module, 'command_id': run.command_id, 'boards': boards}))
            run.boards = len(boards)

    # --- ensure_issue ----------------------------------------------------------------------------

    def _do_ensure_issue(self, command: dict) -> dict:
        params = command['params']
        if params.get('key'):
            self.jira.edit_issue(params['key'], self._issue_fields(params, create=False))
            return {'key': params['key']}
        marker = {'command_id': command['id']}
        if command.get('deliveries', 1) > 1:
            found = self._created_issue(params, marker)
            if found:
                log.info('команда #%s: задача %s уже заведена прошлой выдачей', command['id'], found)
                return {'key': found}
        fields = self._issue_fields(params, create=True)
        if self.jira.cloud:
            key = self.jira.create_issue(fields, marker)
        else:
            key = self.jira.create_issue(fields, None)
            self.jira.set_property(f'/issue/{key}', marker)
        return {'key': key}

    def _project_key(self) -> str:
        project_key = self.settings.get('project_key')
        if not isinstance(project_key, str) or not project_key:
            raise CommandFailed('не настроен project_key: некуда заводить задачу')
        return project_key

    def _issue_fields(self, params: dict, *, create: bool) -> dict:
        fields: dict[str, Any] = {}
        if create:
            types = self._setting('issue_types')
            spec = types.get(params['issue_type'])
            if not isinstance(spec, dict) or not (spec.get('id') or spec.get('name')):
                raise CommandFailed(f'тип задачи {params["issue_type"]!r} не настроен в issue_types')
            fields['project'] = {'key': self._project_key()}
            fields['issuetype'] = {'id': str(spec['id'])} if spec.get('id') else {'name': spec['name']}
        fields['summary'] = params['summary']
        if 'description' in params:
            fields['description'] = params['description']
        if 'priority' in params:
            priority = params['priority']
            fields['priority'] = {'name': self._setting('priority_map').get(priority, priority)}
        if 'assignee' in params:
            fields['assignee'] = self._user(params['assignee'])
        if 'duedate' in params:
            fields['duedate'] = params['duedate']
        custom = mapping.field_ids(self.settings)
        for name in ('planned_start', 'planned_end'):
            if name in params:
                if name not in custom:
                    raise CommandFailed(f'поле {name} не настроено: нет field_ids.{name}')
                fields[custom[name]] = params[name]
        if 'epic_key' in params:
            # Cloud replaced the Epic Link field with the parent (2023); Data Center keeps it
            if 'epic_link' in custom and not self.jira.cloud:
                fields[custom['epic_link']] = params['epic_key']
            else:
                fields['parent'] = {'key': params['epic_key']}
        if 'labels' in params:
            fields['labels'] = list(params['labels'])
        return fields

    def _user(self, login: str) -> dict:
        if not self.jira.cloud:
            return {'name': login}
        user = self.jira.find_user(login)
        if user is None or not user.get('accountId'):
            raise CommandFailed(f'пользователь {login!r} не найден в Jira')
        return {'accountId': user['accountId']}

    def _created_issue(self, params: dict, marker: dict) -> str | None:
        """The issue an earlier delivery of this command created, if any (module docstring)."""
        jql = (f'project = "{self._project_key()}" AND creator = currentUser() '
               f'AND created >= {FIND_WINDOW} ORDER BY created DESC')
        summary = params['summary'].strip()
        for attempt in (1, 2):
            unmarked = None
            for key in self._recent_by_summary(jql, summary):
                value = self.jira.property(f'/issue/{key}')
                if value is not None and value.get('command_id') == marker['command_id']:
                    return key
                if value is None and unmarked is None:
                    unmarked = key
            if unmarked is not None and not self.jira.cloud:
                # Data Center sets the marker right after the creation: an unmarked issue of this
                # account with this summary is one whose marker a crash kept from being set.
                self.jira.set_property(f'/issue/{unmarked}', marker)
                return unmarked
            if attempt == 1 and self.index_lag > 0:
                self.clock.sleep(self.index_lag)
        return None

    def _recent_by_summary(self, jql: str, summary: str) -> list[str]:
        keys = []
        for number, page in enumerate(self.jira.search(jql, ['summary', 'created']), 1):
            keys += [raw['key'] for raw in page if isinstance(raw.get('key'), str) and
                     str((raw.get('fields') or {}).get('summary') or '').strip() == summary]
            if number >= FIND_PAGES:
                break
        return keys

    # --- ensure_link, add_comment, transition ----------------------------------------------------

    def _do_ensure_link(self, command: dict) -> dict:
        params = command['params']
        name = self._setting('link_types').get(params['link_type'])
        if not isinstance(name, str) or not name:
            raise CommandFailed(f'тип связи {params["link_type"]!r} не настроен в link_types')
        raw = self.jira.issue(params['source_key'], ['issuelinks'])
        if raw is None:
            raise CommandFailed(f'задача {params["source_key"]} не найдена в Jira')
        for link in mapping.links_of(raw.get('fields') or {}):
            if (link['direction'] == 'outward' and link['key'] == params['target_key']
                    and link['type'].casefold() == name.casefold()):
                return {'created': False, 'link_type': name}
        self.jira.link(name, params['source_key'], params['target_key'])
        return {'created': True, 'link_type': name}

    def _do_add_comment(self, command: dict) -> dict:
        params = command['params']
        marker = {'command_id': command['id']}
        if command.get('deliveries', 1) > 1:
            found = self._posted_comment(params['key'], params['body'], marker)
            if found:
                return {'comment_id': found}
        if self.jira.cloud:
            answer = self.jira.add_comment(params['key'], params['body'], marker)
        else:
            answer = self.jira.add_comment(params['key'], params['body'], None)
        comment_id = str(answer.get('id') or '')
        if not comment_id:
            raise CommandFailed(f'Jira добавила комментарий к {params["key"]}, но не вернула его id')
        if not self.jira.cloud:
            self.jira.set_property(f'/comment/{comment_id}', marker)
        return {'comment_id': comment_id}

    def _posted_comment(self, key: str, body: str, marker: dict) -> str | None:
        text = _plain(body)
        mine = [comment for comment in reversed(self.jira.comments(key))
                if self._is_me(comment.get('author')) and _plain(comment.get('body')) == text]
        unmarked = None
        for comment in mine:
            value = self.jira.property(f'/comment/{comment.get("id")}')
            if value is not None and value.get('command_id') == marker['command_id']:
                return str(comment['id'])
            if value is None and unmarked is None:
                unmarked = str(comment['id'])
        if unmarked is not None and not self.jira.cloud:
            self.jira.set_property(f'/comment/{unmarked}', marker)
            return unmarked
        return None

    def _is_me(self, user: Any) -> bool:
        if not isinstance(user, dict):
            return False
        me = self.jira.myself
        names = ('accountId',) if self.jira.cloud else ('name', 'key')
        return any(user.get(name) and user.get(name) == me.get(name) for name in names)

    def _do_transition(self, command: dict):
        params = command['params']
        key, wanted = params['key'], params['status']
        transitions = self.jira.transitions(key)
        for transition in transitions:
            target = (transition.get('to') or {}).get('name')
            if isinstance(target, str) and target.casefold() == wanted.casefold():
                self.jira.transition(key, str(transition.get('id')))
                return {'to': target, 'transition': transition.get('name')}
        current = None
        raw = self.jira.issue(key, ['status'])
        if raw is not None:
            current = ((raw.get('fields') or {}).get('status') or {}).get('name')
        if isinstance(current, str) and current.casefold() == wanted.casefold():
            return 'confirmed_by_state', {'from': current, 'to': current}
        reachable = [name for name in ((item.get('to') or {}).get('name') for item in transitions)
                     if isinstance(name, str)]
        where = f' из «{current}»' if current else ''
        if reachable:
            raise CommandFailed(f'статус «{wanted}» недостижим для {key}{where}; доступны: '
                                + ', '.join(f'«{name}»' for name in dict.fromkeys(reachable)))
        raise CommandFailed(f'статус «{wanted}» недостижим для {key}{where}: переходов нет')

    # --- fetch_attachment ------------------------------------------------------------------------

    def _do_fetch_attachment(self, command: dict) -> dict:
        attachment_id = str(command['params']['attachment_id'])
        meta = self.jira.attachment(attachment_id)
        if meta is None or not meta.get('content'):
            raise CommandFailed(f'вложение {attachment_id} не найдено в Jira')
        with tempfile.SpooledTemporaryFile(max_size=MEMORY_LIMIT) as sink:
            self.jira.download(self._local(str(meta['content'])), sink)
            size = sink.tell()
            sink.seek(0)
            digest = hashlib.sha256()
            for block in iter(lambda: sink.read(1 << 16), b''):
                digest.update(block)
            sha256 = digest.hexdigest()
            sink.seek(0)
            self.hub.call('PUT', f'/agent/files/{sha256}', raw=sink, length=size)
        return {'sha256': sha256, 'size': size}

    def _local(self, url: str) -> str:
        """An attachment's ``content`` URL on the Jira address the agent was given: Jira writes its
        own base URL there, which a reverse proxy may hide from the agent's side."""
        mine = urllib.parse.urlsplit(self.jira.url)
        theirs = urllib.parse.urlsplit(url)
        if (theirs.scheme, theirs.netloc) == (mine.scheme, mine.netloc) or not theirs.scheme:
            return urllib.parse.urljoin(self.jira.url + '/', url)
        for anchor in ('/secure/attachment/', '/rest/api/'):
            index = theirs.path.find(anchor)
            if index >= 0:
                tail = theirs.path[index:] + (f'?{theirs.query}' if theirs.query else '')
                return self.jira.url + tail
        return url


def _keys_query(keys: list[str]) -> str:
    return f'key in ({", ".join(keys)})'


def _chunks(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _plain(text: Any) -> str:
    return str(text or '').replace('\r\n', '\n').strip()


__all__ = ['Executor', 'CommandFailed', 'RefreshRun']
