"""Frozen DDL of the legacy schema versions 1–9 (contract §5).

This text is history: it never changes. A vN database is exactly ``DDL[1]`` followed by the DDL of
every step up to N (the data rules of each step live in ``steps``). Tests and benchmarks build
legacy databases from it (``tests/support/legacy.py``).
"""
from __future__ import annotations

DDL: dict[int, str] = {
    1: """
CREATE TABLE issue (key TEXT PRIMARY KEY, id TEXT, issue_type TEXT, summary TEXT, description TEXT,
  status TEXT, priority TEXT, assignee TEXT, reporter TEXT, duedate TEXT, planned_start TEXT,
  planned_end TEXT, epic_key TEXT, labels TEXT NOT NULL DEFAULT '[]', sprint TEXT, jira_updated TEXT,
  fetched_at TEXT, neighbor INTEGER NOT NULL DEFAULT 0, created TEXT);
CREATE TABLE issue_link (source_key TEXT NOT NULL, target_key TEXT NOT NULL, link_type TEXT NOT NULL,
  PRIMARY KEY (source_key, target_key, link_type));
CREATE INDEX issue_link_target ON issue_link (target_key);
CREATE TABLE issue_note (key TEXT PRIMARY KEY, work_kind TEXT, fact_status TEXT, done_text TEXT,
  rest_text TEXT, owner_note TEXT, updated_at TEXT, updated_by TEXT);
CREATE TABLE batch (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, author TEXT,
  created_at TEXT NOT NULL, cancelled_at TEXT, estimate_seconds INTEGER);
CREATE TABLE command (id INTEGER PRIMARY KEY AUTOINCREMENT, batch_id INTEGER NOT NULL REFERENCES batch(id),
  seq INTEGER NOT NULL, type TEXT NOT NULL, params TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL DEFAULT 'queued', claimed_at TEXT, finished_at TEXT, result TEXT, error TEXT,
  jira_calls INTEGER NOT NULL DEFAULT 0, rate_limited INTEGER NOT NULL DEFAULT 0, pause_seconds INTEGER,
  depends_on INTEGER REFERENCES command(id));
CREATE INDEX command_status ON command (status);
CREATE TABLE sync_run (id INTEGER PRIMARY KEY AUTOINCREMENT, started_at TEXT NOT NULL, finished_at TEXT,
  kind TEXT NOT NULL, query TEXT, issues_count INTEGER NOT NULL DEFAULT 0,
  links_count INTEGER NOT NULL DEFAULT 0, jira_calls INTEGER NOT NULL DEFAULT 0,
  rate_limited INTEGER NOT NULL DEFAULT 0, command_id INTEGER REFERENCES command(id));
CREATE TABLE agent_status (agent TEXT PRIMARY KEY, last_seen_at TEXT, agent_version TEXT,
  settings_version INTEGER, current_command_id INTEGER, last_call_at TEXT);
CREATE TABLE setting (key TEXT PRIMARY KEY, value TEXT);
""",
    2: """
ALTER TABLE command ADD COLUMN deliveries INTEGER NOT NULL DEFAULT 0;
""",
    3: """
CREATE TABLE issue_comment (key TEXT NOT NULL, comment_id TEXT NOT NULL, author TEXT, created TEXT,
  updated TEXT, body TEXT, PRIMARY KEY (key, comment_id));
""",
    4: """
CREATE TABLE project (label TEXT PRIMARY KEY, name TEXT NOT NULL, board_id INTEGER, board_type TEXT,
  created_at TEXT NOT NULL);
ALTER TABLE batch ADD COLUMN project TEXT;
""",
    5: """
CREATE TABLE issue_change (history_id TEXT NOT NULL, seq INTEGER NOT NULL, key TEXT NOT NULL, at TEXT,
  created TEXT, author TEXT, field TEXT, field_id TEXT, field_name TEXT, from_value TEXT,
  from_string TEXT, to_value TEXT, to_string TEXT, fetched_at TEXT NOT NULL,
  PRIMARY KEY (history_id, seq));
CREATE INDEX issue_change_at ON issue_change (at);
CREATE INDEX issue_change_key_at ON issue_change (key, at);
ALTER TABLE issue_comment ADD COLUMN created_at TEXT;
ALTER TABLE sync_run ADD COLUMN history_at TEXT;
""",
    6: """
CREATE TABLE issue_attachment (attachment_id TEXT PRIMARY KEY, key TEXT NOT NULL, filename TEXT,
  size INTEGER, mime_type TEXT, author TEXT, created TEXT, created_at TEXT);
CREATE INDEX issue_attachment_key ON issue_attachment (key);
CREATE TABLE attachment_file (attachment_id TEXT PRIMARY KEY, file TEXT NOT NULL, size INTEGER,
  fetched_at TEXT NOT NULL);
""",
    7: """
CREATE TABLE jira_project (label TEXT PRIMARY KEY REFERENCES project(label), board_id INTEGER,
  board_type TEXT);
""",
    8: "",
    9: """
ALTER TABLE issue ADD COLUMN rank TEXT;
ALTER TABLE issue ADD COLUMN story_points REAL;
CREATE TABLE jira_board (board_id INTEGER PRIMARY KEY, type TEXT, columns TEXT, kanban_backlog INTEGER,
  fetched_at TEXT);
CREATE TABLE jira_sprint (sprint_id INTEGER PRIMARY KEY, board_id INTEGER, name TEXT, state TEXT,
  start_date TEXT, end_date TEXT, complete_date TEXT, goal TEXT);
CREATE TABLE issue_sprint (key TEXT NOT NULL, sprint_id INTEGER NOT NULL, PRIMARY KEY (key, sprint_id));
""",
}

# Indexes the hub's own reads need (project slices, queue order, dependents, sprint members, runs
# of a command).
# Part of schema 9 as this hub defines it: created by the v8 -> v9 step and by the models alike.
V9_READ_INDEXES = """
CREATE INDEX IF NOT EXISTS issue_labels_key_epic_key ON issue (labels, key, epic_key);
CREATE INDEX IF NOT EXISTS command_batch_id_seq ON command (batch_id, seq);
CREATE INDEX IF NOT EXISTS command_depends_on ON command (depends_on);
CREATE INDEX IF NOT EXISTS sync_run_command_id ON sync_run (command_id);
CREATE INDEX IF NOT EXISTS issue_sprint_sprint_id ON issue_sprint (sprint_id);
CREATE INDEX IF NOT EXISTS jira_sprint_board_id ON jira_sprint (board_id);
"""
