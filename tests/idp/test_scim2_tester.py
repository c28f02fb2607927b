"""An independent conformance check: python-scim's ``scim2-tester`` against the service.

``check_server`` discovers the service, builds its models from ``/Schemas``, and for each
resource type creates, reads, lists, replaces and deletes resources and PATCHes (add, remove,
replace) every attribute ``/Schemas`` says a client may write, comparing what it reads back
with what it wrote. It runs here on the Flask app over the session's real slapd.

The outcome is asserted in full: which checks ran, which were skipped and why (cross-type
``/.search``, 501 by design), and that the only failures are group PUT and DELETE, which answer
501 by design (group lifecycle belongs to the directory). Every value the tester writes reads
back as written, including a lone email with ``primary: false``: the directory keeps addresses
in ``mail`` and the LDAP plugin records "none is primary" in ``scimNoPrimaryEmail``.

The tester's randomness is seeded, so a run is reproducible; the seed is one that draws
``primary: false`` for that email, which is checked.
"""

import random
from collections import Counter

import httpx2
import pytest
from replay import TOKEN
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import Status, check_server
from scim_http import make_app, settings_for

from scim_core.backends.ldap import LdapBackend
from scim_core.testing.slapd import SlapdInstance

GROUP_WRITES_DETAIL = (
    "Group replacement and deletion are managed in the directory, not through SCIM; "
    "use PATCH to change membership."
)
DISCOVERY = {
    "service_provider_config_endpoint": 1,
    "service_provider_config_endpoint_methods": 4,
    "query_all_resource_types": 1,
    "query_resource_type_by_id": 2,
    "resource_types_schema_validation": 2,
    "access_invalid_resource_type": 1,
    "resource_types_endpoint_methods": 4,
    "query_all_schemas": 1,
    "access_schema_by_id": 3,
    "access_invalid_schema": 1,
    "schemas_endpoint_methods": 4,
    "random_url": 1,
}
CRUD = {
    "object_creation": 1,
    "object_query": 1,
    "object_query_without_id": 1,
    "object_query_with_attributes": 2,  # one attribute included, one excluded
    "object_list_with_attributes": 2,
    "search_with_attributes": 1,
    "object_replacement": 1,
    "object_deletion": 1,
}
# Groups keep members and, on OpenLDAP, an externalId: both projections are checked.
GROUP_CRUD = CRUD
# PATCH checks: one per attribute /Schemas lets a client write (add/replace) or remove: the
# profile's own mapping (Entra's and Okta's default attributes among them) included.
_ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
_MAPPED = [
    "preferredLanguage",
    "userType",
    "profileUrl",
    "nickName",
    "locale",
    "timezone",
    "phoneNumbers",
    "addresses",
    _ENTERPRISE,
    *(
        f"{_ENTERPRISE}:{name}"
        for name in (
            "employeeNumber",
            "manager",
            "department",
            "organization",
            "costCenter",
            "division",
        )
    ),
]
USER_PATCHES = {
    "check_add_attribute": ["externalId", "displayName", "title", "password", *_MAPPED],
    "check_remove_attribute": ["externalId", "displayName", "title", *_MAPPED],
    "check_replace_attribute": [
        "externalId",
        "userName",
        "name",
        "displayName",
        "title",
        "emails",
        "active",
        "password",
        *_MAPPED,
    ],
}
# displayName is renamed in place (the id stays); externalId is kept on the scimGroup class.
GROUP_PATCHES = {
    "check_add_attribute": ["externalId", "members"],
    "check_remove_attribute": ["externalId", "members"],
    "check_replace_attribute": ["externalId", "displayName", "members"],
}
SEED = 2  # draws primary: false for a lone email, so that case is exercised too


@pytest.fixture(scope="module")
def app():
    """A directory of its own: the tester lists users and expects its own among the first
    page, which users other tests leave in the session's directory could push off it."""
    with SlapdInstance() as slapd:
        backend = LdapBackend(settings_for(slapd))
        try:
            yield make_app(backend, TOKEN, log_level="WARNING", public_url="http://scim.test")
        finally:
            backend.close()


@pytest.fixture(scope="module")
def results(app):
    state = random.getstate()
    random.seed(SEED)
    try:
        with httpx2.Client(
            base_url="http://scim.test/scim/v2",
            transport=httpx2.WSGITransport(app=app),
            headers={"Authorization": f"Bearer {TOKEN}"},
        ) as http_client:
            return check_server(SyncSCIMClient(http_client))
    finally:
        random.setstate(state)


def _urn(result):
    return result.data.get("urn") if isinstance(result.data, dict) else None


def test_every_check_ran(results):
    ran = Counter((r.resource_type, r.title) for r in results)
    expected = Counter({(None, title): n for title, n in DISCOVERY.items()})
    for resource_type, crud, patches in (
        ("User", CRUD, USER_PATCHES),
        ("Group", GROUP_CRUD, GROUP_PATCHES),
    ):
        for title, n in crud.items():
            expected[resource_type, title] = n
        for title, urns in patches.items():
            expected[resource_type, title] = len(urns)
            urns_ran = [
                _urn(r) for r in results if (r.resource_type, r.title) == (resource_type, title)
            ]
            assert urns_ran == urns, (resource_type, title)
    assert ran == expected
    assert len(results) == 112


def test_only_cross_type_search_is_skipped(results):
    skipped = [(r.resource_type, r.title) for r in results if r.status == Status.SKIPPED]
    assert sorted(skipped) == [
        ("Group", "search_with_attributes"),
        ("User", "search_with_attributes"),
    ]
    for result in results:
        if result.status == Status.SKIPPED:
            assert "POST /.search" in result.reason  # answered 501 by design, RFC 7644 §3.4.3


def test_group_put_and_delete_are_the_501s(results):
    failed = {(r.resource_type, r.title): r for r in results if r.status == Status.ERROR}
    for title in ("object_replacement", "object_deletion"):
        result = failed.pop(("Group", title))
        assert result.reason == GROUP_WRITES_DETAIL
        assert result.data["status"] == "501"
    for result in failed.values():
        assert result.reason != GROUP_WRITES_DETAIL


def test_the_501s_are_the_only_failures(results):
    """Nothing else fails: every value written reads back as written, none is derived."""
    failures = [r for r in results if r.status not in (Status.SUCCESS, Status.SKIPPED)]
    assert sorted((r.resource_type, r.title, _urn(r)) for r in failures) == [
        ("Group", "object_deletion", None),
        ("Group", "object_replacement", None),
    ], failures
    assert all(r.status != Status.CRITICAL for r in results)


def test_a_lone_non_primary_email_reads_back_as_written(results):
    """The seed draws ``primary: false`` for a lone email, and that replace succeeds."""
    (result,) = [
        r
        for r in results
        if (r.resource_type, r.title, _urn(r)) == ("User", "check_replace_attribute", "emails")
    ]
    assert result.status == Status.SUCCESS, result
    assert [e.primary for e in result.data["value"]] == [False]
