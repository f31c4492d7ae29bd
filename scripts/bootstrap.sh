#!/usr/bin/env bash
# Creates ./.venv (Python >= 3.11) and installs sdlc-hub with its test extras into it.
# Re-running is cheap: the install is skipped while setup.cfg is unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
  for candidate in python3.13 python3.12 python3.11 python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      PYTHON=$candidate; break
    fi
  done
fi
if [ -z "$PYTHON" ]; then
  echo "sdlc-hub needs Python 3.11 or newer on PATH (or set PYTHON=...)" >&2
  exit 1
fi

if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.sdlc-hub-installed
want=$(cat setup.cfg pyproject.toml | cksum)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e '.[test]'
  echo "$want" > "$stamp"
fi
