"""Cursor tokens and cursor parameters: pure functions, no I/O."""

from __future__ import annotations

import pytest

from scim_core.config import ConfigError, ServiceConfig
from scim_core.cursor import CursorBinding, CursorCodec
from scim_core.discovery import pagination
from scim_core.errors import ExpiredCursor, InvalidCount, InvalidCursor, InvalidValue
from scim_core.paging import parse_window
from scim_core.secret import Secret

SECRET = Secret("s" * 40)
USERS = CursorBinding("User", "", "idp")


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def codec(clock):
    return CursorCodec(SECRET, 60, clock=clock)


def test_a_cursor_carries_its_position_back(codec):
    token = codec.seal("c0ffee-ü", 25, USERS)
    assert codec.open(token, 25, USERS) == "c0ffee-ü"
    unreserved = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    assert set(token) <= unreserved


@pytest.mark.parametrize(
    "other",
    [
        CursorBinding("Group", "", "idp"),
        CursorBinding("User", "Compare(userName eq x)", "idp"),
        CursorBinding("User", "", "someone-else"),
        CursorBinding("User", "", None),
    ],
)
def test_a_cursor_is_bound_to_its_query_and_caller(codec, other):
    token = codec.seal("p", 10, USERS)
    with pytest.raises(InvalidCursor):
        codec.open(token, 10, other)


def test_an_altered_cursor_or_another_secret_is_invalid(codec, clock):
    token = codec.seal("p", 10, USERS)
    payload, _, tag = token.partition(".")
    for bad in (
        payload[:-1] + ("A" if payload[-1] != "A" else "B") + "." + tag,
        payload + "." + tag[:-1],
        token + ".x",
        "",
        "!!.!!",
        "x" * 5000,
    ):
        with pytest.raises(InvalidCursor):
            codec.open(bad, 10, USERS)
    stranger = CursorCodec(Secret("t" * 40), 60, clock=clock)
    with pytest.raises(InvalidCursor):
        stranger.open(token, 10, USERS)


def test_a_cursor_expires_after_the_timeout(codec, clock):
    token = codec.seal("p", 10, USERS)
    clock.now += 60
    assert codec.open(token, 10, USERS) == "p"
    clock.now += 1
    with pytest.raises(ExpiredCursor):
        codec.open(token, 10, USERS)


def test_the_count_must_stay_that_of_the_first_page(codec):
    token = codec.seal("p", 10, USERS)
    with pytest.raises(InvalidCount):
        codec.open(token, 11, USERS)


def test_a_short_secret_is_refused():
    with pytest.raises(ValueError):
        CursorCodec(Secret("short"), 60)


def test_cursor_parameters():
    window = parse_window({"cursor": "", "count": "-3"}, default_count=100, max_results=200)
    assert (window.cursor, window.count) == ("", 0)
    window = parse_window({"cursor": "abc", "count": "900"}, default_count=100, max_results=200)
    assert (window.cursor, window.count) == ("abc", 200)
    assert parse_window({}, default_count=100, max_results=200).cursor is None
    with pytest.raises(InvalidValue):
        parse_window({"cursor": "", "startIndex": "1"}, default_count=100, max_results=200)
    with pytest.raises(InvalidCount):
        parse_window({"cursor": "", "count": "ten"}, default_count=100, max_results=200)
    with pytest.raises(InvalidValue):  # index paging keeps its own answer
        parse_window({"count": "ten"}, default_count=100, max_results=200)


def test_the_secret_setting_is_never_echoed():
    with pytest.raises(ConfigError) as error:
        ServiceConfig.from_environ({"SCIM_CURSOR_SECRET": "too-short-secret-value"})
    assert "too-short-secret-value" not in str(error.value)
    config = ServiceConfig.from_environ({"SCIM_CURSOR_SECRET": "v" * 32})
    assert config.cursor_secret == Secret("v" * 32)
    assert "v" * 32 not in repr(config)


def test_pagination_block():
    assert pagination(200, 100, None) == {
        "cursor": False,
        "index": True,
        "defaultPaginationMethod": "index",
        "maxPageSize": 200,
        "defaultPageSize": 100,
    }
    assert pagination(200, 0, 3600)["cursorTimeout"] == 3600
    assert "defaultPageSize" not in pagination(200, 0, 3600)
