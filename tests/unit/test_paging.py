"""startIndex / count as a client sends them: defaults, bounds, blanks (RFC 7644 §3.4.2.4)."""

from __future__ import annotations

import pytest

from scim_core.errors import InvalidValue
from scim_core.paging import Window, parse_window


def window(**query: str) -> Window:
    return parse_window(query, default_count=100, max_results=200)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, Window(1, 100)),
        ({"startIndex": "", "count": ""}, Window(1, 100)),  # blank means absent
        ({"startIndex": "  ", "count": " "}, Window(1, 100)),
        ({"startIndex": "1", "count": "1"}, Window(1, 1)),
        ({"startIndex": " 7 ", "count": " 9 "}, Window(7, 9)),
        ({"startIndex": "0"}, Window(1, 100)),  # below 1 means 1
        ({"startIndex": "-5"}, Window(1, 100)),
        ({"startIndex": "2"}, Window(2, 100)),
        ({"count": "0"}, Window(1, 0)),
        ({"count": "-1"}, Window(1, 0)),  # negative means 0
        ({"count": "199"}, Window(1, 199)),
        ({"count": "200"}, Window(1, 200)),
        ({"count": "201"}, Window(1, 200)),  # capped
    ],
)
def test_window(query, expected):
    assert window(**query) == expected


def test_the_default_count_is_capped_too():
    assert parse_window({}, default_count=500, max_results=200) == Window(1, 200)
    assert parse_window({"count": ""}, default_count=7, max_results=200) == Window(1, 7)


@pytest.mark.parametrize("name", ["startIndex", "count"])
@pytest.mark.parametrize("raw", ["x", "1.5", "1e3"])
def test_a_non_integer_is_invalid(name, raw):
    with pytest.raises(InvalidValue) as caught:
        window(**{name: raw})
    assert caught.value.detail == f"{name} must be an integer."
