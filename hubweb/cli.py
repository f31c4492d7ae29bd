"""``sdlc-hub`` command line (contract §12): translates arguments and errors, nothing else.

Exit codes: 0 success, 2 usage error (argparse), 1 failure with one line on stderr.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from peewee import DatabaseError

from hublib import HubError, __version__, open_hub, settings
from hublib.errors import ValidationError
from hublib.db import Hub, default_data_dir
from hublib.models import SCHEMA_VERSION
from hublib.settings import TOKEN_ROLES

from . import limits

log = logging.getLogger('hubweb.cli')


class RussianHelpFormatter(argparse.HelpFormatter):
    """argparse's help layout with the usage line in Russian."""

    def add_usage(self, usage, actions, groups, prefix=None) -> None:
        super().add_usage(usage, actions, groups, 'использование: ' if prefix is None else prefix)


# argparse's own messages (its English comes from gettext) as this CLI says them: the first
# pattern that matches the whole message wins; ``{0}``… are its groups.
_ARGPARSE_MESSAGES = tuple((re.compile(pattern, re.DOTALL), text) for pattern, text in (
    (r'the following arguments are required: (.*)', 'не указаны обязательные аргументы: {0}'),
    (r'unrecognized arguments: (.*)', 'неизвестные аргументы: {0}'),
    (r'ambiguous option: (\S+) could match (.*)', 'неоднозначный параметр {0}: подходят {1}'),
    (r'one of the arguments (.*) is required', 'нужен один из аргументов: {0}'),
    (r'argument (.+?): invalid choice: (.+?) \(choose from (.*)\)',
     'аргумент {0}: неверное значение {1} (допустимы: {2})'),
    (r'argument (.+?): expected one argument', 'аргумент {0}: нужно значение'),
    (r'argument (.+?): expected at most one argument', 'аргумент {0}: не больше одного значения'),
    (r'argument (.+?): expected at least one argument', 'аргумент {0}: нужно хотя бы одно значение'),
    (r'argument (.+?): expected (\S+) arguments?', 'аргумент {0}: нужно значений: {1}'),
    (r'argument (.+?): invalid \S+ value: (.*)', 'аргумент {0}: неверное значение {1}'),
    (r'argument (.+?): not allowed with argument (.*)', 'аргумент {0}: нельзя вместе с {1}'),
    (r'argument (.+?): ignored explicit argument (.*)', 'аргумент {0}: лишнее значение {1}'),
    (r'argument (.+?): (.*)', 'аргумент {0}: {1}'),
))


def russian(message: str) -> str:
    """An argparse error message in Russian (one it does not know stays as it is)."""
    for pattern, text in _ARGPARSE_MESSAGES:
        found = pattern.fullmatch(message)
        if found:
            return text.format(*(russian(group) if group.startswith('argument ') else group
                                 for group in found.groups()))
    return message


