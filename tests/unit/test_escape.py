"""The two escaping functions every client value takes into LDAP (RFC 4515 §3, RFC 4514 §2.4).

Each escaped DN value is also read back as RFC 4514 §3 reads it: one value, nothing unescaped
that would end it or start another, and the same text once unescaped.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scim_core.backends.ldap.escape import dn_value, filter_value


def _unescape(value: str) -> str:
    """RFC 4514 §3 string -> value: ``\\c`` is c, ``\\XX`` a hex octet (UTF-8)."""
    out = bytearray()
    i = 0
    while i < len(value):
        if value[i] == "\\":
            pair = value[i + 1 : i + 3]
            if len(pair) == 2 and all(c in "0123456789abcdefABCDEF" for c in pair):
                out += bytes.fromhex(pair)
                i += 3
                continue
            out += value[i + 1].encode()
            i += 2
            continue
        out += value[i].encode()
        i += 1
    return out.decode()


def _round_trip(value: str) -> str:
    escaped = dn_value(value)
    plain = escaped
    while "\\" in plain:  # drop every escape pair, leaving what a reader sees unescaped
        i = plain.index("\\")
        plain = plain[:i] + "x" + plain[i + 2 :]
    assert not any(c in plain for c in ',+"<>;=\x00'), escaped  # would end the value
    # A space at either end, or a leading #, would be read as something else.
    assert not plain.startswith((" ", "#")), escaped
    assert not plain.endswith(" "), escaped
    return _unescape(escaped)


@pytest.mark.parametrize(
    ("value", "escaped"),
    [
        ("bjensen", "bjensen"),
        ("a,b", "a\\,b"),
        ("a+b", "a\\+b"),
        ('a"b', 'a\\"b'),
        ("a\\b", "a\\\\b"),
        ("a<b>", "a\\<b\\>"),
        ("a;b", "a\\;b"),
        ("a=b", "a\\=b"),
        ("a\x00b", "a\\00b"),
        ("#a", "\\#a"),  # a leading # only
        ("a#", "a#"),
        (" a", "\\ a"),  # a leading space
        ("a ", "a\\ "),  # a trailing space
        ("a b", "a b"),  # an inner space is plain
        (" ", "\\ "),  # one space: leading and trailing at once, escaped once
        ("  ", "\\ \\ "),  # two: the first as leading, the last as trailing
        ("   ", "\\  \\ "),
        ("# ", "\\#\\ "),
        ("#", "\\#"),
        (",", "\\,"),
        ("é", "é"),  # UTF-8 passes as is (RFC 4514 allows it)
    ],
)
def test_dn_value(value, escaped):
    assert dn_value(value) == escaped
    assert _round_trip(value) == value


def test_an_empty_rdn_value_is_refused():
    with pytest.raises(ValueError, match="empty"):
        dn_value("")


@given(st.text(min_size=1, max_size=20))
def test_every_value_round_trips_through_a_dn(value):
    assert _round_trip(value) == value


@pytest.mark.parametrize(
    ("value", "escaped"),
    [
        ("bjensen", "bjensen"),
        ("a*b", "a\\2ab"),
        ("(a)", "\\28a\\29"),
        ("a\\b", "a\\5cb"),
        ("a\x00b", "a\\00b"),
        ("", ""),
        (b"\x00\xffA", "\\00\\ff\\41"),  # binary: every octet, lower-case hex
        (b"", ""),
    ],
)
def test_filter_value(value, escaped):
    assert filter_value(value) == escaped
