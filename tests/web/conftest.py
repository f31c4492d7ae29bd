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


# --- appended by the hubweb owner (issue 3): the app's own routing table for matrix tests --------

# A plausible value for each path parameter name; unknown names get 'x'.
PATH_SAMPLES = {'label': 'NOPE', 'key': 'AURORA-999999', 'id': '999999', 'sha256': '0' * 64,
                'attachment_id': '999999', 'command_id': '999999', 'batch_id': '999999'}


def public_methods(app) -> list[tuple[str, str]]:
    """Every (uri template, HTTP method) a resource of ``app`` really responds to."""
    from falcon import inspect
    return [(route.path, method.method) for route in inspect.inspect_routes(app)
            for method in route.methods if not method.internal]


def sample_path(template: str) -> str:
    """``template`` with every ``{param}`` replaced by a sample value."""
    import re
    return re.sub(r'{(\w+)}', lambda m: PATH_SAMPLES.get(m.group(1), 'x'), template)


@pytest.fixture
def app_methods(app):
    """(uri template, method, sample path) of every route and responder the app registered."""
    return [(template, method, sample_path(template)) for template, method in public_methods(app)]
