"""Result types of the MCP tools: each tool's return annotation, from which the SDK publishes its
``outputSchema`` and against which it checks every result before sending it.

They describe the dicts hublib already returns (the same shapes as the HTTP responses in
``hubweb.schemas``; tests/mcp/test_outputs.py holds the two together) plus the few presentation
fields the assistant tools add (compact search items, ``truncated``, ``dry_run``). Extra keys are
allowed, so a field hublib adds later reaches the assistant before it reaches these types.

``typing_extensions.TypedDict``: pydantic needs it on Python 3.11 for nested TypedDicts.
"""

from typing import Any, Literal

from typing_extensions import NotRequired, TypedDict

from hublib.batches import BATCH_STATUSES, STATUSES

from ..schemas.attachments import STATES

Text = str | None


# --- issues --------------------------------------------------------------------------------------

class SearchItem(TypedDict):
    """One issue in a search result: enough to pick it, ``get_issue`` gives the rest."""

    key: str
    issue_type: Text
    summary: Text
    status: Text
    assignee: Text
    priority: Text
    labels: list[str]
    updated: Text
    neighbor: bool
    has_note: bool
    snippet: NotRequired[Text]


class SearchResult(TypedDict):
    items: list[SearchItem]
    next_cursor: Text


class Note(TypedDict):
    key: str
    work_kind: Text
    done_text: Text
    rest_text: Text
    owner_note: Text
    updated_at: Text
    updated_by: Text


class Link(TypedDict):
    type: Text
    key: str
    summary: Text
    status: Text


class Links(TypedDict):
    outward: list[Link]
    inward: list[Link]


class Comment(TypedDict):
    comment_id: str
    author: Text
    created: Text
    updated: Text
    body: Text
    created_at: Text


class Attachment(TypedDict):
    attachment_id: str
    key: str
    filename: Text
    size: int | None
    mime_type: Text
    author: Text
    created: Text
    created_at: Text
    state: Literal[STATES]
    error: Text


class IssueSprint(TypedDict):
    sprint_id: int
    name: Text
    state: Text


class IssueCard(TypedDict):
    """The card of ``GET /issues/{key}``, texts cut for an assistant's context."""

    key: str
    id: Text
    issue_type: Text
    summary: Text
    description: Text
    status: Text
    priority: Text
    assignee: Text
    reporter: Text
    duedate: Text
    planned_start: Text
    planned_end: Text
    epic_key: Text
    labels: list[str]
    sprint: Text
    rank: Text
    story_points: float | None
    jira_updated: Text
    fetched_at: Text
    neighbor: bool
    created: Text
    note: Note | None
    links: Links
    comments: list[Comment]
    attachments: list[Attachment]
    sprints: list[IssueSprint]
    truncated: bool
    truncated_fields: list[str]
    comments_total: int


class Change(TypedDict):
    history_id: str
    seq: int
    key: str
    at: str
    created: Text
    author: Text
    field: Text
    field_id: Text
    field_name: Text
    from_value: Text
    from_string: Text
    to_value: Text
    to_string: Text
    fetched_at: str


class ChangeList(TypedDict):
    items: list[Change]
    next_cursor: Text


# --- projects, boards, sprints -------------------------------------------------------------------

class Project(TypedDict):
    label: str
    name: str
    created_at: str
    board_id: int | None
    board_type: Text
    own_count: int
    neighbor_count: int


class ProjectList(TypedDict):
    items: list[Project]


class BoardCard(TypedDict):
    key: str
    summary: Text
    issue_type: Text
    priority: Text
    assignee: Text
    status: Text


class BoardColumn(TypedDict):
    name: Text
    statuses: list[str]
    issues: list[str]
    cards: list[BoardCard]


class Board(TypedDict):
    label: str
    board_id: int | None
    type: Text
    kanban_backlog: bool | None
    fetched_at: Text
    columns: list[BoardColumn]
    done_statuses: list[str]


class Sprint(TypedDict):
    sprint_id: int
    board_id: int | None
    name: Text
    state: Text
    start_date: Text
    end_date: Text
    complete_date: Text
    goal: Text
    issues: list[str]
    issues_count: int
    done_count: int


