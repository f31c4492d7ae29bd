"""Prompts with completions and resource templates (contract §14a), through the SDK's client."""
from __future__ import annotations

import json

import pytest
from mcp import MCPError
from mcp.types import PromptReference, ResourceTemplateReference

from hubweb.mcp_server.prompts import last_working_day

pytestmark = pytest.mark.anyio


async def test_prompts_are_listed_with_their_arguments(client):
    prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
    assert set(prompts) == {'standup', 'sprint_review', 'triage'}
    arguments = {name: [(a.name, a.required) for a in prompt.arguments]
                 for name, prompt in prompts.items()}
    assert arguments == {'standup': [('label', True)],
                         'sprint_review': [('label', True), ('sprint_id', False)],
                         'triage': [('label', True)]}
    assert all(prompt.description and prompt.title for prompt in prompts.values())


def text_of(result) -> str:
    (message,) = result.messages
    assert message.role == 'user'
    return message.content.text


async def test_standup_names_the_label_the_tools_and_the_last_working_day(client, clock):
    # the fixture clock stands on Monday 2026-11-30: the last working day is Friday 11-27
    text = text_of(await client.get_prompt('standup', {'label': 'AWPCA'}))
    for needle in ('AWPCA', 'search_issues', 'project="AWPCA"', 'updated_since="2026-11-27T00:00:00Z"',
                   'issue_changes', 'project_board', 'get_issue', 'as_of', 'не инструкции'):
        assert needle in text, needle


async def test_sprint_review_uses_the_given_sprint_or_finds_the_active_one(client):
    given = text_of(await client.get_prompt('sprint_review', {'label': 'AWPCA', 'sprint_id': '102'}))
    assert 'sprint_report с label="AWPCA" и sprint_id=102' in given
    assert 'velocity' in given and 'not_completed' in given
    found = text_of(await client.get_prompt('sprint_review', {'label': 'AWPCA'}))
    assert 'project_sprints с label="AWPCA"' in found and 'active' in found


async def test_triage_asks_for_new_unassigned_and_unnoted_issues(client):
    text = text_of(await client.get_prompt('triage', {'label': 'AWPCA'}))
    for needle in ('hubProject = "AWPCA"', 'assignee IS EMPTY', 'note IS EMPTY', 'created >= -7d',
                   'put_note', 'dry_run: true'):
        assert needle in text, needle


@pytest.mark.parametrize('today, expected', [
    ('2026-11-30', '2026-11-27'),  # Monday → Friday
    ('2026-12-01', '2026-11-30'),  # Tuesday → Monday
    ('2026-12-05', '2026-12-04'),  # Saturday → Friday
    ('2026-12-06', '2026-12-04'),  # Sunday → Friday
])
def test_last_working_day(today, expected):
    from datetime import date
    assert last_working_day(date.fromisoformat(today)).isoformat() == expected


async def test_completion_offers_project_labels(client):
    for prompt in ('standup', 'sprint_review', 'triage'):
        offered = await client.complete(PromptReference(type='ref/prompt', name=prompt),
                                        {'name': 'label', 'value': ''})
        assert offered.completion.values == ['AWPCA', 'EMPTY']
    typed = await client.complete(PromptReference(type='ref/prompt', name='standup'),
                                  {'name': 'label', 'value': 'aw'})
    assert typed.completion.values == ['AWPCA']
    board = await client.complete(
        ResourceTemplateReference(type='ref/resource', uri='hub://project/{label}/board'),
        {'name': 'label', 'value': 'E'})
    assert board.completion.values == ['EMPTY']


async def test_completion_offers_the_boards_sprint_ids(client):
    ref = PromptReference(type='ref/prompt', name='sprint_review')
    offered = await client.complete(ref, {'name': 'sprint_id', 'value': ''},
                                    context_arguments={'label': 'AWPCA'})
    assert offered.completion.values == ['102', '101']  # newest first
    assert (await client.complete(ref, {'name': 'sprint_id', 'value': ''})).completion.values == []
    unknown = await client.complete(ref, {'name': 'sprint_id', 'value': ''},
                                    context_arguments={'label': 'NOPE'})
    assert unknown.completion.values == []


async def test_resource_templates_are_listed(client):
    templates = {t.uri_template: t for t in (await client.list_resource_templates()).resource_templates}
    assert set(templates) == {'hub://issue/{key}', 'hub://project/{label}/board'}
    assert {t.mime_type for t in templates.values()} == {'application/json'}


async def test_issue_resource_is_the_card_of_get_issue(client):
    read = await client.read_resource('hub://issue/AURORA-1')
    (content,) = read.contents
    assert content.mime_type == 'application/json'
    card = json.loads(content.text)
    tool = (await client.call_tool('get_issue', {'key': 'AURORA-1'})).structured_content
    assert card == tool
    assert card['key'] == 'AURORA-1' and card['note']['work_kind'] == 'Аналитика'


async def test_board_resource_is_the_project_board(client):
    (content,) = (await client.read_resource('hub://project/AWPCA/board')).contents
    board = json.loads(content.text)
    assert board == (await client.call_tool('project_board', {'label': 'AWPCA'})).structured_content


@pytest.mark.parametrize('uri, message', [
    ('hub://issue/AURORA-999', 'задачи AURORA-999 нет в зеркале'),
    ('hub://project/NOPE/board', "проекта 'NOPE' нет"),
])
async def test_a_missing_key_is_invalid_params(client, uri, message):
    with pytest.raises(MCPError) as raised:
        await client.read_resource(uri)
    assert raised.value.error.code == -32602
    assert raised.value.error.message == message


async def test_the_queries_triage_names_are_jql_the_hub_answers(client):
    import re
    text = text_of(await client.get_prompt('triage', {'label': 'AWPCA'}))
    queries = re.findall(r"jql='(.*?)'", text)
    assert len(queries) == 3
    for query in queries:
        result = await client.call_tool('search_issues', {'jql': query})
        assert not result.is_error, (query, result.content)


@pytest.mark.parametrize('name, arguments, message', [
    ('retro', {'label': 'AWPCA'}, 'промпта retro нет; есть: standup, sprint_review, triage'),
    ('standup', {}, 'промпту standup нужен аргумент label'),
    ('standup', None, 'промпту standup нужен аргумент label'),
    ('sprint_review', {'sprint_id': '101'}, 'промпту sprint_review нужен аргумент label'),
    ('triage', {'label': '  '}, 'промпту triage нужен аргумент label'),
    ('standup', {'label': 'AWPCA', 'lable': 'x'},
     'промпт standup не принимает аргумент lable; принимает: label'),
])
async def test_a_prompt_the_hub_cannot_give_is_invalid_params_in_russian(client, name, arguments,
                                                                        message):
    with pytest.raises(MCPError) as raised:
        await client.get_prompt(name, arguments)
    assert raised.value.error.code == -32602
    assert raised.value.error.message == message
