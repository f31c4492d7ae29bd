"""Tools that read the mirror: issues, their changes, projects, boards, sprints, the sync journal
and the settings. Each makes the hublib call of the matching HTTP resource (named at the end of its
docstring); what it adds is presentation for an assistant: compact search items, texts cut to
``max_chars``, the newest comments, and ``as_of`` (how fresh the mirror is)."""
from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field, StrictBool, StrictInt

from hublib import jql as jql_language
from hublib import projects, reads, settings, syncjournal
from hublib.db import Hub
from hublib.paging import page_limit

from ...schemas.assistant import AssistantCardSchema, SearchResultSchema
from ...schemas.mirror import BoardSchema, ChangeListSchema, SprintListSchema, SyncRunListSchema
from ...schemas.projects import ProjectListSchema
from ...schemas.settings import SettingsSchema
from ..tooling import (READ_ONLY, Cursor, IssueKey, Label, Moment, OptionalText, Toolbox, hub_of,
                       limit)

TOOLS = Toolbox()

# Limits the contract sets for tools (assistant contexts are small): (default, maximum).
SEARCH_LIMIT = (20, 100)
CHANGES_LIMIT = (50, 500)
RUNS_LIMIT = (10, 100)
MAX_CHARS = (20000, 1_000_000)
COMMENT_LIMIT = (20, 1000)


def compact_issue(item: dict) -> dict:
    """A search item: the fields that pick an issue."""
    compact = {name: item[name] for name in ('key', 'issue_type', 'summary', 'status', 'assignee',
                                             'priority', 'labels')}
    compact.update(updated=item['jira_updated'], neighbor=item['neighbor'],
                   has_note=item['note'] is not None, fetched_at=item['fetched_at'])
    if 'snippet' in item:  # full-text search explains the match
        compact['snippet'] = item['snippet']
    return compact


def assistant_card(hub: Hub, key: str, max_chars: int | None = None,
                   comment_limit: int | None = None) -> dict:
    """The card of ``GET /issues/{key}`` with the newest ``comment_limit`` comments, long texts cut
    to ``max_chars``, and ``as_of``.

    ``truncated_fields`` names what was cut (``description``, ``comments[i].body`` with ``i`` the
    index in the returned list); ``comments_total`` is how many comments the issue has.
    """
    max_chars = page_limit(max_chars, *MAX_CHARS, name='max_chars')
    comment_limit = page_limit(comment_limit, *COMMENT_LIMIT, name='comment_limit', minimum=0)
    card = reads.issue_card(hub, key)
    cut: list[str] = []

    def shorten(text: str | None, name: str) -> str | None:
        if text is not None and len(text) > max_chars:
            cut.append(name)
            return text[:max_chars]
        return text

    comments = card['comments']
    kept = comments[len(comments) - comment_limit:] if comment_limit else []
    card['description'] = shorten(card['description'], 'description')
    card['comments'] = [{**comment, 'body': shorten(comment['body'], f'comments[{index}].body')}
                        for index, comment in enumerate(kept)]
    card.update(truncated=bool(cut), truncated_fields=cut, comments_total=len(comments),
                as_of=syncjournal.mirror_as_of(hub))
    return card


@TOOLS.tool('Поиск задач', READ_ONLY, SearchResultSchema, more=jql_language.SUPPORTED)
def search_issues(ctx: Context,
                  jql: Annotated[OptionalText, Field(
                      description='запрос JQL по зеркалу, например status = "В работе" AND '
                                  'assignee IS EMPTY ORDER BY priority DESC (сначала самые '
                                  'важные)')] = None,
                  tz: Annotated[OptionalText, Field(
                      description='часовой пояс IANA для дат в jql, по умолчанию UTC')] = None,
                  project: Annotated[OptionalText, Field(
                      description='метка проекта: его задачи и соседи')] = None,
                  status: OptionalText = None,
                  assignee: Annotated[OptionalText, Field(description='логин')] = None,
                  neighbor: Annotated[StrictBool | None, Field(
                      description='true — только соседи, false — только свои')] = None,
                  text: Annotated[OptionalText, Field(
                      description='полнотекстовый поиск: слова и префиксы слово*')] = None,
                  updated_since: Moment = None,
                  limit: limit(*SEARCH_LIMIT) = SEARCH_LIMIT[0],
                  cursor: Cursor = None) -> dict:
    """Задачи зеркала по JQL и фильтрам (все через AND), постранично: в порядке ORDER BY,
    иначе ключей (AURORA-2 раньше AURORA-10), с text или ~ — по релевантности. Коротко: ключ,
    тип, название, статус, исполнитель, приоритет, метки, обновлена, сосед ли, есть ли заметка,
    когда загружена (fetched_at); as_of — конец последней успешной синхронизации. Карточка —
    get_issue. Как GET /issues."""
    hub = hub_of(ctx)
    found = reads.issues(hub, jql=jql, tz=tz, project=project, status=status, assignee=assignee,
                         neighbor=neighbor, text=text, updated_since=updated_since,
                         limit=page_limit(limit, *SEARCH_LIMIT), cursor=cursor)
    result = {**found, 'items': [compact_issue(item) for item in found['items']]}
    result['as_of'] = syncjournal.mirror_as_of(hub)
    return result


