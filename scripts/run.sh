#!/usr/bin/env bash
# Bootstraps the virtualenv and serves the hub on ./hub-data (or $SDLC_HUB_DATA).
# Extra arguments go to `sdlc-hub serve`, e.g. scripts/run.sh --port 9000
# scripts/run.sh --demo serves a demo hub on ./hub-demo instead: its own directory, never the real one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/sdlc-hub serve "$@"
