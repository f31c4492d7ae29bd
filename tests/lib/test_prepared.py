"""``hublib.db.Prepared``: a Peewee query built once runs like the query it was built from."""
from __future__ import annotations

import pytest

from hublib.db import Prepared
from hublib.models import IssueLink

LINKS = Prepared(lambda p: IssueLink.select(
    IssueLink.source_key, IssueLink.target_key, IssueLink.link_type)
    .where(((IssueLink.source_key == p('key')) | (IssueLink.target_key == p('key')))
           & (IssueLink.link_type != 'Clones'))
    .order_by(IssueLink.source_key, IssueLink.target_key))


def links_by_peewee(hub, key):
    return list(IssueLink.select(IssueLink.source_key, IssueLink.target_key, IssueLink.link_type)
                .where(((IssueLink.source_key == key) | (IssueLink.target_key == key))
                       & (IssueLink.link_type != 'Clones'))
                .order_by(IssueLink.source_key, IssueLink.target_key).tuples().execute(hub.db))


@pytest.fixture
def linked(hub):
    rows = [('AURORA-1', 'AURORA-2', 'Blocks'), ('AURORA-3', 'AURORA-1', 'Relates'),
            ('AURORA-1', 'AURORA-4', 'Clones'), ('AURORA-2', 'AURORA-3', 'Blocks')]
    with hub.write():
        IssueLink.insert_many(rows, fields=[IssueLink.source_key, IssueLink.target_key,
                                            IssueLink.link_type]).execute(hub.db)
    return hub


@pytest.mark.parametrize('key', ['AURORA-1', 'AURORA-2', 'AURORA-9'])
def test_a_prepared_query_returns_what_its_peewee_query_returns(linked, key):
    assert LINKS.tuples(linked, key=key) == links_by_peewee(linked, key)


def test_a_placeholder_used_twice_takes_one_value_and_constants_stay(linked):
    # 'Clones' is a constant of the query, not a placeholder: AURORA-1's clone link stays out
    assert LINKS.tuples(linked, key='AURORA-1') == [('AURORA-1', 'AURORA-2', 'Blocks'),
                                                    ('AURORA-3', 'AURORA-1', 'Relates')]
    assert LINKS.dicts(linked, key='AURORA-2') == [
        {'source_key': 'AURORA-1', 'target_key': 'AURORA-2', 'link_type': 'Blocks'},
        {'source_key': 'AURORA-2', 'target_key': 'AURORA-3', 'link_type': 'Blocks'}]


def test_a_missing_value_is_an_error_not_a_placeholder_sent_to_sqlite(linked):
    with pytest.raises(KeyError):
        LINKS.tuples(linked, other='AURORA-1')


def test_a_query_without_a_placeholder_is_refused():
    with pytest.raises(ValueError, match='placeholder'):
        Prepared(lambda p: IssueLink.select().where(IssueLink.source_key == 'AURORA-1'))
