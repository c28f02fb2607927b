"""What a dry run writes and answers, without a directory: RFC 2849 change records that
ldapmodify reads back (:mod:`~scim_core.backends.ldap.ldif`), and each write applied to an
in-memory copy of its entry as the directory would apply or refuse it
(:mod:`~scim_core.backends.ldap.planned`). The Planner that reads the entries and keeps the
records is run against real directories in tests/integration and tests/idp."""

import base64

import pytest
from ldap3 import MODIFY_ADD, MODIFY_DELETE, MODIFY_INCREMENT, MODIFY_REPLACE
from ldap3.core.exceptions import LDAPOperationResult
from ldap3.utils.ciDict import CaseInsensitiveDict

from scim_core.backends.ldap.controls import POST_READ_OID
from scim_core.backends.ldap.ldif import change_record, ldif_line
from scim_core.backends.ldap.planned import (
    added,
    answer,
    modified,
    refusal,
    renamed,
    renamed_dn,
    without_operational,
)
from scim_core.backends.ldap.results import (
    ALREADY_EXISTS,
    NO_SUCH_ATTRIBUTE,
    OBJECT_CLASS_VIOLATION,
    VALUE_EXISTS,
)

JANE = "uid=jane,ou=people,dc=example,dc=org"
TEAM = "cn=team,ou=groups,dc=example,dc=org"
PASSWORDS = frozenset({"userpassword"})


def b64(value: str | bytes) -> str:
    return base64.b64encode(value if isinstance(value, bytes) else value.encode()).decode()


def entry(**attributes: list) -> CaseInsensitiveDict:
    """An entry as the Planner reads it: attribute name -> values, names case aside."""
    found = CaseInsensitiveDict()
    for name, values in attributes.items():
        found[name] = values
    return found


# ------------------------------------------------------------------ RFC 2849 lines and records


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


def test_a_safe_string_is_written_as_it_is_wherever_its_spaces_colons_and_brackets_are():
    for value in ("a b", "a:b", "a<b", "a:", "x>", "1000"):
        assert ldif_line("description", value) == f"description: {value}", value
    assert ldif_line("uidNumber", 1000) == "uidNumber: 1000"


@pytest.mark.parametrize(
    "value",
    [
        " lead",
        ":colon",
        "<angle",
        "trail ",
        "Zürich",
        "line\nbreak",
        "tab\there",
        "del\x7f",
        "\x00",
    ],
)
def test_values_no_safe_string_can_hold_are_base64_of_their_utf8(value):
    assert ldif_line("description", value) == f"description:: {b64(value)}"


def test_octets_are_always_base64():
    assert ldif_line("jpegPhoto", b"\xff\xd8") == "jpegPhoto:: /9g="
    assert ldif_line("objectGUID", bytearray(b"plain")) == f"objectGUID:: {b64(b'plain')}"


def test_a_record_is_its_comments_then_dn_changetype_and_body_one_line_each():
    record = change_record(JANE, "modify", ["add: mail", "mail: j@example.org", "-"], ["a", "b"])
    assert record == (
        f"# a\n# b\ndn: {JANE}\nchangetype: modify\nadd: mail\nmail: j@example.org\n-\n"
    )
    assert change_record(JANE, "delete") == f"dn: {JANE}\nchangetype: delete\n"


# ------------------------------------------------------------------ refusals and answers


def test_a_refusal_is_the_error_ldap3_raises_for_the_directorys_answer():
    refused = refusal(ALREADY_EXISTS, JANE, "addResponse")
    assert isinstance(refused, LDAPOperationResult)
    assert (refused.result, refused.description) == (ALREADY_EXISTS, "entryAlreadyExists")
    assert (refused.dn, refused.type, refused.message) == (JANE, "addResponse", "")


def test_the_directorys_own_attributes_are_left_out_of_a_planned_entry():
    read = entry(
        uid=["jane"],
        entryCSN=["1"],
        EntryUSN=["2"],
        uSNChanged=["3"],
        modifyTimestamp=["20261128000000Z"],
        modifiersName=["cn=admin"],
        createTimestamp=["20261127000000Z"],
    )
    kept = without_operational(read)
    assert dict(kept) == {"uid": ["jane"], "createTimestamp": ["20261127000000Z"]}
    assert kept["UID"] == ["jane"]
    assert "entryCSN" in read


def test_a_write_answers_success_and_a_post_read_gets_the_entry_as_left():
    left = entry(uid=["jane"], entryUSN=["7"])
    plain = {"result": 0, "description": "success", "type": "dryRun"}
    assert answer(left, None) == plain
    assert answer(left, [("1.2.3.4", False, None)]) == plain
    read = answer(left, [("1.2.3.4", False, None), (POST_READ_OID, True, b"")])
    shown = read.pop("controls")[POST_READ_OID]["value"]["result"]
    assert read == plain
    assert dict(shown) == {"uid": ["jane"]} and shown["UID"] == ["jane"]


