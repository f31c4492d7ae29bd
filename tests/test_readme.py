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
