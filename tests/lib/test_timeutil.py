"""Time normalization (contract §3): one parser for Jira time, one format for hub time."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from hublib.timeutil import format_utc, minutes_before, parse_utc, to_utc


@pytest.mark.parametrize('text, expected', [
    # the contract's examples
    ('2026-10-22T09:00:00.000+0300', '2026-10-22T06:00:00+00:00'),
    ('2026-10-22T13:05:11.000+0300', '2026-10-22T10:05:11+00:00'),
    ('2026-10-22T06:00:00Z', '2026-10-22T06:00:00+00:00'),
    ('garbage', None),
    # offsets
    ('2026-10-22T09:00:00+0300', '2026-10-22T06:00:00+00:00'),
    ('2026-10-22T09:00:00+03:00', '2026-10-22T06:00:00+00:00'),
    ('2026-10-22T09:00:00-05:00', '2026-10-22T14:00:00+00:00'),
    ('2026-10-22T09:00:00-0500', '2026-10-22T14:00:00+00:00'),
    ('2026-10-22T09:00:00+05:30', '2026-10-22T03:30:00+00:00'),
    ('2026-10-22T09:00:00+00:00', '2026-10-22T09:00:00+00:00'),
    ('2026-10-22T09:00:00-00:00', '2026-10-22T09:00:00+00:00'),
    ('2026-10-22T09:00:00z', '2026-10-22T09:00:00+00:00'),
    # crossing a day, a month and a year
    ('2026-01-01T01:00:00.000+0300', '2025-12-31T22:00:00+00:00'),
    ('2026-02-28T22:00:00-05:00', '2026-03-01T03:00:00+00:00'),
    # no offset means UTC
    ('2026-10-22T09:00:00', '2026-10-22T09:00:00+00:00'),
    ('2026-10-22T09:00:00.123', '2026-10-22T09:00:00+00:00'),
    # space between date and time
    ('2026-10-22 09:00:00+0300', '2026-10-22T06:00:00+00:00'),
    ('2026-10-22 09:00:00', '2026-10-22T09:00:00+00:00'),
    # no seconds
    ('2026-10-22T09:00+0300', '2026-10-22T06:00:00+00:00'),
    # unparseable
    (None, None),
    ('', None),
    ('   ', None),
    ('2026-10-22', None),
    ('09:00:00', None),
    ('2026-13-01T00:00:00Z', None),
    ('2026-02-30T00:00:00Z', None),
    ('2026-10-22T25:00:00Z', None),
    ('2026-10-22T09:00:00+2500', None),
    ('2026-10-22T09:00:00+03:99', None),
    # Jira's own 28-character shape with a broken offset or fraction (the fast path's edges)
    ('2026-10-22T09:00:00.000+0370', None),
    ('2026-10-22T09:00:00.000+03.0', None),
    ('2026-10-22T09:00:00.000+2400', None),
    ('2026-10-22T09:00:00.0a0+0300', None),
    ('2026-10-22T09:00:00.\u0663\u0663\u0663+0300', None),
    ('2026-10-22T09:00:00.000-0530', '2026-10-22T14:30:00+00:00'),
    ('2026-10-22T09:00:00.000+0000', '2026-10-22T09:00:00+00:00'),
    ('2026-10-22T23:59:60.000+0300', '2026-10-22T20:59:59+00:00'),
    ('0001-01-01T01:00:00.000+0300', None),
    ('2026-10-22T09:00:00 +0300 tail', None),
    ('вчера', None),
    (1761112800, None),
    (b'2026-10-22T09:00:00Z', None),
])
def test_to_utc(text, expected):
    assert to_utc(text) == expected


@pytest.mark.parametrize('digits', range(1, 10))
@pytest.mark.parametrize('offset, expected', [
    ('+0300', '2026-10-22T06:00:00+00:00'),
    ('+03:00', '2026-10-22T06:00:00+00:00'),
    ('-05:00', '2026-10-22T14:00:00+00:00'),
    ('Z', '2026-10-22T09:00:00+00:00'),
    ('', '2026-10-22T09:00:00+00:00'),
])
def test_to_utc_truncates_any_fraction(digits, offset, expected):
    fraction = '9' * digits
    assert to_utc(f'2026-10-22T09:00:00.{fraction}{offset}') == expected


def test_to_utc_jira_shape_agrees_with_the_general_path():
    # every 28-character Jira time is also read by the general path (a space instead of 'T'
    # takes it there): both must give the same answer for every offset and fraction
    for hours in range(0, 26):
        for minutes in (0, 30, 59, 60, 99):
            for sign in '+-':
                for fraction in ('000', '999', '5a5'):
                    jira = f'2026-10-22T09:00:00.{fraction}{sign}{hours:02d}{minutes:02d}'
                    assert to_utc(jira) == to_utc(jira.replace('T', ' ')), jira


def test_to_utc_output_is_hub_format_and_parses_back():
    text = to_utc('2026-10-22T09:00:00.000+0300')
    assert parse_utc(text) == datetime(2026, 10, 22, 6, tzinfo=timezone.utc)
    assert format_utc(parse_utc(text)) == text


@pytest.mark.parametrize('moment, expected', [
    (datetime(2026, 11, 30, 10, 0, 0, 999999, tzinfo=timezone.utc), '2026-11-30T10:00:00+00:00'),
    (datetime(2026, 11, 30, 13, 0, tzinfo=timezone(timedelta(hours=3))), '2026-11-30T10:00:00+00:00'),
    (datetime(2026, 11, 30, 10, 0), '2026-11-30T10:00:00+00:00'),
])
def test_format_utc(moment, expected):
    assert format_utc(moment) == expected


def test_minutes_before():
    assert minutes_before('2026-11-30T10:00:00+00:00', 90) == '2026-11-30T08:30:00+00:00'
