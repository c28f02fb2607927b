"""Attributes a client writes that nothing stores: skipped, reported by name, logged once."""

import json
import logging

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
