"""A cursor walk's parts (scim_core.backends.ldap.parts): positions, filters, seconds."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from scim_core.backends.ldap.parts import (
    CREATED,
    WalkPosition,
    next_second,
    part_filter,
    second_of,
)
from scim_core.errors import InvalidCursor

USERS = "(objectClass=inetOrgPerson)"


@pytest.mark.parametrize(
    "position",
    [
        WalkPosition(),
        WalkPosition("20200101000000Z", None, ""),
        WalkPosition("", "20200101000000Z", "f3134182-7f7e-1041-9678-ed2cda51eef9"),
        WalkPosition("20200101000000Z", "", "abc"),
        WalkPosition("20200101000000Z", "!", "abc"),
    ],
)
def test_a_position_reads_back_as_written(position):
    assert WalkPosition.read(position.text()) == position


def test_a_walk_starts_at_the_beginning_with_its_first_part_to_choose():
    assert WalkPosition.read(None) == WalkPosition("", None, "")
    assert WalkPosition().text() == "~*~"


@pytest.mark.parametrize(
    "text",
    [
        "f3134182-7f7e-1041-9678-ed2cda51eef9",  # a position of the walks before parts
        "~*",
        "~*~x~y",
        "2020~*~",
        "20200101000000~*~",  # no Z
        "~2020010100000Z~",
        "~?~",
        "~!!~",
        "x20200101000000Z~*~",
    ],
)
def test_a_position_of_another_shape_is_an_invalid_cursor(text):
    with pytest.raises(InvalidCursor) as raised:
        WalkPosition.read(text)
    assert raised.value.scim_type == "invalidCursor"
    assert raised.value.detail == (
        "The cursor is not valid for this query; start again with an empty cursor."
    )


def test_the_next_part_starts_the_second_after_this_ones_end():
    position = WalkPosition("20200101000000Z", "20200101235959Z", "abc")
    assert position.next_part() == WalkPosition("20200102000000Z", None, "")


@pytest.mark.parametrize("high", ["", "!", None])
def test_the_last_or_an_unchosen_part_has_no_next(high):
    with pytest.raises(ValueError):
        WalkPosition("20200101000000Z", high).next_part()


def test_a_parts_filter():
    middle = WalkPosition("20200101000000Z", "20200101000009Z")
    assert part_filter(USERS, middle) == (
        f"(&{USERS}({CREATED}>=20200101000000Z)({CREATED}<=20200101000009Z))"
    )
    first = WalkPosition("", "20200101000009Z")
    assert part_filter(USERS, first) == f"(&{USERS}({CREATED}<=20200101000009Z))"


def test_the_last_part():
    assert part_filter(USERS, WalkPosition("20200101000010Z", "")) == (
        f"(&{USERS}({CREATED}>=20200101000010Z))"
    )
    assert part_filter(USERS, WalkPosition("", "")) == USERS  # one part: the whole list
    assert WalkPosition("x", "").last_part and WalkPosition("x", "!").last_part
    assert not WalkPosition("x", "20200101000010Z").last_part
    assert not WalkPosition("x", None).last_part


def test_the_last_part_also_holds_users_without_a_creation_time_where_there_are_some():
    last = WalkPosition("20200101000010Z", "!")
    assert part_filter(USERS, last) == (
        f"(&{USERS}(|({CREATED}>=20200101000010Z)(!({CREATED}=*))))"
    )
    assert part_filter(USERS, WalkPosition("", "!")) == USERS


def test_a_part_must_be_chosen_before_its_filter():
    with pytest.raises(ValueError):
        part_filter(USERS, WalkPosition("20200101000000Z", None))


@pytest.mark.parametrize(
    ("value", "second"),
    [
        ("20261128135120Z", "20261128135120Z"),
        (b"20261128135120Z", "20261128135120Z"),
        ("20261128135120.123456Z", "20261128135120Z"),
        ("20261128145120+0100", "20261128135120Z"),
        ("20261128125120-01", "20261128135120Z"),
        ("20261128135120.5-0130", "20261128152120Z"),
        ("20261128135120", "20261128135120Z"),  # local time as the server said it
        (datetime(2026, 11, 28, 13, 51, 20, tzinfo=UTC), "20261128135120Z"),
        (
            datetime(2026, 11, 28, 14, 51, 20, 500, tzinfo=timezone(timedelta(hours=1))),
            "20261128135120Z",
        ),
        (datetime(2026, 11, 28, 13, 51, 20), "20261128135120Z"),
    ],
)
def test_a_creation_time_as_its_second_in_utc(value, second, far_from_utc):
    assert second_of(value) == second


@pytest.mark.parametrize("value", ["", "2026112813", "2026-11-28T13:51:20Z", "x0261128135120Z"])
def test_a_creation_time_that_is_not_one(value):
    with pytest.raises(ValueError):
        second_of(value)


@pytest.mark.parametrize(
    ("second", "after"),
    [
        ("20200101000000Z", "20200101000001Z"),
        ("20200101000059Z", "20200101000100Z"),
        ("20201231235959Z", "20210101000000Z"),
        ("20200228235959Z", "20200229000000Z"),
    ],
)
def test_the_second_after(second, after):
    assert next_second(second) == after
