"""Benchmark: the JQL parser of hublib (hand-written recursive descent) against the same grammar in
lark's LALR parser, the measurement behind the parser decision in ``hublib/jql`` (issue 20).

    .venv/bin/python scripts/bench_jql_parser.py [--rounds 2000]

Needs ``pip install lark`` for the comparison (the hub itself does not depend on it). Prints the
median microseconds per parse of each typical query for both, lark's grammar build time, and what
each says about a few refused queries (position and message).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hublib import jql  # noqa: E402
from hublib.errors import ValidationError  # noqa: E402

QUERIES = (
    'assignee = ivanov AND status IN ("Открыта", "В работе") ORDER BY updated DESC',
    'project = AURORA AND status IN (a, b) AND assignee = u ORDER BY updated DESC',
    'labels = срочно AND updated >= -30d ORDER BY priority DESC, updated DESC',
    'sprint in openSprints() AND resolution = Unresolved',
    'status CHANGED TO "Готово" AFTER -14d',
    '(status = Открыта OR priority IN (Высокий, Наивысший)) AND NOT labels IS EMPTY '
    'AND created >= startOfWeek(-1) ORDER BY key',
)
REFUSED = ('asignee = ivanov', 'status = a)', '(status = a', 'status = AND',
           'summary ~ "open', 'status ~ x')

# The same language for lark: keywords case-insensitive ("i" flag), positions from its tokens.
GRAMMAR = r'''
?start: query
query: disjunction? order?
order: ORDER BY sort ("," sort)*
sort: field (ASC | DESC)?
?disjunction: conjunction (OR conjunction)*
?conjunction: term (AND term)*
?term: NOT term -> negation
     | "(" disjunction ")"
     | clause
clause: field OPERATOR value
      | field NOT? IN list
      | field IS NOT? (EMPTY | NULL)
      | field WAS NOT? value predicate*
      | field WAS NOT? IN list predicate*
      | field CHANGED predicate*
predicate: (FROM | TO | BY | AFTER | BEFORE | ON) value
         | DURING "(" value "," value ")"
list: "(" value ("," value)* ")" | function
?value: WORD | STRING | function | EMPTY | NULL
function: WORD "(" (value ("," value)*)? ")"
field: WORD | STRING
OPERATOR: "!=" | "!~" | ">=" | "<=" | "=" | ">" | "<" | "~"
AND: "and"i
OR: "or"i
NOT: "not"i
ORDER: "order"i
BY: "by"i
IN: "in"i
IS: "is"i
EMPTY: "empty"i
NULL: "null"i
WAS: "was"i
CHANGED: "changed"i
FROM: "from"i
TO: "to"i
AFTER: "after"i
BEFORE: "before"i
ON: "on"i
DURING: "during"i
ASC: "asc"i
DESC: "desc"i
WORD.-1: /[\w.:\/@*+-]+/
STRING: /"(\\.|[^"\\])*"/ | /'(\\.|[^'\\])*'/
%import common.WS
%ignore WS
'''


def per_parse_us(parse, query: str, rounds: int) -> float:
    samples = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(rounds):
            parse(query)
        samples.append((time.perf_counter() - started) / rounds * 1e6)
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rounds', type=int, default=2000)
    args = parser.parse_args(argv)
    try:
        import lark
    except ImportError:
        lark = None
    lark_parser = None
    if lark is not None:
        started = time.perf_counter()
        lark_parser = lark.Lark(GRAMMAR, parser='lalr', propagate_positions=True)
        print(f'lark {lark.__version__}: grammar built in '
              f'{(time.perf_counter() - started) * 1000:.1f} ms')
    print(f'{"query":<70} {"hublib µs":>10} {"lark µs":>10}')
    for query in QUERIES:
        ours = per_parse_us(jql.parse, query, args.rounds)
        theirs = per_parse_us(lark_parser.parse, query, args.rounds) if lark_parser else None
        print(f'{query[:70]:<70} {ours:10.1f} '
              f'{f"{theirs:10.1f}" if theirs is not None else "—":>10}')
    print('\nrefusals:')
    for query in REFUSED:
        try:
            jql.parse(query)
            ours = 'parsed (refused later by the compiler)'
        except ValidationError as error:
            ours = error.fields['jql'][0]
        theirs = '—'
        if lark_parser is not None:
            try:
                lark_parser.parse(query)
                theirs = 'parsed'
            except lark.exceptions.LarkError as error:
                theirs = ' '.join(str(error).split())[:110]
        print(f'  {query!r}\n    hublib: {ours}\n    lark:   {theirs}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
