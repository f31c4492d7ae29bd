"""HTTP fixtures: a falcon TestClient over a hub in tmp_path, and the two roles' headers."""
from __future__ import annotations

import pytest
from falcon import testing

from hublib import settings
from hubweb import create_app


@pytest.fixture
def app(hub):
    return create_app(hub)


@pytest.fixture
def client(app):
    return testing.TestClient(app)


@pytest.fixture
def tokens(hub):
    return settings.tokens(hub)


@pytest.fixture
def agent_headers(tokens):
    return {'Authorization': f'Bearer {tokens["agent"]}'}


@pytest.fixture
def client_headers(tokens):
    return {'Authorization': f'Bearer {tokens["client"]}'}
