"""``hubweb.access.Tokens``, the one token check of both HTTP adapters (the Falcon app and the MCP
HTTP gate): a token rotated by another process (``sdlc-hub tokens --rotate``) works at once, the
old one stops within a second, and a request otherwise pays no database read."""
from __future__ import annotations

from hublib import open_hub, settings
from hubweb.access import TOKEN_REREAD_SECONDS, Tokens


class Monotonic:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_rotated_token_works_at_once_and_the_old_one_stops_within_a_second(hub, data_dir):
    clock = Monotonic()
    tokens = Tokens(hub, clock=clock)
    old = settings.tokens(hub)['client']
    header = f'Bearer {old}'
    assert tokens.refusal('client', header) is None
    other = open_hub(data_dir)  # another process: sdlc-hub tokens --rotate client
    try:
        new = settings.rotate_token(other, 'client')['client']
    finally:
        other.close()
    assert tokens.refusal('client', f'Bearer {new}') is None  # no match: read again at once
    clock.now += TOKEN_REREAD_SECONDS
    refusal = tokens.refusal('client', header)
    assert (refusal.status, refusal.description) == (401, 'неверный токен')
    agent = settings.tokens(hub)['agent']
    assert tokens.refusal('agent', f'Bearer {agent}') is None  # the other role kept its token


def test_tokens_are_read_at_most_once_a_second_while_they_match(hub, monkeypatch):
    clock, reads = Monotonic(), []
    real = settings.tokens
    monkeypatch.setattr(settings, 'tokens', lambda h: reads.append(1) or real(h))
    tokens = Tokens(hub, clock=clock)
    header = f'Bearer {real(hub)["client"]}'
    for _ in range(5):
        assert tokens.refusal('client', header) is None
    assert len(reads) == 1
    clock.now += TOKEN_REREAD_SECONDS
    assert tokens.refusal('client', header) is None
    assert len(reads) == 2
