"""The demo's fake Jira REST server in a process of its own (benchmarks; trying the agent by hand).

    python scripts/fake_jira.py --issues 1000 --deployment Server --token demo-jira-token
    SDLC_HUB_AGENT_TOKEN=<agent token> JIRA_TOKEN=demo-jira-token \\
        .venv/bin/sdlc-hub agent --hub http://127.0.0.1:8640 --jira <the printed URL> --once

Prints ``fake-jira listening on http://127.0.0.1:<port>`` first, then serves until SIGTERM/Ctrl+C.
Cloud (``--deployment Cloud``) takes Basic ``--user``:``--token`` (the agent's ``--jira-user``).
The Jira is ``hubweb.demo.fake_jira.FakeJira`` served by ``hubweb.demo.jira_rest.JiraRest``; this
file is only their command line.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from waitress.server import create_server  # noqa: E402

from hubweb.demo.fake_jira import AGENT_LOGIN, USERS, FakeJira  # noqa: E402
from hubweb.demo.jira_rest import CLOUD, SERVER, JiraRest  # noqa: E402

LISTENING = 'fake-jira listening on '


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='fake_jira', description=__doc__.split('\n')[0])
    parser.add_argument('--issues', type=int, default=200, help='generated issues')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--project-key', default='AURORA')
    parser.add_argument('--labels', default='AWPCA,ORION,VEGA')
    parser.add_argument('--changes-per-issue', type=int, default=3)
    parser.add_argument('--deployment', choices=(SERVER, CLOUD), default=SERVER)
    parser.add_argument('--token', default='demo-jira-token')
    parser.add_argument('--user', default=USERS[AGENT_LOGIN][1], help='Cloud: the e-mail of Basic')
    parser.add_argument('--state-file', type=Path, default=None,
                        help='keep what is written into this Jira here (and read it back)')
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, default=0)
    parser.add_argument('--threads', type=int, default=4)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    jira = FakeJira(args.issues, seed=args.seed, project_key=args.project_key,
                    labels=tuple(label for label in args.labels.split(',') if label),
                    changes_per_issue=args.changes_per_issue, state_file=args.state_file)
    app = JiraRest(jira, deployment=args.deployment, token=args.token, user=args.user)
    server = create_server(app, host=args.host, port=args.port, threads=args.threads,
                           ident='fake-jira')
    app.base_url = f'http://{args.host}:{server.effective_port}'
    print(LISTENING + app.base_url, flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
