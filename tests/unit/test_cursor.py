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
    with pytest.raises(InvalidCursor, match="start again with an empty cursor"):
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


def test_every_position_comes_back():
    # Every last character at three offsets: every last base64 digit of the payload occurs.
    codec = CursorCodec(SECRET, 60, clock=Clock())
    for position in ("", *(("x" * n) + chr(c) for n in range(3) for c in range(32, 127))):
        assert codec.open(codec.seal(position, 7, USERS), 7, USERS) == position


# Sealed by this release with SECRET at 1,700,000,000 for 60 s: another instance, or the next
# release, must open them (a walk continues across workers and rolling upgrades).
ISSUED = {
    USERS: "AQAAAABlU_E8AAAACmMwZmZlZQ.tHGs7LNMS4u7-t6_TuJ_q6PJ1Ytja2454JG0Ir2Alq0",
    CursorBinding("User"): "AQAAAABlU_E8AAAACmMwZmZlZQ.yltq7ChUEQEILBsEj5M2s2NN9ZzeMHHjiQ4txQOc0XI",
}
# Sealed with SECRET as well, but in a format this release does not write: a payload of
# version 2, and one of version 1 whose position is not UTF-8.
FOREIGN = [
    "AgAAAABlU_E8AAAACmMwZmZlZQ.aBqaJbh8kMrJx-pdIqhrmhgIYA0Cly0w6SsY6S0dQsc",
    "AQAAAABlU_E8AAAACv8.8k40YomwT0d4JPJlr6_HhIu3OSuUgUnIDea71uqNEoY",
]


@pytest.mark.parametrize("binding", list(ISSUED))
def test_a_cursor_issued_elsewhere_opens(codec, binding):
    assert codec.seal("c0ffee", 10, binding) == ISSUED[binding]
    assert codec.open(ISSUED[binding], 10, binding) == "c0ffee"


@pytest.mark.parametrize("token", FOREIGN)
def test_a_genuine_cursor_in_another_format_is_invalid(codec, token):
    with pytest.raises(InvalidCursor, match="start again with an empty cursor"):
        codec.open(token, 10, USERS)


def test_a_cursor_longer_than_4096_characters_is_refused_unread(codec):
    fits, too_long = codec.seal("p" * 3026, 10, USERS), codec.seal("p" * 3027, 10, USERS)
    assert (len(fits), len(too_long)) == (4096, 4098)
    assert codec.open(fits, 10, USERS) == "p" * 3026
    with pytest.raises(InvalidCursor, match="start again with an empty cursor"):
        codec.open(too_long, 10, USERS)


@pytest.mark.parametrize(
    "token",
    [
        "x" * 4097,  # too long
        "a.b.c",  # not two parts
        "!!.!!",  # not base64
        "ü.ü",  # not ASCII
        "YQ.YQ=",  # padded: not the spelling written here
        "AQAAAABlU_E8AAAACmMwZmZlZQ.tHGs7LNMS4u7-t6_TuJ_q6PJ1Ytja2454JG0Ir2Alq1",  # altered
    ],
)
def test_an_invalid_cursor_says_to_start_again(codec, token):
    with pytest.raises(InvalidCursor, match="start again with an empty cursor"):
        codec.open(token, 10, USERS)


def test_expired_and_count_errors_say_why(codec, clock):
    token = codec.seal("p", 10, USERS)
    with pytest.raises(InvalidCount, match="count must stay 10 for the whole walk"):
        codec.open(token, 11, USERS)
    clock.now += 61
    with pytest.raises(ExpiredCursor, match=r"expired \(cursors last 60 s between pages\)"):
        codec.open(token, 10, USERS)


@pytest.mark.parametrize("secret, timeout", [("s" * 31, 60), ("s" * 32, 0)])
def test_a_short_secret_or_timeout_is_refused(secret, timeout):
    with pytest.raises(ValueError):
        CursorCodec(Secret(secret), timeout)


def test_the_shortest_secret_and_timeout_are_accepted(clock):
    codec = CursorCodec(Secret("s" * 32), 1, clock=clock)
    token = codec.seal("p", 10, USERS)
    clock.now += 1
    assert codec.open(token, 10, USERS) == "p"


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
