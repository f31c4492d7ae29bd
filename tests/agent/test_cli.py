"""``sdlc-hub agent`` as a process (contract's command line): tokens only from the environment or
files and never in its output, exit 2 on usage errors, exit 1 with one line when the hub or Jira
is unreachable or refuses the token, ``--once`` works the queue off and exits 0."""
from __future__ import annotations

import subprocess

import pytest

from hublib import projects, queue, settings
from tests.agent.conftest import configure
from tests.support.jira_rest import TOKEN, USER
from tests.support.server import agent_command, agent_environment

TIMEOUT = 90


def run(hub_url: str, jira_url: str, *args: str, env: dict | None = None):
    return subprocess.run(agent_command(hub_url, jira_url, *args), env=env, capture_output=True,
                          text=True, timeout=TIMEOUT)


@pytest.fixture
def site(hub, hub_url, jira_site):
    configure(hub)
    return hub, hub_url, jira_site


@pytest.mark.parametrize('deployment', ['Server', 'Cloud'])
def test_once_works_the_queue_off_exits_0_and_never_shows_a_token(site, deployment):
    hub, hub_url, jira_site = site
    model, app, server = jira_site(deployment)
    batch = queue.create_batch(hub, title='Загрузка', author='test', commands=[
        {'type': 'refresh', 'params': {'jql': projects.base_jql(hub)}},
        {'type': 'add_comment', 'params': {'key': 'AURORA-3', 'body': 'из процесса'}}])
    agent_token = settings.tokens(hub)['agent']
    user = ('--jira-user', USER) if deployment == 'Cloud' else ()
    result = run(hub_url, server.url, '--once', *user, env=agent_environment(agent_token, TOKEN))
    assert result.returncode == 0, result.stderr
    statuses = [item['status'] for item in queue.batch(hub, batch['id'])['commands']]
    assert statuses == ['done', 'done']
    output = result.stdout + result.stderr
    assert 'команда #1 refresh: done' in output
    assert agent_token not in output and TOKEN not in output
    assert len(app.writes('/AURORA-3/comment')) == 1


def test_tokens_are_read_from_files(site, tmp_path):
    hub, hub_url, jira_site = site
    model, app, server = jira_site('Server')
    (tmp_path / 'hub.token').write_text(settings.tokens(hub)['agent'] + '\n', encoding='utf-8')
    (tmp_path / 'jira.token').write_text(TOKEN, encoding='utf-8')
    env = {key: value for key, value in agent_environment('x', 'y').items()
           if key not in ('SDLC_HUB_AGENT_TOKEN', 'JIRA_TOKEN')}
    result = run(hub_url, server.url, '--once', '--hub-token-file', str(tmp_path / 'hub.token'),
                 '--jira-token-file', str(tmp_path / 'jira.token'), env=env)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize('missing, message', [
    ('SDLC_HUB_AGENT_TOKEN', 'нужен токен агента хаба: переменная SDLC_HUB_AGENT_TOKEN'),
    ('JIRA_TOKEN', 'нужен токен Jira: переменная JIRA_TOKEN')])
def test_a_missing_token_is_a_usage_error(missing, message):
    env = {key: value for key, value in agent_environment('a', 'b').items() if key != missing}
    result = run('http://127.0.0.1:9', 'http://127.0.0.1:9', env=env)
    assert result.returncode == 2 and message in result.stderr


def test_there_is_no_option_that_takes_a_token_on_the_command_line():
    result = run('http://127.0.0.1:9', 'http://127.0.0.1:9', '--jira-token', 'secret',
                 env=agent_environment('a', 'b'))
    assert result.returncode == 2 and 'неизвестные аргументы: --jira-token secret' in result.stderr


def one_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.startswith('sdlc-hub agent:')]
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    return lines[0]


def test_unreachable_jira_or_hub_exits_1_with_one_line(site):
    hub, hub_url, jira_site = site
    model, app, server = jira_site('Server')
    env = agent_environment(settings.tokens(hub)['agent'], TOKEN)
    assert 'Jira недоступна' in one_line(run(hub_url, 'http://127.0.0.1:9', '--once', env=env))
    assert 'хаб недоступен' in one_line(run('http://127.0.0.1:9', server.url, '--once', env=env))


def test_a_refused_token_exits_1_with_one_line(site):
    hub, hub_url, jira_site = site
    model, app, server = jira_site('Server')
    wrong_hub = one_line(run(hub_url, server.url, '--once', env=agent_environment('wrong', TOKEN)))
    assert 'хаб не принял токен агента (401)' in wrong_hub and 'wrong' not in wrong_hub
    client = settings.tokens(hub)['client']  # the client token is no agent's
    assert '(403)' in one_line(run(hub_url, server.url, '--once', env=agent_environment(client, TOKEN)))
    wrong_jira = one_line(run(hub_url, server.url, '--once',
                              env=agent_environment(settings.tokens(hub)['agent'], 'wrong')))
    assert 'Jira не приняла токен (401)' in wrong_jira
