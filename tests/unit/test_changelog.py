"""The names entries had before a delete or rename, from slapo-accesslog's records."""

from __future__ import annotations

from typing import Any

import pytest

from scim_core.backends.ldap.changelog import earlier_names, records_since
from scim_core.backends.ldap.values import first_rdn

UUID_A = "1a2b3c4d-0000-1000-8000-00000000000a"
UUID_B = "1a2b3c4d-0000-1000-8000-00000000000b"
DONE = {"result": 0, "description": "success"}


def record(entry_uuid: str | None, dn: str | None, csn: str | None) -> dict[str, Any]:
    attributes = {
        name: [value]
        for name, value in (("reqEntryUUID", entry_uuid), ("reqDN", dn), ("entryCSN", csn))
        if value is not None
    }
    return {"dn": "reqStart=20261128000000.000001Z,cn=accesslog", "attributes": attributes}


def csn(second: int) -> str:
    return f"202611281200{second:02d}.000000Z#000000#000#000000"


def test_each_entry_is_named_by_its_earliest_record() -> None:
    """Renamed twice, then deleted: the snapshot holds it by the DN of the first rename."""
    records = [
        record(UUID_A, "uid=second,ou=people", csn(5)),
        record(UUID_A.upper(), "uid=first,ou=people", csn(3)),
        record(UUID_A, "uid=third,ou=people", csn(9)),
        record(UUID_B, "uid=other,ou=people", csn(4)),
    ]
    assert earlier_names(records, DONE, 4) == {
        UUID_A: "uid=first,ou=people",
        UUID_B: "uid=other,ou=people",
    }


@pytest.mark.parametrize(
    "incomplete",
    [record(None, "uid=x", csn(1)), record(UUID_A, None, csn(1)), record(UUID_A, "uid=x", None)],
)
def test_a_record_without_its_id_dn_or_csn_names_nothing(incomplete: dict[str, Any]) -> None:
    assert earlier_names([incomplete], DONE, 4) == {}


def test_more_records_than_the_limit_is_none() -> None:
    records = [record(UUID_A, "uid=a", csn(1)), record(UUID_B, "uid=b", csn(2))]
    assert earlier_names(records, DONE, 1) is None
    assert earlier_names(records, DONE, 2) is not None


@pytest.mark.parametrize("code", [4, 3, 11, None])  # size limit, time limit, admin limit, none
def test_a_search_that_did_not_succeed_names_nothing(code: int | None) -> None:
    """Cut short, it may hold an entry's later record without its earliest one."""
    records = [record(UUID_A, "uid=second", csn(5))]
    assert earlier_names(records, {"result": code}, 4) is None


def test_the_search_asks_for_successful_deletes_and_renames_since_the_csn() -> None:
    search = records_since("cn=accesslog", csn(7), 10)
    assert search.base == "cn=accesslog" and search.scope == "LEVEL"
    assert search.search_filter == (
        f"(&(|(objectClass=auditDelete)(objectClass=auditModRDN))(reqResult=0)(entryCSN>={csn(7)}))"
    )
    assert search.size_limit == 11
    assert set(search.attributes) == {"reqEntryUUID", "reqDN", "entryCSN"}


def test_a_csn_is_escaped_into_the_filter() -> None:
    assert "(entryCSN>=x\\29\\28uid=\\2a)" in records_since("cn=log", "x)(uid=*", 1).search_filter


@pytest.mark.parametrize(
    ("dn", "named"),
    [
        ("uid=alice,ou=people,dc=example,dc=org", ("uid", "alice")),
        ("UID=Bob,ou=people", ("UID", "Bob")),
        (r"uid=a\,b\2Bc,ou=people", ("uid", "a,b+c")),
        (r"cn=caf\c3\a9,ou=groups", ("cn", "café")),
        (r"cn=\ lead and trail\ ,o=x", ("cn", " lead and trail ")),
        (r"cn=back\\slash,o=x", ("cn", "back\\slash")),
        ("uid=x+cn=y,ou=people", None),
        ("uid=#04024869,ou=people", None),
        (r"uid=\ff,ou=people", None),
        ("not a dn", None),
    ],
)
def test_the_first_rdn_of_a_dn(dn: str, named: tuple[str, str] | None) -> None:
    assert first_rdn(dn) == named
