"""The LDIF a dry run writes: RFC 2849 change records that ldapmodify reads back."""

from scim_core.backends.ldap.ldif import change_record


def test_safe_values_are_plain_and_others_base64():
    record = change_record(
        "uid=jörg,ou=people,dc=example,dc=org",
        "modify",
        ["replace: title", "title: Engineer", "-"],
        comments=["planned"],
    )
    lines = record.splitlines()
    assert lines[0] == "# planned"
    assert lines[1] == "dn:: dWlkPWrDtnJnLG91PXBlb3BsZSxkYz1leGFtcGxlLGRjPW9yZw=="
    assert lines[2:] == ["changetype: modify", "replace: title", "title: Engineer", "-"]


def test_leading_space_colon_or_angle_bracket_are_base64():
    for value in (" lead", ":colon", "<angle", "trail "):
        assert change_record(value, "delete").startswith("dn:: "), value
    assert change_record("cn=plain", "delete") == "dn: cn=plain\nchangetype: delete\n"
