"""The preflight's pure parts: the table, the exit status, naming a directory from its rootDSE
and reading names from subschema definitions (no I/O)."""

from __future__ import annotations

import pytest

from scim_core.backends.ldap.identity import identify
from scim_core.backends.ldap.preflight import schema_names
from scim_core.checks import EXIT_FAILED, EXIT_OK, RESULTS, Step, exit_status, render_table


def test_only_a_failed_step_fails_the_check() -> None:
    passing = [Step("bind", "ok"), Step("assertion", "fallback"), Step("tls", "warning")]
    assert exit_status(passing) == EXIT_OK
    assert exit_status([*passing, Step("write test", "skipped")]) == EXIT_OK
    assert exit_status([*passing, Step("users base", "FAILED", "not found")]) == EXIT_FAILED
    assert exit_status([]) == EXIT_OK
    assert [result for result, fails in RESULTS.items() if fails] == ["FAILED"]


def test_an_unknown_result_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown result"):
        Step("bind", "fine")  # type: ignore[arg-type]


def test_the_table_has_a_header_a_rule_and_aligned_columns() -> None:
    table = render_table([Step("bind", "ok", "bound as cn=scim"), Step("users base", "FAILED")])
    assert table.splitlines() == [
        "step        result    detail",
        "----------  --------  ------",
        "bind        ok        bound as cn=scim",
        "users base  FAILED",
    ]


def test_a_long_detail_wraps_under_its_column() -> None:
    detail = "word " * 30
    lines = render_table([Step("x", "warning", detail)], detail_width=40).splitlines()
    assert lines[2].startswith("x     warning   word")
    assert all(line.startswith(" " * 16 + "word") for line in lines[3:])
    assert " ".join(line[16:] for line in lines[2:]) == detail.strip()


@pytest.mark.parametrize(
    ("root_dse", "monitor", "expected"),
    [
        ({"objectClass": ["top", "OpenLDAProotDSE"]}, None, ("OpenLDAP", "openldap", None)),
        (
            {"objectClass": ["OpenLDAProotDSE"]},
            "OpenLDAP: slapd 2.5.13+dfsg-5 (Feb  8 2023)",
            ("OpenLDAP", "openldap", "2.5.13"),
        ),
        (
            {
                "vendorName": ["389 Project"],
                "vendorVersion": ["389-Directory/2.3.1 B2023.101.1200"],
            },
            None,
            ("389-DS", "389ds", "2.3.1"),
        ),
        (
            {
                "supportedCapabilities": ["1.2.840.113556.1.4.800"],
                "domainControllerFunctionality": ["7"],
            },
            None,
            ("Active Directory", "ad", "functional level Windows Server 2016"),
        ),
        (
            {
                "supportedCapabilities": ["1.2.840.113556.1.4.800"],
                "vendorName": ["Samba Team (https://www.samba.org)"],
                "vendorVersion": ["4.17.12-Debian"],
            },
            None,
            ("Active Directory (Samba)", "ad", "4.17.12"),
        ),
        ({"vendorName": ["Example Corp"]}, None, ("Example Corp", None, None)),
        ({}, None, ("unknown", None, None)),
    ],
)
def test_the_directory_is_named_from_its_root_dse(root_dse, monitor, expected) -> None:
    identity = identify(root_dse, monitor)
    assert (identity.name, identity.profile, identity.version) == expected
    assert str(identity).endswith(expected[2] or "(version unknown)")


def test_names_are_read_from_subschema_definitions() -> None:
    definitions = [
        "( 2.5.4.3 NAME ( 'cn' 'commonName' ) SUP name )",
        "( 0.9.2342.19200300.100.1.1 NAME 'uid' EQUALITY caseIgnoreMatch )",
        b"( 1.2.3 NAME 'scimPerson' AUXILIARY )",
        "( 1.2.4 DESC 'no name' )",
    ]
    assert schema_names(definitions) == {"cn", "commonname", "uid", "scimperson"}


def test_no_steps_is_a_header_and_a_rule() -> None:
    assert render_table([]) == "step  result    detail\n----  --------  ------\n"


def test_a_detail_wraps_at_72_characters_and_never_inside_a_word() -> None:
    fits = "a" * 35 + " " + "b" * 36
    assert render_table([Step("x", "ok", fits)]).splitlines()[2] == f"x     ok        {fits}"
    assert len(render_table([Step("x", "ok", fits + " c")]).splitlines()) == 4
    word = "w" * 50
    assert render_table([Step("x", "ok", word)], detail_width=40).splitlines()[2:] == [
        f"x     ok        {word}"
    ]
