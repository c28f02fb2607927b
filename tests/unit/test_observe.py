"""Observers of directory operations and dropped attributes: what they are told, and when."""

from __future__ import annotations

import logging

import pytest

from scim_core import observe
from scim_core.observe import (
    add_directory_observer,
    add_dropped_attribute_observer,
    directory_operation,
    dropped_attribute,
)


@pytest.fixture
def operations():
    seen: list[tuple[str, str, float]] = []

    def observer(kind: str, outcome: str, seconds: float) -> None:
        seen.append((kind, outcome, seconds))

    remove = add_directory_observer(observer)
    add_directory_observer(observer)  # adds nothing: each operation is reported once (below)
    yield seen
    remove()
    remove()  # removing twice is harmless


def test_an_operation_is_reported_with_its_kind_outcome_and_duration(operations):
    with directory_operation("search"):
        pass
    assert [(kind, outcome) for kind, outcome, _ in operations] == [("search", "success")]
    assert 0 <= operations[0][2] < 5


def test_a_failed_operation_is_reported_and_its_error_goes_on(operations):
    with pytest.raises(ConnectionError), directory_operation("modify"):
        raise ConnectionError("gone")
    with pytest.raises(KeyError), directory_operation("add", lambda error: type(error).__name__):
        raise KeyError("entryAlreadyExists")
    assert [(kind, outcome) for kind, outcome, _ in operations] == [
        ("modify", "unavailable"),
        ("add", "KeyError"),
    ]


def test_a_removed_observer_is_told_nothing_more():
    seen: list[str] = []
    remove = add_directory_observer(lambda kind, outcome, seconds: seen.append(kind))
    with directory_operation("delete"):
        pass
    remove()
    with directory_operation("rename"):
        pass
    assert seen == ["delete"]


LONG_NAME = ("shoesize-" + "x" * 100)[:64]  # a name is logged lower-cased, its first 64


def test_a_dropped_attribute_is_logged_once_by_name_and_counted_each_time(monkeypatch, caplog):
    monkeypatch.setattr(observe, "_logged", set())
    caplog.set_level(logging.INFO, logger="scim.attributes")
    seen: list[tuple[str, str]] = []
    remove = add_dropped_attribute_observer(lambda kind, name: seen.append((kind, name)))
    try:
        dropped_attribute("User", "NickName", standard=True)
        dropped_attribute("User", "nickname", standard=True)
        dropped_attribute("Group", "NickName", standard=True)
        dropped_attribute("User", "ShoeSize-" + "x" * 100, standard=False)
    finally:
        remove()
    dropped_attribute("User", "title", standard=True)
    assert seen == [
        ("User", "nickname"),
        ("User", "nickname"),
        ("Group", "nickname"),
        ("User", "other"),
    ]
    assert [r.getMessage() for r in caplog.records] == [
        "User attribute 'nickname' is not stored here; skipped (logged once)",
        "Group attribute 'nickname' is not stored here; skipped (logged once)",
        f"User attribute {LONG_NAME!r} is not stored here; skipped (logged once)",
        "User attribute 'title' is not stored here; skipped (logged once)",
    ]


def test_at_most_256_names_are_logged(monkeypatch, caplog):
    monkeypatch.setattr(observe, "_logged", set())
    caplog.set_level(logging.INFO, logger="scim.attributes")
    for number in range(300):
        dropped_attribute("User", f"x{number}", standard=False)
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 256
    assert logged[-1].startswith("User attribute 'x255'")
