"""A big group's members kept as pairs and written in chunks: the same JSON as json.dumps."""

import json

import pytest

from scim_core import members as module
from scim_core.members import MemberList, StreamedGroup, member_template

BASE = 'https://scim.example.com/scim%20v2/"%(ref)s'


def dumps(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def rendered_member(display, ident, keys):
    full = {"value": ident, "display": display, "type": "User", "$ref": f"{BASE}/Users/{ident}"}
    return {k: full[k] for k in keys}


def test_member_list_reads_as_member_dicts_sorted_stably_by_display():
    members = MemberList([("b", "2"), ("a", "1"), ("b", "0")])
    assert list(members) == [
        {"value": "1", "display": "a", "type": "User"},
        {"value": "2", "display": "b", "type": "User"},
        {"value": "0", "display": "b", "type": "User"},
    ]
    assert len(members) == 3 and members[2]["value"] == "0"
    assert members[:1] == [{"value": "1", "display": "a", "type": "User"}]
    assert members == list(members) and members == MemberList([("a", "1"), ("b", "2"), ("b", "0")])


@pytest.mark.parametrize(
    "keys",
    [
        ("value", "type", "$ref"),
        ("value", "display", "type", "$ref"),
        ("display",),
        ("$ref", "value"),
    ],
)
def test_streamed_group_is_json_dumps_of_the_whole_group(keys, monkeypatch):
    monkeypatch.setattr(module, "CHUNK_MEMBERS", 7)
    pairs = [(f'Dïsplay "{i}"\\\n\u2028', f"id-{i:03d}") for i in range(50)]
    members = MemberList(list(pairs))
    sample = rendered_member(*members.pairs[0], keys)
    write = member_template(sample, members.pairs[0], BASE)
    assert write is not None
    group = {"schemas": ["urn:g"], "id": "g", "members": "x", "meta": {"version": 'W/"1"'}}
    streamed = StreamedGroup(group, members, write)
    whole = {**group, "members": [rendered_member(d, i, keys) for d, i in members.pairs]}
    chunks = list(streamed)
    assert len(chunks) > 3 and all(isinstance(c, bytes) for c in chunks)
    assert b"".join(chunks) == dumps(whole).encode()
    assert b"".join(streamed) == b"".join(chunks)  # iterable again


def test_a_template_is_refused_for_what_it_cannot_reproduce():
    pair = ("alice", "1")
    assert member_template({"value": "1", "primary": True}, pair, BASE) is None
    assert member_template({"value": "2"}, pair, BASE) is None
    assert member_template({}, pair, BASE) is None
    assert member_template({"$ref": f"{BASE}/Users/1"}, pair, "https://other") is None


def test_a_group_with_a_marker_like_value_is_split_on_its_own_marker():
    members = MemberList([("a", "1"), ("b", "2")])
    group = {"id": '"members-0"', "displayName": "members", "members": None}
    write = member_template({"value": "1"}, members.pairs[0], BASE)
    assert write is not None
    text = b"".join(StreamedGroup(group, members, write))
    assert text == dumps({**group, "members": [{"value": "1"}, {"value": "2"}]}).encode()
