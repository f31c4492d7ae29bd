"""The README's promises: its Python example runs, its commands exist."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / 'README.md').read_text(encoding='utf-8')


def test_readme_python_example_runs_and_prints_the_base_jql():
    example = re.search(r'```python\n(.*?)```', README, re.S).group(1)
    result = subprocess.run([sys.executable, '-c', example], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    assert 'project = AURORA AND labels in ("AWPCA", "STOCKS_DRRK")' in result.stdout
    assert 'queued queued' in result.stdout


def test_readme_commands_exist_and_ci_runs_the_test_command():
    for script in ('scripts/run.sh', 'scripts/test.sh', 'scripts/run.cmd', 'scripts/test.cmd',
                   'scripts/run.ps1', 'scripts/test.ps1', 'scripts/bootstrap.sh',
                   'scripts/bootstrap.ps1'):
        assert (ROOT / script).is_file(), script
    for command in ('scripts/run.sh', 'scripts/test.sh', 'scripts\\run.cmd', 'scripts\\test.cmd'):
        assert f'`{command}`' in README, command
    assert 'scripts/test.sh' in (ROOT / '.ci' / 'run').read_text()