# ------------------------------------------------------------------ add


def test_an_add_makes_the_entry_and_its_record_passwords_aside():
    made, record = added(
        JANE,
        {
            "objectClass": ["top", "inetOrgPerson"],
            "uid": "jane",
            "cn": ("Jane Doe",),
            "userPassword": ["secret"],
        },
        PASSWORDS,
    )
    assert dict(made) == {
        "objectClass": ["top", "inetOrgPerson"],
        "uid": ["jane"],
        "cn": ["Jane Doe"],
    }
    assert made["OBJECTCLASS"] == ["top", "inetOrgPerson"]
    assert record == (
        "# userPassword is set here (value not shown)\n"
        f"dn: {JANE}\nchangetype: add\n"
        "objectClass: top\nobjectClass: inetOrgPerson\nuid: jane\ncn: Jane Doe\n"
    )
    assert "secret" not in record


def test_a_password_attribute_is_matched_case_aside():
    made, record = added(JANE, {"UserPassword": "secret", "uid": "jane"}, PASSWORDS)
    assert dict(made) == {"uid": ["jane"]}
    assert record.startswith("# UserPassword is set here (value not shown)\n")


# ------------------------------------------------------------------ modify


def test_an_added_value_joins_the_others_and_the_read_entry_is_left_as_it_was():
    read = entry(uid=["jane"], mail=["a@example.org"])
    left, record = modified(JANE, read, {"mail": [(MODIFY_ADD, ["b@example.org"])]}, PASSWORDS)
    assert left["mail"] == ["a@example.org", "b@example.org"]
    assert left["uid"] == ["jane"]
    assert read["mail"] == ["a@example.org"]
    assert record == (f"dn: {JANE}\nchangetype: modify\nadd: mail\nmail: b@example.org\n-\n")


def test_an_added_value_to_a_new_attribute_creates_it():
    left, _ = modified(JANE, entry(uid=["jane"]), {"title": [(MODIFY_ADD, ["Boss"])]}, PASSWORDS)
    assert left["TITLE"] == ["Boss"]


def test_adding_a_value_already_there_case_aside_is_refused():
    read = entry(mail=["Jane@Example.org"])
    with pytest.raises(LDAPOperationResult) as refused:
        modified(JANE, read, {"mail": [(MODIFY_ADD, ["jane@example.org"])]}, PASSWORDS)
    assert (refused.value.result, refused.value.dn) == (VALUE_EXISTS, JANE)
    assert refused.value.type == "modifyResponse"


def test_octets_are_compared_exactly():
    read = entry(jpegPhoto=[b"A"])
    left, _ = modified(JANE, read, {"jpegPhoto": [(MODIFY_ADD, [b"a"])]}, PASSWORDS)
    assert left["jpegPhoto"] == [b"A", b"a"]
    left, _ = modified(JANE, entry(description=["a"]), {"description": [(0, [b"a"])]}, PASSWORDS)
    assert left["description"] == ["a", b"a"]
    with pytest.raises(LDAPOperationResult) as refused:
        modified(JANE, read, {"jpegPhoto": [(MODIFY_ADD, [b"A"])]}, PASSWORDS)
    assert refused.value.result == VALUE_EXISTS


def test_deleting_values_removes_them_case_aside_and_the_attribute_with_the_last():
    read = entry(mail=["a@example.org", "B@example.org", "c@example.org"])
    left, record = modified(JANE, read, {"mail": [(MODIFY_DELETE, ["b@EXAMPLE.org"])]}, PASSWORDS)
    assert left["mail"] == ["a@example.org", "c@example.org"]
    assert record.endswith("delete: mail\nmail: b@EXAMPLE.org\n-\n")
    changes = {"mail": [(MODIFY_DELETE, ["a@example.org", "c@example.org", "b@example.org"])]}
    left, _ = modified(JANE, read, changes, PASSWORDS)
    assert "mail" not in left


def test_deleting_a_value_that_is_not_there_is_refused_even_beside_one_that_is():
    read = entry(mail=["a@example.org"])
    for values in (["x@example.org"], ["a@example.org", "x@example.org"]):
        with pytest.raises(LDAPOperationResult) as refused:
            modified(JANE, read, {"mail": [(MODIFY_DELETE, values)]}, PASSWORDS)
        assert (refused.value.result, refused.value.type) == (NO_SUCH_ATTRIBUTE, "modifyResponse")
    with pytest.raises(LDAPOperationResult) as refused:
        modified(JANE, read, {"title": [(MODIFY_DELETE, ["x"])]}, PASSWORDS)
    assert refused.value.result == NO_SUCH_ATTRIBUTE


