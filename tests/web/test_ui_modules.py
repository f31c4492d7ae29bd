"""The page's own modules under node's test runner (``tests/js/*.test.mjs``: the markup renderer,
plurals and times over a tiny DOM). Left out when node is missing, except on CI (``CI=true``)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which('node')
ON_CI = os.environ.get('CI', '').lower() in ('1', 'true', 'yes')


def test_the_page_modules_pass_their_node_tests():
    if NODE is None:
        if ON_CI:
            pytest.fail('node is needed on CI for tests/js (apt-get install nodejs)')
        pytest.skip('node is not installed: tests/js left out')
    tests = sorted(str(path.relative_to(ROOT)) for path in (ROOT / 'tests' / 'js').glob('*.test.mjs'))
    assert tests
    run = subprocess.run([NODE, '--test', *tests], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
