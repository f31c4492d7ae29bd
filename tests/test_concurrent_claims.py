"""Two agent processes claim and report against a real waitress server at the same time.

Each worker is a separate Python process speaking HTTP with stdlib ``urllib`` and logging every
delivery (command id, delivery number, monotonic claim/report times) to its own file, while the
test process keeps queueing batches. Checked afterwards, from the workers' own logs:
no ``database is locked`` and no 5xx anywhere; no delivery (command, delivery number) handed out
twice — two claims at the same moment are serialized by ``BEGIN IMMEDIATE`` and never both take
the same step of one command; every command delivered ended ``done``; the hub's ``deliveries``
matches the log.

Both workers are agents of module ``jira`` on purpose, to make claims collide. The contract
assumes one agent per module: when one worker asks while the other holds a command, the hub
treats that delivery as lost and hands the command out again (delivery 2, listed in
``redelivered``). Two deliveries of one command can therefore be open at once here only as a
redelivery with a higher number, never as the same step twice, which is what the test asserts.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.request
from collections import defaultdict

import pytest

DURATION_SECONDS = 30
WORKERS = 2
INITIAL_BATCHES = 10
COMMANDS_PER_BATCH = 100

WORKER = r'''
import json, random, sys, time, urllib.error, urllib.request

url, token, log_path, duration, seed = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
rng = random.Random(seed)

def call(path, body):
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method='POST',
                                     headers={'Authorization': 'Bearer ' + token,
                                              'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()

deadline = time.monotonic() + duration
with open(log_path, 'w') as log:
    while time.monotonic() < deadline:
        asked = time.monotonic()
        status, text = call('/agent/claim', {'agent': 'jira', 'agent_version': '15'})
        claimed = time.monotonic()
        if status != 200:
            log.write(json.dumps({'error': status, 'body': text[:500], 'at': claimed}) + '\n')
            continue
        delivery = json.loads(text)['command']
        if delivery is None:
            time.sleep(0.01)
            continue
        time.sleep(rng.random() * 0.01)  # "executing" in Jira
        reporting = time.monotonic()
        status, text = call('/agent/commands/%d/report' % delivery['id'],
                            {'agent': 'jira', 'status': 'done', 'result': {}, 'jira_calls': 1,
                             'rate_limited': 0})
        log.write(json.dumps({'id': delivery['id'], 'delivery': delivery['deliveries'],
                              'asked': asked, 'claimed': claimed, 'reported': reporting,
                              'report_status': status, 'report_body': text[:500] if status != 200 else '',
                              'late': status == 200 and json.loads(text).get('late')}) + '\n')
'''


def _request(server, method, path, body=None):
    request = urllib.request.Request(
        server['url'] + path, method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={'Authorization': f'Bearer {server["client_token"]}',
                 'Content-Type': 'application/json'})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def _post_batch(server, number):
    commands = [{'type': 'add_comment', 'params': {'key': f'AURORA-{number}', 'body': str(n)}}
                for n in range(COMMANDS_PER_BATCH)]
    return _request(server, 'POST', '/batches', {'title': f'нагрузка {number}', 'author': 'test',
                                                 'commands': commands})['id']


@pytest.mark.slow
def test_two_agent_processes_claim_concurrently(live_server, tmp_path):
    batch_ids = [_post_batch(live_server, n) for n in range(INITIAL_BATCHES)]
    script = tmp_path / 'worker.py'
    script.write_text(WORKER)
    logs = [tmp_path / f'worker-{n}.jsonl' for n in range(WORKERS)]
    workers = [subprocess.Popen([sys.executable, str(script), live_server['url'],
                                 live_server['agent_token'], str(log), str(DURATION_SECONDS), str(n)])
               for n, log in enumerate(logs)]
    stop = threading.Event()
    feeder_errors: list[BaseException] = []

    def feed():  # a third writer: interfaces keep queueing while the agents work
        number = INITIAL_BATCHES
        while not stop.wait(1.0):
            try:
                batch_ids.append(_post_batch(live_server, number))
            except BaseException as exc:  # reported by the assertion below
                feeder_errors.append(exc)
                return
            number += 1

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        for worker in workers:
            assert worker.wait(DURATION_SECONDS + 60) == 0
    finally:
        stop.set()
        feeder.join()
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
    assert not feeder_errors

    entries = [json.loads(line) | {'worker': n}
               for n, log in enumerate(logs) for line in log.read_text().splitlines()]
    errors = [e for e in entries if 'error' in e]
    assert not errors, errors[:5]
    deliveries = [e for e in entries if 'id' in e]
    assert all(e['report_status'] == 200 for e in deliveries), \
        [e for e in deliveries if e['report_status'] != 200][:5]
    assert not any('locked' in e.get('report_body', '') for e in deliveries)
    assert len(deliveries) > 200, 'the workers should have done real work'
    assert {e['worker'] for e in deliveries} == set(range(WORKERS))

    by_command = defaultdict(list)
    for entry in deliveries:
        by_command[entry['id']].append(entry)
    for command_id, items in by_command.items():
        numbers = sorted(e['delivery'] for e in items)
        # Never the same step of one command twice, and numbers without gaps: 1, 2, 3.
        assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) <= 3, (command_id, items)
        opened = sorted(items, key=lambda e: e['claimed'])
        for earlier, later in zip(opened, opened[1:]):
            if later['claimed'] < earlier['reported']:  # both open at once: only as a redelivery
                assert later['delivery'] != earlier['delivery'] and later['worker'] != earlier['worker']

    # Every batch: the posted ones and the hub's «Обновление после записи» for each finished one.
    listed = _request(live_server, 'GET', '/batches?limit=1000')['items']
    assert set(batch_ids) <= {item['id'] for item in listed}
    states = {}
    for batch_id in (item['id'] for item in listed):
        for command in _request(live_server, 'GET', f'/batches/{batch_id}')['commands']:
            states[command['id']] = command
    for command_id, items in by_command.items():
        assert states[command_id]['status'] == 'done', states[command_id]
        assert states[command_id]['deliveries'] == len(items)
    # Every command handed out before the last one of the run was handed out too: no skipping.
    last = max(by_command)
    assert all(command_id in by_command for command_id in states if command_id < last)
    redelivered = sum(1 for items in by_command.values() if len(items) > 1)
    print(f'\n{len(deliveries)} deliveries of {len(by_command)} commands in {DURATION_SECONDS} s, '
          f'{redelivered} redelivered')
