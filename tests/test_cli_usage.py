"""CLI usage errors and help are in Russian like every other message (contract §12: exit code 2
on a usage error), from a subclass of argparse's parser: nothing global is changed."""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# argparse's own English, as Python 3.11-3.13 word it
ENGLISH = re.compile(r'usage:|error:|invalid choice|choose from|the following arguments|'
                     r'unrecognized arguments|expected one argument|invalid \w+ value|'
                     r'show this help|positional arguments|^options:|ambiguous option|'
                     r"show program's version", re.MULTILINE)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'hubweb.cli', *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)


@pytest.mark.parametrize('args, says', [
    ([], 'не указаны обязательные аргументы: команда'),
    (['nope'], "неверное значение 'nope'"),
    (['init'], 'не указаны обязательные аргументы: --config'),
    (['serve', '--threads', '0'], 'ожидается число от 1 до 256'),
    (['serve', '--port', 'x'], "ожидается целое число, получено 'x'"),
    (['serve', '--port'], 'аргумент --port: нужно значение'),
    (['serve', '--bogus'], 'неизвестные аргументы: --bogus'),
    (['tokens', '--rotate', 'boss'], "неверное значение 'boss'"),
    (['serve', '--c', '5'], 'неоднозначный параметр --c'),
])
def test_usage_errors_are_exit_2_in_russian(args, says):
    result = run(*args)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ''
    assert result.stderr.startswith('использование: sdlc-hub'), result.stderr
    assert 'ошибка: ' in result.stderr and says in result.stderr, result.stderr
    assert not ENGLISH.search(result.stderr), result.stderr


@pytest.mark.parametrize('args', [['--help'], ['serve', '--help'], ['mcp', '-h']])
def test_help_is_in_russian(args):
    result = run(*args)
    assert result.returncode == 0 and result.stderr == ''
    assert result.stdout.startswith('использование: sdlc-hub')
    assert 'показать эту справку и выйти' in result.stdout
    assert not ENGLISH.search(result.stdout), result.stdout


def test_the_russian_parser_changes_nothing_for_other_parsers():
    from hubweb import cli
    cli._parser().format_help()  # the hub's parser built and used: nothing global changes
    plain = argparse.ArgumentParser(prog='other')
    assert plain.format_usage().startswith('usage: other')
    assert 'show this help message and exit' in plain.format_help()
