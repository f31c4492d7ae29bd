"""Attachment ids are Jira's: decimal digits (1 to 19, an int64 as Jira prints it). One of
another shape (``a/b``, ``../x``, ``-1``, ``1e3``) could never be fetched by URL, so it is refused
at ingest (422 naming ``issues[i].attachments[j].id``) and in a ``fetch_attachment`` command."""
from __future__ import annotations

import pytest

from hublib import mirror, queue, reads
from hublib.errors import ValidationError

BAD_IDS = ['a/b', '../7', '7/', ' 7', '7 ', '-1', '1e3', 'abc', '١٢', '1' * 20, -1, 2 ** 63]


@pytest.mark.parametrize('bad', BAD_IDS)
def test_state_page_with_an_attachment_id_outside_jiras_shape_is_refused(hub, claimed_refresh, bad):
    command_id = claimed_refresh(hub)
    with pytest.raises(ValidationError) as refused:
        mirror.ingest_state(hub, 'jira', command_id, [
            {'key': 'AURORA-1', 'attachments': [{'id': '7'}, {'id': bad}]}])
    assert list(refused.value.fields) == ['issues[0].attachments[1].id']
    assert reads.issues(hub)['items'] == []


@pytest.mark.parametrize('good, stored', [('7', '7'), ('0123', '0123'), (31337, '31337'),
                                          ('9' * 19, '9' * 19)])
def test_jira_attachment_ids_are_accepted(hub, claimed_refresh, good, stored):
    command_id = claimed_refresh(hub)
    mirror.ingest_state(hub, 'jira', command_id, [{'key': 'AURORA-1', 'attachments': [{'id': good}]}])
    assert reads.issue_card(hub, 'AURORA-1')['attachments'][0]['attachment_id'] == stored


@pytest.mark.parametrize('bad', BAD_IDS)
def test_fetch_attachment_command_with_an_id_outside_jiras_shape_is_refused(hub, queue_settings,
                                                                            bad):
    queue_settings(hub)
    with pytest.raises(ValidationError) as refused:
        queue.create_batch(hub, title='t', commands=[
            {'type': 'fetch_attachment', 'params': {'attachment_id': bad}}])
    assert list(refused.value.fields) == ['commands[0].params.attachment_id']
