"""``scripts/bench_load.py`` runs end to end on a tiny mirror and prints every acceptance figure
of issue 31 (the real measurement is 100,000 issues for 60 s, on a quiet machine)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_load_benchmark_prints_the_acceptance_figures(tmp_path):
    result = subprocess.run(
        [sys.executable, 'scripts/bench_load.py', '--issues', '2000', '--seconds', '4',
         '--clients', '4', '--idle-samples', '5', '--idle-pages', '2',
         '--data', str(tmp_path / 'hub'), '--json', str(tmp_path / 'load.json')],
        capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    for line in ('/health p95 loaded:', 'agent state p95:', 'agent history p95:', '5xx:',
                 'RSS: before', 'hostile queries'):
        assert line in result.stdout, line
    figures = json.loads((tmp_path / 'load.json').read_text())
    assert figures['health_p95_ms'] is not None and set(figures['agent_ratios']) == {
        'agent state', 'agent history'}
    assert all(found['answers'] >= 1 for found in figures['hostile'].values())
