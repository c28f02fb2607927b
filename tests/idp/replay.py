"""Replays of identity-provider request sequences stored as JSON in ``tests/data/idp/``.

A scenario file holds a ``source`` (the public document the requests follow) and ``steps``::

    {"name": "create user",
     "request": {"method": "POST", "path": "/Users", "query": {...}, "headers": {...},
                 "body": {...}},
     "response": {"status": 201, "headers": {...}, "body": {...}},
     "capture": {"user": "id"}}

* Every string in a step may hold ``${name}`` placeholders: the test's variables (unique names
  for this run, since the session's slapd is shared) and values captured by earlier steps.
  A string that is exactly one placeholder is replaced by the value itself (any JSON type).
* ``response.body`` is a subset: objects must hold the given keys (the string ``"$absent"``
  requires a key to be missing, ``"$present"`` only requires it), lists must have the same
  length and their items match one-to-one in any order.
* ``capture`` maps a variable to a dotted path into the response body (``Resources.0.id``).

``Replay.through(name)`` runs the steps up to and including ``name``, so a test can look at the
directory between steps; ``Replay.rest()`` runs what is left.
"""

from __future__ import annotations

import json
import pathlib
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

DATA = pathlib.Path(__file__).parent.parent / "data" / "idp"
TOKEN = "idp-replay-token"  # the bearer token the replays and the clients send
SCIM_JSON = "application/scim+json"
ERROR_URN = "urn:ietf:params:scim:api:messages:2.0:Error"
ABSENT = "$absent"
PRESENT = "$present"

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def load(name: str) -> dict[str, Any]:
    """The scenario ``tests/data/idp/<name>.json``."""
    scenario: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text("utf-8"))
    assert scenario.get("source"), f"{name}: say which public document the steps follow"
    names = [step["name"] for step in scenario["steps"]]
    assert len(names) == len(set(names)), f"{name}: step names must be unique"
    return scenario


def substitute(value: Any, variables: Mapping[str, Any]) -> Any:
    """``value`` with every ``${name}`` replaced; an unknown name is an error, not a blank."""
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole:
            return variables[whole.group(1)]
        return _PLACEHOLDER.sub(lambda m: str(variables[m.group(1)]), value)
    if isinstance(value, list):
        return [substitute(item, variables) for item in value]
    if isinstance(value, dict):
        return {substitute(k, variables): substitute(v, variables) for k, v in value.items()}
    return value


def mismatch(expected: Any, actual: Any, where: str = "body") -> str | None:
    """Why ``actual`` does not match the subset ``expected``, or ``None`` when it does."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where}: expected an object, got {actual!r}"
        for key, want in expected.items():
            if want == ABSENT:
                if key in actual:
                    return f"{where}.{key}: expected absent, got {actual[key]!r}"
                continue
            if key not in actual:
                return f"{where}.{key}: missing"
            if want == PRESENT:
                continue
            problem = mismatch(want, actual[key], f"{where}.{key}")
            if problem:
                return problem
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{where}: expected {len(expected)} items, got {actual!r}"
        unmatched = list(actual)
        for index, want in enumerate(expected):
            found = next((a for a in unmatched if mismatch(want, a) is None), None)
            if found is None:
                return f"{where}[{index}]: no item matches {want!r} in {unmatched!r}"
            unmatched.remove(found)
        return None
    if expected != actual or type(expected) is not type(actual):
        return f"{where}: expected {expected!r}, got {actual!r}"
    return None


def dig(body: Any, path: str) -> Any:
    """``body`` followed along a dotted path; list indexes are numbers."""
    value = body
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


class Replay:
    """Runs one scenario's steps, in order, through the ``http`` test fixture."""

    def __init__(self, http: Any, name: str, **variables: Any) -> None:
        self.http = http
        self.scenario = load(name)
        self.variables: dict[str, Any] = dict(variables)
        self.responses: dict[str, Any] = {}
        self._next = 0

    def through(self, name: str) -> Any:
        """Run the steps up to and including ``name``; return that step's response."""
        names = [step["name"] for step in self.scenario["steps"]]
        assert name in names[self._next :], f"no step {name!r} left to run"
        while True:
            step = self.scenario["steps"][self._next]
            self._next += 1
            self._run(step)
            if step["name"] == name:
                return self.responses[name]

    def rest(self) -> None:
        """Run every step not run yet."""
        steps = self.scenario["steps"]
        assert self._next < len(steps), "every step already ran"
        self.through(steps[-1]["name"])

    def body(self, name: str) -> Any:
        """The JSON body a step got back (``None`` for an empty body)."""
        response = self.responses[name]
        return response.get_json(force=True) if response.data else None

    def _run(self, step: Mapping[str, Any]) -> None:
        request = substitute(step["request"], self.variables)
        expected = substitute(step["response"], self.variables)
        headers = {"Content-Type": SCIM_JSON, **request.get("headers", {})}
        data = None
        if "body" in request:
            data = json.dumps(request["body"]).encode()
        else:
            headers.pop("Content-Type")
        path = request["path"]
        if request.get("query"):
            path += "?" + urlencode(request["query"])
        response = self.http(request["method"], path, data=data, headers=headers)
        self.responses[step["name"]] = response
        label = f"{self.scenario['name']} / {step['name']}"
        text = response.get_data(as_text=True)
        assert response.status_code == expected["status"], (label, response.status_code, text)
        for header, want in expected.get("headers", {}).items():
            got = response.headers.get(header)
            assert (got is not None) if want == PRESENT else got == want, (label, header, got)
        if response.data:
            assert response.headers["Content-Type"] == SCIM_JSON, label
            body = response.get_json(force=True)
            if response.status_code >= 400:
                assert body["schemas"] == [ERROR_URN], (label, body)
                assert body["status"] == str(response.status_code), (label, body)
        else:
            body = None
        if "body" in expected:
            problem = mismatch(expected["body"], body)
            assert problem is None, (label, problem)
        for variable, where in step.get("capture", {}).items():
            self.variables[variable] = dig(body, where)