class SprintList(TypedDict):
    items: list[Sprint]


# --- agents, sync journal ------------------------------------------------------------------------

class Redelivered(TypedDict):
    id: int
    type: str
    claimed_at: Text
    deliveries: int


class Agent(TypedDict):
    agent: str
    online: bool
    last_seen_at: Text
    agent_version: Text
    settings_version: int | None
    current_command_id: int | None
    last_call_at: Text
    redelivered: list[Redelivered]


class AgentList(TypedDict):
    items: list[Agent]


class SyncRun(TypedDict):
    id: int
    started_at: str
    finished_at: Text
    kind: str
    query: Text
    issues_count: int
    links_count: int
    jira_calls: int
    rate_limited: int
    command_id: int | None
    history_at: Text
    query_truncated: bool


class SyncRunList(TypedDict):
    items: list[SyncRun]
    next_cursor: Text


# --- queue ---------------------------------------------------------------------------------------

CommandStatus = Literal[STATUSES]
BatchStatus = Literal[BATCH_STATUSES]


class Counts(TypedDict):
    queued: int
    claimed: int
    done: int
    failed: int
    skipped: int
    cancelled: int
    confirmed_by_state: int


class Command(TypedDict):
    id: int
    batch_id: int
    seq: int
    type: str
    params: dict[str, Any]
    status: CommandStatus
    claimed_at: Text
    deliveries: int
    finished_at: Text
    result: Any
    error: Text
    jira_calls: int
    rate_limited: int
    pause_seconds: int | None
    depends_on: int | None


class BatchSummary(TypedDict):
    id: int
    title: str
    author: Text
    project: Text
    created_at: str
    cancelled_at: Text
    estimate_seconds: int | None
    status: BatchStatus
    counts: Counts
    retry_of: int | None


class Batch(BatchSummary):
    commands: list[Command]


class BatchList(TypedDict):
    items: list[BatchSummary]
    next_cursor: Text


class QueuedCommand(TypedDict):
    """A command of a queued batch, or of a preview (``dry_run``: no id, ``depends_on`` = seq)."""

    seq: int
    type: str
    params: dict[str, Any]
    depends_on: int | None
    id: NotRequired[int | None]
    batch_id: NotRequired[int | None]
    status: NotRequired[CommandStatus]
    claimed_at: NotRequired[Text]
    deliveries: NotRequired[int]
    finished_at: NotRequired[Text]
    result: NotRequired[Any]
    error: NotRequired[Text]
    jira_calls: NotRequired[int]
    rate_limited: NotRequired[int]
    pause_seconds: NotRequired[int | None]


class QueuedBatch(TypedDict):
    """The batch as ``POST /batches`` answers it (``dry_run: false``), or its preview
    (``dry_run: true``: nothing stored, so ``id`` null and ``depends_on`` the seq)."""

    dry_run: bool
    title: str
    author: Text
    project: Text
    estimate_seconds: int | None
    commands: list[QueuedCommand]
    id: NotRequired[int | None]
    created_at: NotRequired[str]
    cancelled_at: NotRequired[Text]
    status: NotRequired[BatchStatus]
    counts: NotRequired[Counts]
    retry_of: NotRequired[int | None]


class FetchAnswer(TypedDict):
    """``POST /attachments/{id}/fetch``; ``enqueued`` says what its 200/202 status says."""

    state: Literal['ready', 'fetching']
    command_id: NotRequired[int | None]
    enqueued: bool


# --- settings ------------------------------------------------------------------------------------

class Settings(TypedDict, total=False):
    """``GET /settings``: every stored key but the tokens and schema_version, and base_jql."""

    project_key: Text
    field_ids: Any
    issue_types: Any
    priority_map: Any
    link_types: Any
    pacing: Any
    settings_version: int
    backup_keep: Any
    auto_refresh_minutes: Any
    relay_dir: Any
    closed_statuses: Any
    base_jql: Text
    board_id: Any  # the v3 key, if still stored
