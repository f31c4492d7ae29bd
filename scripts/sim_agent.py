"""Simulated jira agent against a generated Jira, speaking the real agent protocol over HTTP.

    python scripts/sim_agent.py --url http://127.0.0.1:8640 --token <agent token> \
        --issues 1000 --seed 3 --lose-reports 0.1 --rate-limit 0.05 --until-idle

All options: ``--help``. The agent and the fake Jira are ``hubweb.demo.agent`` and
``hubweb.demo.fake_jira`` (shipped: ``sdlc-hub serve --demo`` runs them); this file is only their
command line, for benchmarks and for trying an agent by hand.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hubweb.demo.agent import Faults, SimAgent  # noqa: E402
from hubweb.demo.fake_jira import FakeJira  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='sim_agent',
                                     description='Simulated jira agent against a generated Jira.')
    parser.add_argument('--url', default='http://127.0.0.1:8640', help='hub URL')
    parser.add_argument('--token', required=True, help='agent token (sdlc-hub tokens)')
    parser.add_argument('--issues', type=int, default=200, help='issues in the fake Jira')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--project-key', default='AURORA')
    parser.add_argument('--labels', default=','.join(('AWPCA', 'ORION', 'VEGA')))
    parser.add_argument('--changes-per-issue', type=int, default=3)
    parser.add_argument('--lose-reports', type=float, default=0.0, metavar='P')
    parser.add_argument('--crash-before-report', type=float, default=0.0, metavar='P')
    parser.add_argument('--duplicate-reports', type=float, default=0.0, metavar='P')
    parser.add_argument('--rate-limit', type=float, default=0.0, metavar='P',
                        help='probability that a Jira call answers 429')
    parser.add_argument('--time-scale', type=float, default=0.0,
                        help='multiplier of pacing pauses (1 = real pacing, 0 = none)')
    parser.add_argument('--command-delay', type=float, default=0.0, help='seconds per command')
    parser.add_argument('--poll', type=float, default=1.0, help='seconds between idle claims')
    parser.add_argument('--seconds', type=float, default=None, help='stop after this long')
    parser.add_argument('--max-commands', type=int, default=None)
    parser.add_argument('--until-idle', action='store_true', help='stop when the queue is empty')
    return parser


def main(argv: list[str] | None = None) -> int:
    """CLI: run a simulated agent; print its counters as JSON when it stops."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(message)s')
    jira = FakeJira(issues=args.issues, seed=args.seed, project_key=args.project_key,
                    labels=tuple(label for label in args.labels.split(',') if label),
                    changes_per_issue=args.changes_per_issue)
    agent = SimAgent(args.url, args.token, jira, seed=args.seed, time_scale=args.time_scale,
                     poll_interval=args.poll, command_delay=args.command_delay,
                     faults=Faults(lose_report=args.lose_reports,
                                   crash_before_report=args.crash_before_report,
                                   duplicate_report=args.duplicate_reports,
                                   rate_limit=args.rate_limit))
    until = time.monotonic() + args.seconds if args.seconds else None
    try:
        stats = agent.run(until=until, max_commands=args.max_commands, stop_when_idle=args.until_idle)
    except KeyboardInterrupt:
        stats = agent.stats
    print(json.dumps(dict(stats), ensure_ascii=False, sort_keys=True))
    return 0


if __name__ == '__main__':
    sys.exit(main())
