"""What only tests and benchmarks need, kept out of the shipped packages (STYLE 15):

- ``server.ServerProcess``: a real ``sdlc-hub serve`` in a child process on 127.0.0.1;
- ``load.LoadWorker`` (also ``python -m tests.support.load``): concurrent claim/report and history
  traffic for the concurrency fault test;
- ``bulk``: legacy database files and bulk rows written straight with ``sqlite3``;
- ``hubs``: a byte snapshot of a data directory, a hub set up as a team has it, and a "full
  disk" at SQLite's page limit;
- ``scale``: a Jira mirror of any size written straight into a hub file (``bench_scale``);
- ``timing``: a keep-alive client that times requests, percentiles, process memory, query plans.

The benchmarks in ``scripts/`` put the repository root on ``sys.path`` and import these by their
public names; the fake Jira they drive is the shipped ``hubweb.demo``, the agent ``hubweb.jira_agent``.
"""