def test_deleting_an_attribute_removes_all_its_values_and_is_refused_when_it_is_absent():
    read = entry(uid=["jane"], mail=["a@example.org", "b@example.org"])
    left, record = modified(JANE, read, {"mail": [(MODIFY_DELETE, [])]}, PASSWORDS)
    assert dict(left) == {"uid": ["jane"]}
    assert record.endswith("changetype: modify\ndelete: mail\n-\n")
    with pytest.raises(LDAPOperationResult) as refused:
        modified(JANE, read, {"title": [(MODIFY_DELETE, [])]}, PASSWORDS)
    assert (refused.value.result, refused.value.dn) == (NO_SUCH_ATTRIBUTE, JANE)


def test_a_replace_sets_the_values_and_an_empty_one_removes_the_attribute():
    read = entry(uid=["jane"], title=["Boss", "Chief"])
    left, record = modified(JANE, read, {"title": [(MODIFY_REPLACE, ["Engineer"])]}, PASSWORDS)
    assert left["title"] == ["Engineer"]
    assert record.endswith("replace: title\ntitle: Engineer\n-\n")
    left, record = modified(JANE, read, {"title": [(MODIFY_REPLACE, [])]}, PASSWORDS)
    assert dict(left) == {"uid": ["jane"]}
    assert record.endswith("replace: title\n-\n")
    left, _ = modified(JANE, read, {"mail": [(MODIFY_REPLACE, [])]}, PASSWORDS)
    assert dict(left) == dict(read)


def test_operations_apply_in_order_and_each_is_its_own_block_of_the_record():
    read = entry(mail=["old@example.org"], sn=["Doe"])
    changes = {
        "mail": [(MODIFY_DELETE, ["old@example.org"]), (MODIFY_ADD, ["new@example.org"])],
        "sn": [(2, ("Roe",))],
        "uidNumber": [(MODIFY_INCREMENT, [1])],
    }
    left, record = modified(JANE, read, changes, PASSWORDS)
    assert left["mail"] == ["new@example.org"] and left["sn"] == ["Roe"]
    assert record == (
        f"dn: {JANE}\nchangetype: modify\n"
        "delete: mail\nmail: old@example.org\n-\n"
        "add: mail\nmail: new@example.org\n-\n"
        "replace: sn\nsn: Roe\n-\n"
        "increment: uidNumber\nuidNumber: 1\n-\n"
    )


def test_a_password_change_is_a_comment_and_changes_no_attribute():
    read = entry(uid=["jane"], userPassword=["{SSHA}old"])
    changes = {
        "userPassword": [(MODIFY_REPLACE, ["secret"])],
        "USERPASSWORD": [(MODIFY_DELETE, ["nothing like it"])],
        "title": [(MODIFY_REPLACE, ["Boss"])],
    }
    left, record = modified(JANE, read, changes, PASSWORDS)
    assert left["userPassword"] == ["{SSHA}old"] and left["title"] == ["Boss"]
    assert record == (
        "# userPassword is set here (value not shown)\n"
        "# USERPASSWORD is set here (value not shown)\n"
        f"dn: {JANE}\nchangetype: modify\nreplace: title\ntitle: Boss\n-\n"
    )


@pytest.mark.parametrize(
    ("object_class", "members"),
    [("groupOfNames", "member"), ("GROUPOFUNIQUENAMES", "uniqueMember")],
)
def test_a_group_left_without_members_is_refused_as_the_directory_does(object_class, members):
    read = entry(objectClass=["top", object_class], cn=["team"], **{members: [JANE]})
    with pytest.raises(LDAPOperationResult) as refused:
        modified(TEAM, read, {members: [(MODIFY_DELETE, [JANE])]}, PASSWORDS)
    assert (refused.value.result, refused.value.dn) == (OBJECT_CLASS_VIOLATION, TEAM)
    assert refused.value.type == "modifyResponse"
    changes = {members: [(MODIFY_ADD, ["uid=joe"]), (MODIFY_DELETE, [JANE])]}
    left, _ = modified(TEAM, read, changes, PASSWORDS)
    assert left[members] == ["uid=joe"]


def test_other_entries_may_be_left_without_those_attributes():
    read = entry(objectClass=["top", "inetOrgPerson"], member=["x"], uniqueMember=["y"])
    changes = {"member": [(MODIFY_DELETE, [])], "uniqueMember": [(MODIFY_DELETE, [])]}
    left, _ = modified(JANE, read, changes, PASSWORDS)
    assert dict(left) == {"objectClass": ["top", "inetOrgPerson"]}


