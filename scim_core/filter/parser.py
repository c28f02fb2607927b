"""Parsing: filter text -> AST (RFC 7644 §3.4.2.2) and PATCH path text -> AST (§3.5.2).

This module owns the Lark parser built from ``filter.lark`` (package data): LALR, built once on
first use, with :class:`~scim_core.filter.ast.AstBuilder` run during the parse so no parse tree
is ever built. Every Lark error becomes :class:`~scim_core.errors.InvalidFilter` (or
:class:`~scim_core.errors.InvalidPath`) carrying the 1-based column and a short reason.

Columns count characters from the start of the text; a line break counts as one character of
whitespace like any other.

The lexer is Lark's contextual one: in each parser state it matches only the terminals of
``filter.lark`` that the state accepts.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from typing import Any

from lark import Lark
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedToken

from scim_core.errors import InvalidFilter, InvalidPath, ScimError
from scim_core.filter.ast import AstBuilder, Filter, PatchPath

__all__ = ["MAX_DEPTH", "MAX_LENGTH", "parse_filter", "parse_path"]

MAX_LENGTH = 4096
"""Default longest filter accepted, in characters."""

MAX_DEPTH = 32
"""Default deepest nesting of parentheses and brackets (``not`` always opens one)."""

# Terminal name -> how an error message names it, in the order messages list them.
_TERMINAL_NAMES = {
    "ATTRPATH": "an attribute path",
    "SUBATTR": "a sub-attribute ('.name')",
    "NOT": "'not ('",
    "LPAR": "'('",
    "COMPAREOP": "an operator (eq ne co sw ew gt ge lt le)",
    "PR": "'pr'",
    "LSQB": "'['",
    "COMPVALUE": "a value (string, number, true, false, null)",
    "AND": "'and'",
    "OR": "'or'",
    "RSQB": "']'",
    "RPAR": "')'",
    "$END": "the end",
}
_ORDER = {name: i for i, name in enumerate(_TERMINAL_NAMES)}

# Strings and nesting brackets, for the depth pre-scan (brackets inside strings do not count).
_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"?|[()\[\]]')
_OPENERS, _CLOSERS = frozenset("(["), frozenset(")]")


@functools.cache
def _parser() -> Lark:
    grammar = importlib.resources.files(__package__).joinpath("filter.lark").read_text("utf-8")
    return Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        start=["filter", "path"],
        transformer=AstBuilder(),
        keep_all_tokens=True,
        maybe_placeholders=False,
        propagate_positions=False,
    )


def _describe(names: frozenset[str]) -> str:
    # Every state of the parser accepts some terminal (the end, once a parse is complete), and
    # every terminal of the grammar is named above: the list is never empty.
    words = [_TERMINAL_NAMES[n] for n in sorted(names & _ORDER.keys(), key=_ORDER.__getitem__)]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _expected(text: str, start: str) -> frozenset[str]:
    # The exact set of terminals the grammar accepts after ``text``: replay it interactively and
    # try each candidate. (The set Lark reports is the one of the state where the error
    # surfaced, after reductions, which LALR's merged lookaheads can leave too small.) Only
    # errors pay for this; the prefix parsed once already, so the replay cannot fail.
    interactive = _parser().parse_interactive(text, start=start)
    interactive.exhaust_lexer()
    return frozenset(interactive.accepts())  # type: ignore[no-untyped-call]


def _reason(
    error: UnexpectedToken | UnexpectedCharacters, text: str, start: str
) -> tuple[int, str]:
    if isinstance(error, UnexpectedToken) and error.token.type == "$END":
        expected = _expected(text, start)
        return len(text) + 1, f"unexpected end of text; expected {_describe(expected)}"
    pos: int = error.pos_in_stream or 0  # the offending token's start, or character's
    # A word the client typed is not quoted back: a secret pasted in the wrong place (an
    # unquoted value) must not come back in an error. A stray symbol is named; otherwise the
    # column and what was expected say enough.
    found = text[pos : pos + 1]
    starts_a_word = found.isalnum() or found in {'"', "_"}
    shown = f"unexpected {found!r}; " if found and not starts_a_word else ""
    expected = _expected(text[:pos], start)
    return pos + 1, f"{shown}expected {_describe(expected)}"


def _check_size(text: str, max_length: int, max_depth: int, error: type[ScimError]) -> None:
    if len(text) > max_length:
        raise error(f"The text is {len(text)} characters long; the limit is {max_length}.")
    # Cheap first: the count of openers bounds the depth.
    if text.count("(") + text.count("[") <= max_depth:  # pragma: no mutate - the walk agrees
        return
    depth = 0
    for m in _NESTING.finditer(text):
        char = m.group()
        if char in _OPENERS:
            depth += 1
            if depth > max_depth:
                raise error(f"Nesting deeper than {max_depth} levels at column {m.start() + 1}.")
        elif char in _CLOSERS:
            depth -= 1


def _parse(text: str, start: str, error: type[ScimError], what: str) -> Any:
    try:
        return _parser().parse(text, start=start)
    except (UnexpectedToken, UnexpectedCharacters) as e:  # all LALR raises
        column, reason = _reason(e, text, start)
        raise error(f"Invalid {what} at column {column}: {reason}.") from None
    except LarkError:  # pragma: no cover - the grammar raises nothing else at parse time
        raise error(f"Invalid {what}.") from None


def parse_filter(text: str, *, max_length: int = MAX_LENGTH, max_depth: int = MAX_DEPTH) -> Filter:
    """Parse a SCIM filter (RFC 7644 §3.4.2.2) into its AST.

    :param text: the filter, already URL-decoded (the ``filter`` query parameter's value).
    :param max_length: longest text accepted, in characters.
    :param max_depth: deepest nesting of parentheses and value-filter brackets accepted.
    :returns: the filter's root node.
    :raises InvalidFilter: for a syntax error (the detail names the 1-based column and what was
        expected there), or for text over ``max_length`` or nested deeper than ``max_depth``.
    """
    _check_size(text, max_length, max_depth, InvalidFilter)
    result: Filter = _parse(text, "filter", InvalidFilter, "filter")
    return result


def parse_path(text: str) -> PatchPath:
    """Parse a PATCH operation's ``path`` (RFC 7644 §3.5.2: ``attrPath / valuePath [subAttr]``).

    :param text: the path, e.g. ``emails[type eq "work"].value`` or ``name.givenName``.
    :returns: the path's AST.
    :raises InvalidPath: for a syntax error (with the 1-based column), or an oversized path.
    """
    _check_size(text, MAX_LENGTH, MAX_DEPTH, InvalidPath)
    result: PatchPath = _parse(text, "path", InvalidPath, "path")
    return result