class RussianArgumentParser(argparse.ArgumentParser):
    """argparse's parser speaking Russian: usage, help and errors (exit code 2 as before).

    A subclass, not a patch of argparse's module: other parsers in the process are untouched.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault('formatter_class', RussianHelpFormatter)
        add_help = kwargs.pop('add_help', True)
        super().__init__(*args, add_help=False, **kwargs)
        self._positionals.title = 'позиционные аргументы'
        self._optionals.title = 'параметры'
        if add_help:
            self.add_argument('-h', '--help', action='help', default=argparse.SUPPRESS,
                              help='показать эту справку и выйти')

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(2, f'{self.prog}: ошибка: {russian(message)}\n')


def _int_in(low: int, high: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'ожидается целое число, получено {text!r}') from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f'ожидается число от {low} до {high}')
        return value
    return parse


def _tool_names(text: str) -> list[str]:
    from .mcp_server import TOOL_NAMES  # the MCP SDK loads only for ``mcp``
    names = [name.strip() for name in text.split(',') if name.strip()]
    unknown = [name for name in names if name not in TOOL_NAMES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f'неизвестный инструмент: {", ".join(unknown)}; есть: {", ".join(TOOL_NAMES)}'
            if unknown else 'ожидается список инструментов через запятую')
    return names


def _origin(text: str) -> str:
    from .mcp_server.http import origin_of
    try:
        return origin_of(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _url(text: str) -> str:
    from .jira_agent import check_url
    try:
        return check_url(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'ожидается число секунд, получено {text!r}') from None
    if not 0 <= value <= 3600:
        raise argparse.ArgumentTypeError('ожидается число секунд от 0 до 3600')
    return value


def _parser() -> argparse.ArgumentParser:
    parser = RussianArgumentParser(prog='sdlc-hub',
                                   description='sdlc-hub: зеркало Jira и очередь команд агента')
    parser.add_argument('--version', action='version', help='показать версию и выйти',
                        version=f'sdlc-hub {__version__} (схема базы v{SCHEMA_VERSION})')
    commands = parser.add_subparsers(dest='command', required=True, metavar='команда',
                                     title='команды')

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument('--data', type=Path, default=None,
                         help='каталог данных (по умолчанию $SDLC_HUB_DATA или ./hub-data; '
                              'для serve --demo — ./hub-demo)')
        return sub

    init = command('init', 'создать/открыть базу и импортировать настройки из конфига jira-sync')
    init.add_argument('--config', type=Path, required=True, help='JSON-конфиг jira-sync')
    command('migrate', 'создать или обновить схему базы и выйти')
    tokens = command('tokens', 'напечатать токены агента и клиента')
    tokens.add_argument('--rotate', choices=TOKEN_ROLES, metavar='{agent,client}',
                        help='выдать этой роли новый токен (старый перестаёт действовать; '
                             'запущенный сервер примет новый сразу, старый отвергнет через '
                             'секунду)')
    serve = command('serve', 'запустить HTTP-сервер (waitress)')
    serve.add_argument('--host', default='127.0.0.1')
    serve.add_argument('--port', type=_int_in(0, 65535), default=8640,
                       help='порт (0 — любой свободный; адрес печатается первой строкой)')
    serve.add_argument('--threads', type=_int_in(1, 256), default=limits.THREADS,
                       help='рабочих потоков для запросов интерфейсов (всё, кроме /agent/*, '
                            f'/health и страницы); по умолчанию {limits.THREADS}')
    serve.add_argument('--agent-threads', type=_int_in(1, 64), default=limits.AGENT_THREADS,
                       metavar='N', help='рабочих потоков для /agent/*; по умолчанию '
                                         f'{limits.AGENT_THREADS}')
    serve.add_argument('--connection-limit', type=_int_in(1, 100000), metavar='N',
                       default=limits.CONNECTION_LIMIT,
                       help='сколько соединений держать открытыми (простаивающие тоже); '
                            f'по умолчанию {limits.CONNECTION_LIMIT}')
    serve.add_argument('--channel-timeout', type=_int_in(1, 86400), metavar='СЕКУНД',
                       default=limits.CHANNEL_TIMEOUT,
                       help='через сколько секунд простоя закрыть соединение; '
                            f'по умолчанию {limits.CHANNEL_TIMEOUT}')
    serve.add_argument('--demo', action='store_true',
                       help='демо: проекты, настройки, фальшивая Jira и агент между ней и хабом, в своём '
                            'каталоге (по умолчанию ./hub-demo); чужой непустой каталог не трогает')
    mcp = command('mcp', 'MCP-сервер для ИИ-ассистентов: stdio, с --http — streamable HTTP')
    mcp.add_argument('--http', action='store_true', help='streamable HTTP на /mcp вместо stdio')
    mcp.add_argument('--host', default='127.0.0.1', help='адрес для --http')
    mcp.add_argument('--port', type=_int_in(0, 65535), default=8641,
                     help='порт для --http (0 — любой свободный; адрес печатается первой строкой)')
    mcp.add_argument('--read-only', action='store_true',
                     help='только инструменты чтения: ничего не пишет ни в заметки, ни в очередь')
    mcp.add_argument('--tools', type=_tool_names, default=None, metavar='a,b,…',
                     help='только эти инструменты (через запятую)')
    mcp.add_argument('--allow-origin', type=_origin, action='append', default=[], metavar='URL',
                     help='для --http: ещё один разрешённый источник (Origin) и его адрес (Host), '
                          'например https://hub.example.com; можно несколько раз')
    # No abbreviations: ``--jira-token SECRET`` must be an unknown option, not --jira-token-file
    # with the secret for a path (which the error would then print).
    agent = commands.add_parser(
        'agent', allow_abbrev=False,
        help='агент Jira: выполнять команды хаба в Jira (Cloud или Data Center)',
        description='Агент Jira: берёт команды из очереди хаба, выполняет их в Jira и присылает '
                    'прочитанное. Токены — только из переменных окружения или файлов: токен '
                    'агента хаба — SDLC_HUB_AGENT_TOKEN или --hub-token-file, токен Jira — '
                    'JIRA_TOKEN или --jira-token-file (Cloud: API-токен вместе с --jira-user; '
                    'Data Center: персональный токен доступа, без --jira-user).')
    agent.add_argument('--hub', required=True, type=_url, metavar='URL', help='адрес хаба')
    agent.add_argument('--jira', required=True, type=_url, metavar='URL', help='адрес Jira')
    agent.add_argument('--jira-user', metavar='EMAIL',
                       help='Jira Cloud: e-mail учётной записи (Basic с API-токеном); без него — '
                            'Data Center с персональным токеном (Bearer)')
    agent.add_argument('--module', default='jira', help='модуль агента (по умолчанию jira)')
    agent.add_argument('--once', action='store_true',
                       help='выполнить всё, что есть в очереди, и выйти (для скриптов)')
    agent.add_argument('--hub-token-file', type=Path, metavar='ФАЙЛ',
                       help='файл с токеном агента хаба (иначе SDLC_HUB_AGENT_TOKEN)')
    agent.add_argument('--jira-token-file', type=Path, metavar='ФАЙЛ',
                       help='файл с токеном Jira (иначе JIRA_TOKEN)')
    agent.add_argument('--poll', type=_seconds, default=3.0, metavar='СЕКУНД',
                       help='как часто спрашивать хаб, когда команд нет (по умолчанию 3)')
    agent.add_argument('--index-lag', type=_seconds, default=5.0, metavar='СЕКУНД',
                       help='сколько ждать индекса поиска Jira, прежде чем повторно выданная '
                            'команда заведёт задачу, которую не нашла (по умолчанию 5)')
    command('backup', 'сделать резервную копию базы в backups/')
    cleanup = command('cleanup', 'убрать из files/ файлы, на которые нет ссылок')
    cleanup.add_argument('--dry-run', action='store_true', help='только показать, ничего не удалять')
    return parser


@contextmanager
def _hub(args, *, create: bool = True, guard_mirror: bool = False) -> Iterator[Hub]:
    hub = open_hub(args.data, create=create, guard_mirror=guard_mirror)
    try:
        yield hub
    finally:
        hub.close()


def _init(args) -> None:
    from hublib import config as config_import
    try:
        config = json.loads(args.config.read_text(encoding='utf-8-sig'))  # Notepad writes a BOM
    except OSError as exc:
        raise HubError(f'не удалось прочитать конфиг {args.config}: {exc.strerror}') from None
    except ValueError as exc:
        raise HubError(f'конфиг {args.config} — не JSON: {exc}') from None
    if not isinstance(config, dict):
        raise HubError(f'конфиг {args.config} должен быть JSON-объектом')
    with _hub(args) as hub:
        result = config_import.import_config(hub, config)
        created = ', '.join(result['projects_created']) or 'нет'
        print(f'настройки импортированы в {hub.data_dir}; новые проекты: {created}')


def _migrate(args) -> None:
    with _hub(args) as hub:
        old = hub.opened_at_version
    if old is None:
        print(f'schema v{SCHEMA_VERSION} (created)')
    elif old == SCHEMA_VERSION:
        print(f'schema v{SCHEMA_VERSION} (up to date)')
    else:
        print(f'schema v{old} -> v{SCHEMA_VERSION}')


def _tokens(args) -> None:
    with _hub(args, create=False) as hub:
        if args.rotate:
            print(json.dumps(settings.rotate_token(hub, args.rotate)))
        else:
            print(json.dumps(settings.tokens(hub)))


def _serve(args) -> None:
    from .serve import listen_sockets, serve  # falcon and waitress load only to serve
    if args.demo:
        from .demo import claim_demo_directory
        claim_demo_directory(args.data)  # refuses a real hub before a byte of it is touched
    # Bound before the hub is opened: a wrong --host or a busy port creates nothing (on a new
    # directory no database, no tokens).
    sockets = listen_sockets(args.host, args.port)
    try:
        logging.basicConfig(level=logging.INFO,
                            format='%(asctime)s %(levelname)s %(name)s: %(message)s')
        hub = open_hub(args.data)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    serve(hub, host=args.host, sockets=sockets, threads=args.threads,
          agent_threads=args.agent_threads, demo=args.demo,
          connection_limit=args.connection_limit, channel_timeout=args.channel_timeout)


def _mcp(args) -> None:
    # stdio: stdout carries the protocol only; every log line goes to stderr (main's basicConfig).
    from .mcp_server import chosen_tools, serve_http, serve_stdio
    try:
        tools = chosen_tools(read_only=args.read_only, names=args.tools)
    except ValidationError as error:  # --tools names a writing tool beside --read-only
        print(f'sdlc-hub mcp: ошибка: {"; ".join(error.fields["tools"])}', file=sys.stderr)
        raise SystemExit(2) from None
    # An existing hub only (a mistyped path must not become a new hub); an interface: the
    # mirror guard is on.
    with _hub(args, create=False, guard_mirror=True) as hub:
        if args.http:
            # The hub's own lines (not the SDK's per-request ones) at INFO, as for ``serve``.
            logging.getLogger('hubweb').setLevel(logging.INFO)
            try:
                serve_http(hub, host=args.host, port=args.port, allow_origins=args.allow_origin,
                           tools=tools, announce=lambda line: print(line, flush=True))
            finally:
                log.info('stopped')
        else:
            serve_stdio(hub, tools=tools)


AGENT_TOKEN_ENV = 'SDLC_HUB_AGENT_TOKEN'
JIRA_TOKEN_ENV = 'JIRA_TOKEN'


def _token(path: Path | None, variable: str, what: str, option: str) -> str:
    """A token from its file or its environment variable, never from the command line."""
    if path is not None:
        try:
            token = path.read_text(encoding='utf-8-sig').strip()
        except OSError as exc:
            raise HubError(f'не удалось прочитать {option} {path}: {exc.strerror}') from None
        if not token:
            raise HubError(f'файл {path} ({option}) пуст')
        return token
    token = os.environ.get(variable, '').strip()
    if not token:
        print(f'sdlc-hub agent: ошибка: нужен {what}: переменная {variable} или {option} ФАЙЛ',
              file=sys.stderr)
        raise SystemExit(2)
    return token


def _agent(args) -> None:
    from . import jira_agent
    hub_token = _token(args.hub_token_file, AGENT_TOKEN_ENV, 'токен агента хаба', '--hub-token-file')
    jira_token = _token(args.jira_token_file, JIRA_TOKEN_ENV, 'токен Jira', '--jira-token-file')
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(name)s: %(message)s')
    agent = jira_agent.build_agent(args.hub, hub_token, args.jira, jira_token,
                                   jira_user=args.jira_user, module=args.module,
                                   poll_interval=args.poll, index_lag=args.index_lag)
    try:
        jira_agent.run(agent, once=args.once)
    except jira_agent.FatalError as error:
        raise HubError(str(error)) from None


def _backup(args) -> None:
    from hublib import backups
    with _hub(args, create=False) as hub:
        path = backups.backup(hub)
    print(f'копия: {path}')


def _cleanup(args) -> None:
    from hublib import files
    with _hub(args, create=False) as hub:
        result = files.cleanup(hub, dry_run=args.dry_run)
    verb = 'будет удалено' if args.dry_run else 'удалено'
    for name in result['removed']:
        print(name)
    print(f'{verb} файлов: {len(result["removed"])}, байт: {result["bytes"]}')


HANDLERS = {'init': _init, 'migrate': _migrate, 'tokens': _tokens, 'serve': _serve,
            'backup': _backup, 'cleanup': _cleanup, 'mcp': _mcp, 'agent': _agent}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``sdlc-hub`` console script."""
    args = _parser().parse_args(argv)
    if getattr(args, 'data', '') is None:  # the agent has no data directory: a hub is an URL to it
        # The demo never defaults to the real hub's directory ($SDLC_HUB_DATA, ./hub-data).
        if getattr(args, 'demo', False):
            from .demo import DEMO_DATA_DIR  # the demo (its fake Jira, the agent) loads only here
            args.data = DEMO_DATA_DIR
        else:
            args.data = default_data_dir()
    if args.command not in ('serve', 'agent'):
        logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(name)s: %(message)s')
    try:
        HANDLERS[args.command](args)
    except HubError as exc:
        return _fail(args.command, exc.message)
    except OSError as exc:
        return _fail(args.command, f'{exc.strerror or exc}: {exc.filename or ""}'.rstrip(': '))
    except DatabaseError as exc:  # e.g. the file is not SQLite at all
        return _fail(args.command, f'база данных: {exc}')
    except KeyboardInterrupt:
        return _fail(args.command, 'прервано')
    return 0


def _fail(command: str, message: str) -> int:
    """One line on stderr (contract §12), exit code 1."""
    print(f'sdlc-hub {command}: ' + ' '.join(str(message).split()), file=sys.stderr)
    return 1


if __name__ == '__main__':
    sys.exit(main())