@TOOLS.tool('Карточка задачи', READ_ONLY, AssistantCardSchema)
def get_issue(ctx: Context, key: IssueKey,
              max_chars: Annotated[StrictInt | None, Field(
                  description='описание и каждый комментарий обрезаются до стольких символов',
                  json_schema_extra={'minimum': 1, 'maximum': MAX_CHARS[1]})] = MAX_CHARS[0],
              comment_limit: Annotated[StrictInt | None, Field(
                  description='сколько последних комментариев (0 — ни одного)',
                  json_schema_extra={'minimum': 0, 'maximum': COMMENT_LIMIT[1]})]
              = COMMENT_LIMIT[0]) -> dict:
    """Карточка задачи: поля Jira, служебная заметка (note), связи, последние комментарии,
    вложения с состоянием скачивания, спринты; truncated_fields — что обрезано; as_of — конец
    последней успешной синхронизации. Как GET /issues/{key}."""
    return assistant_card(hub_of(ctx), key, max_chars, comment_limit)


@TOOLS.tool('Журнал изменений задачи', READ_ONLY, ChangeListSchema)
def issue_changes(ctx: Context, key: IssueKey,
                  field: Annotated[OptionalText, Field(
                      description='status, summary, assignee, priority, duedate, labels, '
                                  'description, resolution, planned_start, planned_end, '
                                  'epic_link или имя поля Jira')] = None,
                  since: Moment = None,
                  limit: limit(*CHANGES_LIMIT) = CHANGES_LIMIT[0],
                  cursor: Cursor = None) -> dict:
    """Изменения полей задачи по времени (at, UTC), старые первыми; since включительно.
    Как GET /issues/{key}/changes."""
    return reads.issue_changes(hub_of(ctx), key, since=since, field=field,
                               limit=page_limit(limit, *CHANGES_LIMIT), cursor=cursor)


@TOOLS.tool('Проекты', READ_ONLY, ProjectListSchema)
def list_projects(ctx: Context) -> dict:
    """Проекты хаба (метка, название, доска) с числом своих задач и соседей. Как GET /projects."""
    return {'items': projects.projects(hub_of(ctx))}


@TOOLS.tool('Доска проекта', READ_ONLY, BoardSchema)
def project_board(ctx: Context, label: Label) -> dict:
    """Колонки доски со своими задачами проекта; выполнены задачи в статусах последней колонки
    (done_statuses). Как GET /projects/{label}/board."""
    return reads.project_board(hub_of(ctx), label)


@TOOLS.tool('Спринты проекта', READ_ONLY, SprintListSchema)
def project_sprints(ctx: Context, label: Label) -> dict:
    """Спринты доски проекта с его задачами и числом выполненных.
    Как GET /projects/{label}/sprints."""
    return reads.project_sprints(hub_of(ctx), label)


@TOOLS.tool('Журнал синхронизаций', READ_ONLY, SyncRunListSchema)
def sync_runs(ctx: Context, limit: limit(*RUNS_LIMIT) = RUNS_LIMIT[0],
              cursor: Cursor = None) -> dict:
    """Загрузки зеркала из Jira, новые первыми: когда, что (jql или ключи), сколько задач,
    завершена ли. Как GET /sync-runs."""
    return reads.sync_runs(hub_of(ctx), limit=page_limit(limit, *RUNS_LIMIT), cursor=cursor)


@TOOLS.tool('Настройки', READ_ONLY, SettingsSchema)
def get_settings(ctx: Context) -> dict:
    """Настройки хаба (без токенов) и базовая JQL из проектов. Как GET /settings."""
    return settings.client_settings(hub_of(ctx))
