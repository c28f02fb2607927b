"""The replay runner itself: a replay that cannot fail proves nothing."""

import json

import pytest
from replay import ABSENT, PRESENT, Replay, dig, load, mismatch, substitute


def test_substitute_keeps_types_and_refuses_unknown_names():
    variables = {"id": "u1", "n": 3}
    assert substitute({"a": "${n}", "b": "x-${id}", "c": ["${id}"]}, variables) == {
        "a": 3,
        "b": "x-u1",
        "c": ["u1"],
    }
    with pytest.raises(KeyError):
        substitute("${nobody}", variables)


@pytest.mark.parametrize(
    ("expected", "actual", "report"),
    [
        ({"a": 1}, {"a": 2}, "body.a: expected 1, got 2"),
        ({"a": 1}, {}, "body.a: missing"),
        ({"a": ABSENT}, {"a": None}, "body.a: expected absent, got None"),
        ({"a": PRESENT}, {}, "body.a: missing"),
        ({"a": True}, {"a": "True"}, "body.a: expected True, got 'True'"),
        ({"a": 1}, {"a": True}, "body.a: expected 1, got True"),
        ({"a": [{"v": 1}]}, {"a": [{"v": 1}, {"v": 2}]}, "body.a: expected 1 items, got "),
        (
            {"a": [{"v": 1}, {"v": 1}]},
            {"a": [{"v": 1}, {"v": 2}]},
            "body.a[1]: no item matches {'v': 1} in [{'v': 2}]",
        ),
        ({"a": {"b": "x"}}, {"a": "x"}, "body.a: expected an object, got 'x'"),
    ],
)
def test_mismatches_are_reported(expected, actual, report):
    # The report names the place and what differs: the replay's failure message.
    assert mismatch(expected, actual).startswith(report)


def test_matches():
    actual = {"a": [{"v": 2, "w": 0}, {"v": 1}], "b": {"c": "d", "e": "f"}}
    assert mismatch({"a": [{"v": 1}, {"v": 2}], "b": {"c": "d"}, "z": ABSENT}, actual) is None
    assert mismatch({"b": PRESENT}, actual) is None
    assert dig({"Resources": [{"id": "x"}]}, "Resources.0.id") == "x"


def test_every_scenario_names_its_source():
    for name in ("entra-default", "entra-scim062020", "okta", "authentik"):
        scenario = load(name)
        assert scenario["steps"] and len(scenario["source"]) > 80


class _Response:
    def __init__(self, status, body=b""):
        self.status_code = status
        self.data = body
        self.headers = {"Content-Type": "application/scim+json"}

    def get_data(self, as_text=False):
        return self.data.decode() if as_text else self.data

    def get_json(self, force=False):
        return json.loads(self.data)


def test_a_wrong_status_fails_the_replay():
    replay = Replay(lambda *a, **k: _Response(500), "okta", run="x", missing="y")
    with pytest.raises(AssertionError, match="determine if the user exists"):
        replay.through("determine if the user exists")


def test_a_wrong_body_fails_the_replay():
    body = (
        b'{"schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],'
        b' "totalResults": 1, "startIndex": 1, "Resources": []}'
    )
    replay = Replay(lambda *a, **k: _Response(200, body), "okta", run="x", missing="y")
    with pytest.raises(AssertionError, match="totalResults"):
        replay.through("determine if the user exists")
