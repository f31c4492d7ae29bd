"""The README's promises: its Python example runs, its commands exist."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / 'README.md').read_text(encoding='utf-8')


PYTHON_EXAMPLES = re.findall(r'```python\n(.*?)```', README, re.S)


def test_readme_python_example_runs_and_prints_the_base_jql():
    example = PYTHON_EXAMPLES[0]
    result = subprocess.run([sys.executable, '-c', example], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    assert 'project = AURORA AND labels in ("AWPCA", "STOCKS_DRRK")' in result.stdout
    assert 'queued queued' in result.stdout


def test_readme_commands_exist_and_ci_runs_the_test_command():
    for script in ('scripts/run.sh', 'scripts/test.sh', 'scripts/run.cmd', 'scripts/test.cmd',
                   'scripts/run.ps1', 'scripts/test.ps1', 'scripts/bootstrap.sh',
                   'scripts/bootstrap.ps1'):
        assert (ROOT / script).is_file(), script
    for command in ('scripts/run.sh', 'scripts/test.sh', 'scripts\\run.cmd', 'scripts\\test.cmd'):
        assert f'`{command}`' in README, command
    assert 'scripts/test.sh' in (ROOT / '.ci' / 'run').read_text()


def test_readme_reading_example_pages_the_project_and_reads_a_card(tmp_path):
    from hublib import mirror, notes, open_hub, projects, queue, settings
    hub = open_hub(tmp_path / 'hub-data')
    settings.update_settings(hub, {'project_key': 'AURORA'})
    projects.create_project(hub, 'AWPCA', 'АРМ КА')
    queue.create_batch(hub, title='x', author='t', commands=[
        {'type': 'refresh', 'params': {'keys': ['AURORA-1', 'AURORA-2']}}])
    command = queue.claim_command(hub, agent='jira', agent_version='15')['command']
    issue = {'summary': 'Выгрузка', 'status': 'В работе', 'updated': '2026-10-22T09:00:00.000+0300'}
    mirror.ingest_state(hub, 'jira', command['id'], [
        {**issue, 'key': 'AURORA-1', 'labels': ['AWPCA'],
         'links': [{'type': 'Blocks', 'direction': 'outward', 'key': 'AURORA-9'}],
         'comments': [{'id': '101', 'author': 'petrov', 'created': '2026-10-22T13:05:11.000+0300',
                       'updated': '2026-10-22T13:05:11.000+0300', 'body': 'Готово к ревью'}]},
        {**issue, 'key': 'AURORA-2', 'labels': ['AWPCA']},
        {**issue, 'key': 'AURORA-9', 'labels': ['ORION'], 'neighbor': True}])
    notes.put_note(hub, 'AURORA-1', {'work_kind': 'Аналитика', 'updated_by': 'ivanov'})
    hub.close()
    result = subprocess.run([sys.executable, '-c', PYTHON_EXAMPLES[1]], capture_output=True,
                            text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == ['AURORA-1 В работе Выгрузка', 'AURORA-2 В работе Выгрузка',
                         'AURORA-9 В работе Выгрузка (сосед)']
    assert lines[3] == "Выгрузка ['AURORA-9'] 1"
    assert "'work_kind': 'Аналитика'" in lines[4]


def test_readme_links_the_agent_protocol_page_with_curl_examples():
    assert '(docs/agent-protocol.md)' in README
    page = (ROOT / 'docs' / 'agent-protocol.md').read_text(encoding='utf-8')
    for step in ('/agent/claim', '/agent/state', '/agent/history', '/agent/boards',
                 '/agent/files/', '/agent/commands/', 'Redelivery', 'Pacing', 'Temp keys'):
        assert step in page, step
    # every curl that sends a JSON body says so (curl -d alone is form-encoded: a 415)
    for text in (README, page):
        assert not_json_curls(text) == []


def not_json_curls(text: str) -> list[str]:
    """curl commands with ``-d`` but no Content-Type, unless the lines after say it is a 415."""
    joined = text.replace('\\\n', ' ')  # shell line continuations
    found = []
    for match in re.finditer(r'curl [^\n]*', joined):
        command, after = match.group(0), joined[match.end():match.end() + 40]
        if ' -d ' in command and 'Content-Type' not in command and '"$J"' not in command \
                and '415' not in after:
            found.append(command)
    return found


def test_not_json_curls_finds_a_body_without_content_type():
    assert not_json_curls('curl -s -X POST "$HUB/x" \\\n  -d \'{"a": 1}\'\n') != []
    assert not_json_curls('curl -s -X POST -H "$J" "$HUB/x" \\\n  -d \'{"a": 1}\'\n') == []
    assert not_json_curls('curl -s -X POST "$HUB/x" -d \'{}\'\n#   415: no header\n') == []


# --- the README is the front page: short, with the rest one link away ---------------------------

MOVED_PAGES = ('performance', 'reliability', 'decisions', 'web-ui', 'mcp', 'agent-protocol')


def test_readme_stays_under_15_kb_and_links_the_pages_that_left_it():
    assert len(README.encode('utf-8')) < 15_000
    for page in MOVED_PAGES:
        assert f'(docs/{page}.md)' in README, page
        assert (ROOT / 'docs' / f'{page}.md').is_file(), page
    for heading in ('## Two commands', '## Architecture', '## Command line',
                    '## Using hublib from a Python script', '## HTTP API', '## Web UI',
                    '## AI assistants (MCP)'):
        assert heading in README, heading


def broken_links(path: Path) -> list[str]:
    """Relative links of a Markdown file (outside code blocks) whose file or heading is missing."""
    text = re.sub(r'```.*?```', '', path.read_text(encoding='utf-8'), flags=re.S)
    broken = []
    for target in re.findall(r'\]\(([^)\s]+)\)', text):
        if re.match(r'[a-z]+:', target):
            continue
        file, _, anchor = target.partition('#')
        linked = path.parent / file if file else path
        if not linked.exists():
            broken.append(target)
        elif anchor and anchor not in headings(linked):
            broken.append(target)
    return broken


def headings(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings."""
    return {re.sub(r'[^\w\- ]', '', line.lstrip('#').strip().lower()).replace(' ', '-')
            for line in path.read_text(encoding='utf-8').splitlines() if line.startswith('#')}


def test_every_relative_link_of_the_readme_and_the_docs_resolves():
    pages = [ROOT / 'README.md', *sorted((ROOT / 'docs').glob('*.md'))]
    assert {page: broken_links(page) for page in pages} == {page: [] for page in pages}


def test_broken_links_finds_a_missing_file_and_a_missing_heading(tmp_path):
    page = tmp_path / 'page.md'
    page.write_text('# Title\n[ok](#title) [gone](other.md) [no](#nothing)\n'
                    '```\n[in code](ignored.md)\n```\n', encoding='utf-8')
    assert broken_links(page) == ['other.md', '#nothing']
