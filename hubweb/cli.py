"""``sdlc-hub`` command line (contract §12): translates arguments and errors, nothing else.

Exit codes: 0 success, 2 usage error (argparse), 1 failure with one line on stderr.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from hublib import HubError, open_hub
from hublib.db import default_data_dir
from hublib.models import SCHEMA_VERSION


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='sdlc-hub', description='sdlc-hub: зеркало Jira и очередь команд агента')
    commands = parser.add_subparsers(dest='command', required=True)

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument('--data', type=Path, default=None,
                         help='каталог данных (по умолчанию $SDLC_HUB_DATA или ./hub-data)')
        return sub

    init = command('init', 'создать/открыть базу и импортировать настройки из конфига jira-sync')
    init.add_argument('--config', type=Path, required=True, help='JSON-конфиг jira-sync')
    command('migrate', 'создать или обновить схему базы и выйти')
    command('tokens', 'напечатать токены агента и клиента')
    serve = command('serve', 'запустить HTTP-сервер (waitress)')
    serve.add_argument('--host', default='127.0.0.1')
    serve.add_argument('--port', type=int, default=8640)
    serve.add_argument('--threads', type=int, default=8)
    serve.add_argument('--demo', action='store_true',
                       help='демо: проект, настройки и симулятор агента с фальшивой Jira')
    command('backup', 'сделать резервную копию базы в backups/')
    cleanup = command('cleanup', 'убрать из files/ файлы, на которые нет ссылок')
    cleanup.add_argument('--dry-run', action='store_true', help='только показать, ничего не удалять')
    return parser


def _init(args) -> None:
    from hublib import settings
    try:
        config = json.loads(args.config.read_text(encoding='utf-8'))
    except OSError as exc:
        raise HubError(f'не удалось прочитать конфиг {args.config}: {exc.strerror}') from None
    except ValueError as exc:
        raise HubError(f'конфиг {args.config} — не JSON: {exc}') from None
    hub = open_hub(args.data)
    result = settings.import_config(hub, config)
    created = ', '.join(result['projects_created']) or 'нет'
    print(f'настройки импортированы в {hub.data_dir}; новые проекты: {created}')


def _migrate(args) -> None:
    hub = open_hub(args.data)
    old = hub.opened_at_version
    if old is None or old == SCHEMA_VERSION:
        print(f'schema v{SCHEMA_VERSION} (up to date)')
    else:
        print(f'schema v{old} -> v{SCHEMA_VERSION}')


def _tokens(args) -> None:
    from hublib import settings
    hub = open_hub(args.data)
    print(json.dumps(settings.tokens(hub)))


def _serve(args) -> None:
    from .serve import serve
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(name)s: %(message)s')
    hub = open_hub(args.data)
    serve(hub, host=args.host, port=args.port, threads=args.threads, demo=args.demo)


def _backup(args) -> None:
    from hublib import backups
    path = backups.backup(open_hub(args.data))
    print(f'копия: {path}')


def _cleanup(args) -> None:
    from hublib import files
    result = files.cleanup(open_hub(args.data), dry_run=args.dry_run)
    verb = 'будет удалено' if args.dry_run else 'удалено'
    for name in result['removed']:
        print(name)
    print(f'{verb} файлов: {len(result["removed"])}, байт: {result["bytes"]}')


HANDLERS = {'init': _init, 'migrate': _migrate, 'tokens': _tokens, 'serve': _serve,
            'backup': _backup, 'cleanup': _cleanup}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``sdlc-hub`` console script."""
    args = _parser().parse_args(argv)
    if args.data is None:
        args.data = default_data_dir()
    if args.command != 'serve':
        logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(name)s: %(message)s')
    try:
        HANDLERS[args.command](args)
    except HubError as exc:
        print(f'sdlc-hub {args.command}: {exc.message}', file=sys.stderr)
        return 1
    except OSError as exc:
        print(f'sdlc-hub {args.command}: {exc.strerror or exc}: {exc.filename or ""}'.rstrip(': '),
              file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
