"""Simulated jira agent against a generated Jira, speaking the real agent protocol over HTTP.

    python scripts/sim_agent.py --url http://127.0.0.1:8640 --token <agent token> \
        --issues 1000 --seed 3 --lose-reports 0.1 --rate-limit 0.05 --until-idle

All options: ``--help``. The code lives in ``hubweb.sim`` (reused by tests, benchmarks, the demo).
"""
import sys

from hubweb.sim.agent import main

if __name__ == '__main__':
    sys.exit(main())
