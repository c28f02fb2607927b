"""Filter parsing throughput: ours (Lark LALR, AST built during the parse) against PyPI
``scim2-filter-parser`` (its SLY lexer and parser, producing its AST), on the same strings.

Run: ``python bench/bench_filter.py``. Both sides do a full parse of the text to an AST; the
parsers are built once, before timing. Rounds alternate between the two so machine noise hits
both; each figure is the median over the rounds.
"""

from __future__ import annotations

import statistics
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scim2_filter_parser.lexer import SCIMLexer
from scim2_filter_parser.parser import SCIMParser

from scim_core.filter import parse_filter

__all__ = ["CASES", "main"]

CASES = {
    "simple": 'userName eq "bjensen"',
    "complex": (
        'userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")'
    ),
}
ROUNDS = 15
TARGET_SECONDS = 0.04  # per timing; the loop count is calibrated to it


def _loops(func: Callable[[], object]) -> int:
    number, _ = timeit.Timer(func).autorange()
    once = timeit.timeit(func, number=number) / number
    return max(1, int(TARGET_SECONDS / once))


def _measure(ours: Callable[[], object], theirs: Callable[[], object]) -> tuple[float, float]:
    n_ours, n_theirs = _loops(ours), _loops(theirs)
    t_ours: list[float] = []
    t_theirs: list[float] = []
    for _ in range(ROUNDS):
        t_ours.append(timeit.timeit(ours, number=n_ours) / n_ours)
        t_theirs.append(timeit.timeit(theirs, number=n_theirs) / n_theirs)
    return statistics.median(t_ours), statistics.median(t_theirs)


def main() -> int:
    """Print parses per second for each case, both parsers, and the ratio ours/theirs.

    :returns: 0 when ours is at least as fast on every case, 1 otherwise.
    """
    lexer, parser = SCIMLexer(), SCIMParser()
    ok = True
    print(f"{'case':8} {'ours /s':>10} {'theirs /s':>10} {'ours µs':>8} {'theirs µs':>9} ratio")
    for name, text in CASES.items():
        parse_filter(text)  # build our parser once, outside the timing
        parser.parse(lexer.tokenize(text))
        ours, theirs = _measure(
            lambda text=text: parse_filter(text),  # type: ignore[misc]
            lambda text=text: parser.parse(lexer.tokenize(text)),  # type: ignore[misc]
        )
        ratio = theirs / ours  # throughput ratio: (1/ours) / (1/theirs)
        ok = ok and ratio >= 1.0
        print(
            f"{name:8} {1 / ours:10.0f} {1 / theirs:10.0f} {ours * 1e6:8.1f} "
            f"{theirs * 1e6:9.1f} {ratio:5.2f}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