def test_a_group_of_names_needs_member_not_unique_member():
    read = entry(objectClass=["groupOfNames"], member=[JANE], uniqueMember=[JANE])
    left, _ = modified(TEAM, read, {"uniqueMember": [(MODIFY_DELETE, [])]}, PASSWORDS)
    assert dict(left) == {"objectClass": ["groupOfNames"], "member": [JANE]}


# ------------------------------------------------------------------ rename


def test_a_rename_keeps_the_parent():
    assert renamed_dn(JANE, "uid=joan") == "uid=joan,ou=people,dc=example,dc=org"
    assert renamed_dn(r"cn=Doe\, Jane,ou=people,dc=example,dc=org", "cn=Roe") == (
        "cn=Roe,ou=people,dc=example,dc=org"
    )


def test_a_rename_swaps_the_rdn_value_case_aside_and_keeps_the_others():
    read = entry(uid=["Jane", "jd"], cn=["Jane Doe"])
    moved, record = renamed("UID=jane,ou=people,dc=example,dc=org", read, "uid=joan")
    assert moved["uid"] == ["jd", "joan"] and moved["cn"] == ["Jane Doe"]
    assert read["uid"] == ["Jane", "jd"]
    assert record == (
        "dn: UID=jane,ou=people,dc=example,dc=org\nchangetype: modrdn\n"
        "newrdn: uid=joan\ndeleteoldrdn: 1\n"
    )


def test_a_rename_to_another_naming_attribute_moves_the_value_across():
    moved, record = renamed(JANE, entry(uid=["jane"], cn=["Jane"]), "cn=Jörg")
    assert not moved.get("uid") and moved["cn"] == ["Jane", "Jörg"]
    assert f"newrdn:: {b64('cn=Jörg')}\n" in record


def refused_as(refused: pytest.ExceptionInfo, code: int, dn: str, kind: str) -> bool:
    return (refused.value.result, refused.value.dn, refused.value.type) == (code, dn, kind)


def test_octets_never_equal_text_even_text_spelling_them():
    read = entry(description=["b'x'"])
    left, _ = modified(JANE, read, {"description": [(MODIFY_ADD, [b"x"])]}, PASSWORDS)
    assert left["description"] == ["b'x'", b"x"]


def test_each_refused_delete_names_the_entry_and_the_request():
    read = entry(mail=["a@example.org"])
    for changes in (
        {"mail": [(MODIFY_DELETE, ["x@example.org"])]},
        {"title": [(MODIFY_DELETE, [])]},
    ):
        with pytest.raises(LDAPOperationResult) as refused:
            modified(JANE, read, changes, PASSWORDS)
        assert refused_as(refused, NO_SUCH_ATTRIBUTE, JANE, "modifyResponse"), changes


def test_every_operation_on_a_password_attribute_is_a_comment():
    changes = {"userPassword": [(MODIFY_DELETE, ["old"]), (MODIFY_ADD, ["new"])]}
    left, record = modified(JANE, entry(uid=["jane"]), changes, PASSWORDS)
    assert dict(left) == {"uid": ["jane"]}
    assert record.count("# userPassword is set here (value not shown)\n") == 2


def test_a_rename_unescapes_the_rdn_values_as_the_entry_holds_them():
    read = entry(uid=["jane+doe"], cn=["Jane"])
    moved, record = renamed(r"uid=jane\+doe,ou=people,dc=example,dc=org", read, r"uid=jane\, d")
    assert moved["uid"] == ["jane, d"]
    assert "newrdn: uid=jane\\, d\n" in record
    moved, _ = renamed(
        r"cn=1\=2,ou=groups,dc=example,dc=org", entry(cn=["1=2"]), r"cn=\C3\A9t\c3\a9"
    )
    assert dict(moved) == {"cn": ["été"]}
    moved, _ = renamed(r"cn=\#1\ ,ou=groups,dc=example,dc=org", entry(cn=["#1 "]), "cn=a\\\\b")
    assert dict(moved) == {"cn": ["a\\b"]}
    moved, _ = renamed(r"cn=1\=2,ou=groups,dc=example,dc=org", entry(cn=["1=2"]), "cn=x=y")
    assert dict(moved) == {"cn": ["x=y"]}


def test_a_rename_of_an_entry_without_the_old_or_new_attribute():
    moved, _ = renamed(JANE, entry(cn=["Jane"]), "cn=Joan")
    assert not moved.get("uid") and moved["cn"] == ["Jane", "Joan"]
    moved, _ = renamed(JANE, entry(uid=["jane"]), "cn=Joan")
    assert not moved.get("uid") and moved["cn"] == ["Joan"]
