"""The agent's HTTP: a keep-alive connection the server closed while it sat idle is never the
reason a write fails (its outcome would be unknown); the token never follows a redirect to
another host."""
from __future__ import annotations

import threading
import time

from waitress.server import create_server

from hubweb.demo.jira_rest import Server
from hubweb.jira_agent.transport import Transport


def echo(environ, start_response):
    length = int(environ.get('CONTENT_LENGTH') or 0)
    body = environ['wsgi.input'].read(length)
    auth = environ.get('HTTP_AUTHORIZATION', '-').encode()
    if environ['PATH_INFO'] == '/away':
        start_response('302 Found', [('Location', environ['QUERY_STRING']), ('Content-Length', '0')])
        return [b'']
    raw = environ['REQUEST_METHOD'].encode() + b' ' + body + b' ' + auth
    start_response('200 OK', [('Content-Length', str(len(raw)))])
    return [raw]


def test_a_write_after_the_server_closed_the_idle_connection_goes_on_a_new_one():
    server = create_server(echo, host='127.0.0.1', port=0, channel_timeout=1, cleanup_interval=1)
    url = f'http://127.0.0.1:{server.effective_port}'
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        transport = Transport()
        assert transport.request('GET', url + '/').status == 200
        time.sleep(2.5)  # waitress closes the idle connection after about a second
        answer = transport.request('POST', url + '/', body=b'write')  # never retried on its own
        assert (answer.status, answer.body) == (200, b'POST write -')
    finally:
        server.close()


def test_a_redirect_to_another_host_does_not_carry_the_token():
    first, second = Server(echo), Server(echo)
    try:
        transport = Transport()
        other = second.url.replace('127.0.0.1', 'localhost')
        answer = transport.request('GET', f'{first.url}/away?{other}/file',
                                   headers={'Authorization': 'Bearer secret'}, follow_redirects=True)
        assert answer.body == b'GET  -'
        same = transport.request('GET', f'{first.url}/away?{first.url}/file',
                                 headers={'Authorization': 'Bearer secret'}, follow_redirects=True)
        assert same.body == b'GET  Bearer secret'
    finally:
        first.close()
        second.close()
