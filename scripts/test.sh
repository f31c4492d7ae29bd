#!/usr/bin/env bash
# Bootstraps the virtualenv and runs the whole test suite, slow and browser tests included (plain
# `pytest` runs the fast part only: setup.cfg). Extra arguments go to pytest; a -m among them
# comes last and wins.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/python -m pytest -m "slow or not slow" "$@"
