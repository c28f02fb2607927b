"""Attributes a client writes that nothing stores: skipped, reported by name, logged once."""

import json
import logging

import pytest

from scim_core import ScimRequest, ScimService, add_dropped_attribute_observer
from scim_core.backends.memory import MemoryBackend

ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"


def call(service, method, path, body):
    request = ScimRequest(
        method, path, body=json.dumps(body).encode(), content_type="application/scim+json"
    )
    return service.handle(request)


def test_each_form_a_client_writes_is_reported_by_its_rfc_name(caplog, monkeypatch):
    from scim_core import observe

    monkeypatch.setattr(observe, "_logged", set())  # as a fresh worker starts
    caplog.set_level(logging.INFO, logger="scim.attributes")
    service = ScimService(MemoryBackend())
    seen: list[tuple[str, str]] = []
    remove = add_dropped_attribute_observer(lambda kind, name: seen.append((kind, name)))
    try:
        created = call(
            service,
            "POST",
            "/Users",
            {
                "userName": "dropped.unit",
                "name": {"givenName": "D", "familyName": "U"},
                "emails": [{"value": "d@example.org"}],
                "id": "ignored",
                "meta": {"created": "x"},
                "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
                "nickName": "Canary-Value-1",
            },
        )
        assert created.status == 201
        operations = [
            {"op": "add", "path": 'phoneNumbers[type eq "work"].value', "value": "+1 555"},
            {"op": "replace", "path": f"{ENTERPRISE}:department", "value": "Canary-Value-2"},
            {"op": "replace", "value": {"name.middleName": "M", "shoeSize": 44}},
        ]
        patched = call(
            service,
            "PATCH",
            "/Users/" + created.body["id"],
            {"schemas": [PATCH_OP], "Operations": operations},
        )
        again = call(
            service,
            "PATCH",
            "/Users/" + created.body["id"],
            {"schemas": [PATCH_OP], "Operations": operations},
        )
        assert (patched.status, again.status) == (200, 200)
        assert "department" not in json.dumps(patched.body)
    finally:
        remove()
    expected = [
        ("User", "nickname"),
        ("User", "phonenumbers"),
        ("User", "department"),
        ("User", "name.middlename"),
        ("User", "other"),
    ]
    assert seen == expected + expected[1:]
    logged = [r.getMessage() for r in caplog.records if r.name == "scim.attributes"]
    assert len(logged) == len(set(logged)) == 5, logged  # each name once per process
    assert "'nickname'" in logged[0] and not any("Canary" in line for line in logged)


def _dropped(monkeypatch, caplog, resource_type, operations):
    """(label, logged name) of each attribute one PATCH reports as dropped."""
    from scim_core import observe

    monkeypatch.setattr(observe, "_logged", set())
    caplog.set_level(logging.INFO, logger="scim.attributes")
    service = ScimService(MemoryBackend())
    if resource_type == "User":
        body = {
            "userName": "dropped.more",
            "name": {"givenName": "D", "familyName": "M"},
            "emails": [{"value": "dm@example.org"}],
        }
    else:
        body = {"displayName": "dropped-group"}
    created = call(service, "POST", f"/{resource_type}s", body)
    assert created.status == 201
    seen: list[tuple[str, str]] = []
    remove = add_dropped_attribute_observer(lambda kind, name: seen.append((kind, name)))
    try:
        patched = call(
            service,
            "PATCH",
            f"/{resource_type}s/" + created.body["id"],
            {"schemas": [PATCH_OP], "Operations": operations},
        )
    finally:
        remove()
    assert patched.status == 200, patched.body
    # The name as the line shows it: a redacting log filter (the Flask adapter's, once an
    # app configured logging in this process) formats a record's arguments into its message.
    logged = [r.getMessage().split("'")[1] for r in caplog.records if r.name == "scim.attributes"]
    return seen, logged


CORE = "urn:ietf:params:scim:schemas:core:2.0:User"


@pytest.mark.parametrize(
    ("operation", "label", "name"),
    [
        ({"op": "add", "path": f"{CORE}:nickName", "value": "N"}, "nickname", "nickname"),
        ({"op": "add", "path": f"{CORE.upper()}:NickName", "value": "N"}, "nickname", "nickname"),
        (
            {"op": "add", "path": "NAME.MiddleName", "value": "M"},
            "name.middlename",
            "name.middlename",
        ),
        ({"op": "add", "value": {"urn:example:ext:1.0:shoeSize": 44}}, "other", "shoesize"),
        ({"op": "add", "value": {f"{ENTERPRISE}:costCenter": "4"}}, "costcenter", "costcenter"),
        ({"op": "add", "value": {"shoeSize": 44}}, "other", "shoesize"),
        ({"op": "add", "path": 'ims[type eq "aim"].value', "value": "x"}, "ims", "ims"),
        ({"op": "add", "path": 'ims[type eq "a[b"].value', "value": "x"}, "ims", "ims"),
        # costCenter of an extension this service does not know is not the enterprise one.
        ({"op": "add", "value": {"urn:example:ext:1.0:costCenter": "4"}}, "other", "costcenter"),
    ],
)
def test_a_dropped_user_attribute_is_named_without_its_schema(
    monkeypatch, caplog, operation, label, name
):
    seen, logged = _dropped(monkeypatch, caplog, "User", [operation])
    assert seen == [("User", label)]
    assert logged == [name]


def test_read_only_keys_are_not_reported_as_dropped(monkeypatch, caplog):
    value = {"id": "x", "meta": {"version": "1"}, "schemas": [], "META.version": "2", "": 1}
    operations = [{"op": "replace", "value": value}]
    assert _dropped(monkeypatch, caplog, "User", operations) == ([], [])
