"""``scim-ldap schema``: the text each directory's admin loads, or reads (pure, no directory)."""

from __future__ import annotations

import pytest

from scim_core.backends.ldap.extension import native_mapping, schema_text
from scim_core.testing.dirsrv import scim_schema_ldif
from scim_core.testing.slapd import SCIM_SCHEMA, cn_config_ldif


def _comments_and_rest(text: str) -> tuple[list[str], str]:
    """The comment lines ``text`` opens with, and what follows them."""
    lines = text.splitlines(keepends=True)
    head = 0
    while head < len(lines) and lines[head].startswith("#"):
        head += 1
    return [line.rstrip("\n") for line in lines[:head]], "".join(lines[head:])


def _sections(table: str) -> dict[str, dict[str, str]]:
    """Title -> {SCIM attribute: LDAP attribute} of each section of ``native_mapping``, checking
    that the LDAP column of a section starts two spaces after its longest SCIM name."""
    sections: dict[str, dict[str, str]] = {}
    for block in table.split("\n\n"):
        if not block.strip():
            continue
        title, *rows = block.splitlines()
        pairs = {}
        for row in rows:
            assert row.startswith("  ") and not row.startswith("   "), row
            scim, ldap = row[2:].split("  ", 1)
            pairs[scim] = ldap.lstrip()
        column = 2 + max(len(scim) for scim in pairs) + 2
        assert all(len(row) - len(pairs[row[2:].split("  ")[0]]) == column for row in rows)
        sections[title] = pairs
    return sections


def test_active_directory_needs_no_extension_and_is_told_what_is_kept_where() -> None:
    table = native_mapping()
    assert table == native_mapping("ad") and table.endswith("member\n")
    users, groups = _sections(table).items()
    assert users[0] == "User (objectClass top, person, organizationalPerson, user)"
    assert list(users[1].items())[:8] == [
        ("id", "objectGUID"),
        (
            "userName",
            "userPrincipalName; CN= (the normalized userName), sAMAccountName derived "
            "(at most 20 characters)",
        ),
        ("emails", "mail (one address)"),
        ("active", "userAccountControl bit 2 when false"),
        ("password", "unicodePwd"),
        ("externalId", "not stored"),
        ("enterprise manager", "manager"),
        ("meta.version (ETag)", "uSNChanged"),
    ]
    # The mapping file's attributes follow, the enterprise extension's URN shortened.
    assert users[1]["name.givenName"] == "givenName"
    assert users[1]["enterprise department"] == "department"
    assert users[1]['phoneNumbers[type eq "mobile"].value'] == "mobile"
    assert groups == (
        "Group (objectClass top, group)",
        {"id": "cn", "displayName": "displayName", "members": "member"},
    )
    comments, rest = _comments_and_rest(schema_text("ad"))
    assert rest == table
    assert len(comments) == 3 and "needs no schema extension" in comments[0]


def test_a_directory_with_the_service_schema_is_told_its_own_attributes() -> None:
    users, groups = _sections(native_mapping("openldap")).values()
    assert users["userName"] == "scimUserName; UID= (the normalized userName)"
    assert users["emails"] == "mail"
    assert users["active"] == "pwdAccountLockedTime: 000001010000Z when false"
    assert users["password"] == "userPassword (RFC 3062)"
    assert users["externalId"] == "scimExternalId"
    assert users["name.formatted"] == "cn"
    assert groups["displayName"] == "displayName"


@pytest.mark.parametrize(
    ("dialect", "ldif", "instruction"),
    [
        (
            "openldap",
            cn_config_ldif(SCIM_SCHEMA),
            "#   ldapadd -Y EXTERNAL -H ldapi:/// -f scim.ldif",
        ),
        (
            "389ds",
            scim_schema_ldif(SCIM_SCHEMA, comment=None),
            "# `dsconf INSTANCE schema reload` (or restart the instance).",
        ),
    ],
)
def test_the_schema_is_loadable_ldif_after_comments_saying_how(dialect, ldif, instruction) -> None:
    comments, rest = _comments_and_rest(schema_text(dialect))
    assert rest == ldif and rest.startswith("dn: cn=")
    assert comments[0].startswith("# The SCIM service's schema extension (scimPerson, scimGroup)")
    assert comments[-1] == instruction
