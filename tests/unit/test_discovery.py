"""The discovery endpoints as an identity provider reads them (RFC 7643 §5, §6, §7): what the
service says it supports, where each resource type lives and with which schemas, and where
each schema is, all of it true of the service that answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scim_core import ScimRequest, ScimService
from scim_core.backends.memory import MemoryBackend
from scim_core.config import ServiceConfig
from scim_core.discovery import pagination, resource_types, schemas, service_provider_config
from scim_core.schemas.attributes import DEFAULT_SCHEMAS, Attribute
from scim_core.secret import Secret
from scim_core.urns import (
    ENTERPRISE_URN,
    GROUP_URN,
    RESOURCE_TYPE_URN,
    SCHEMA_URN,
    SERVICE_PROVIDER_CONFIG_URN,
    USER_URN,
)

BASE = "https://scim.example.test/scim/v2"
ALICE = {
    "schemas": [USER_URN],
    "userName": "alice",
    "name": {"givenName": "Alice", "familyName": "Liddell"},
    "emails": [{"value": "alice@example.org"}],
}


def get(service: ScimService, path: str, **query: str) -> Any:
    answer = service.handle(ScimRequest("GET", path, query=query, base_url=BASE))
    assert answer.status == 200, answer.body
    return answer.json()


def post(service: ScimService, path: str, body: dict[str, Any]) -> Any:
    request = ScimRequest(
        "POST", path, body=json.dumps(body).encode(), content_type="application/scim+json"
    )
    answer = service.handle(request)
    assert answer.status == 201, answer.body
    return answer.json()


@pytest.fixture
def service() -> ScimService:
    return ScimService(MemoryBackend(), ServiceConfig(max_results=150, default_count=40))


# --------------------------------------------------------------------------- RFC 7643 §5


def test_the_service_provider_config_says_what_the_service_supports(service) -> None:
    config = get(service, "/ServiceProviderConfig")
    assert config["schemas"] == [SERVICE_PROVIDER_CONFIG_URN]
    assert config["patch"] == {"supported": True}
    assert config["bulk"] == {"supported": False, "maxOperations": 0, "maxPayloadSize": 0}
    assert config["filter"] == {"supported": True, "maxResults": 150}
    assert config["changePassword"] == {"supported": True}
    assert config["sort"] == {"supported": False}
    assert config["etag"] == {"supported": True}
    assert config["documentationUri"].startswith("https://")
    assert config["meta"] == {
        "resourceType": "ServiceProviderConfig",
        "location": f"{BASE}/ServiceProviderConfig",
    }


def test_the_service_provider_config_names_the_bearer_scheme(service) -> None:
    (scheme,) = get(service, "/ServiceProviderConfig")["authenticationSchemes"]
    assert scheme["type"] == "oauthbearertoken"  # RFC 7643 §5's canonical value
    assert scheme["primary"] is True
    assert scheme["specUri"].startswith("https://")
    assert scheme["specUri"].endswith("rfc6750")
    assert scheme["name"] and isinstance(scheme["name"], str)
    assert scheme["description"] and isinstance(scheme["description"], str)


def test_what_the_config_says_is_supported_is(service) -> None:
    created = post(service, "/Users", ALICE)
    assert created["meta"]["version"]  # etag supported: every resource has a version
    found = get(service, "/Users", filter='userName eq "alice"')  # filter supported
    assert [u["id"] for u in found["Resources"]] == [created["id"]]


def test_index_paging_is_offered_and_the_default(service) -> None:
    offered = get(service, "/ServiceProviderConfig")["pagination"]
    assert offered == {
        "cursor": False,
        "index": True,
        "defaultPaginationMethod": "index",
        "maxPageSize": 150,
        "defaultPageSize": 40,
    }
    assert get(service, "/Users")["itemsPerPage"] == 40


def test_cursor_paging_is_offered_with_a_cursor_secret() -> None:
    config = ServiceConfig(cursor_secret=Secret("s" * 40), cursor_timeout=900)
    offered = get(ScimService(MemoryBackend(), config), "/ServiceProviderConfig")["pagination"]
    assert offered["cursor"] is True
    assert offered["cursorTimeout"] == 900
    assert offered["index"] is True
    assert offered["defaultPaginationMethod"] == "index"


@pytest.mark.parametrize(
    ("max_results", "default_count", "page_size"),
    [(200, 100, 100), (50, 100, 50), (200, 1, 1), (200, 0, None)],
)
def test_the_default_page_size_is_a_positive_integer_within_the_maximum(
    max_results: int, default_count: int, page_size: int | None
) -> None:
    offered = pagination(max_results, default_count, None)
    assert offered["maxPageSize"] == max_results
    assert offered.get("defaultPageSize") == page_size
    assert "cursorTimeout" not in offered and offered["cursor"] is False


def test_the_config_is_a_fresh_document_each_time() -> None:
    first = service_provider_config(BASE, 100)
    first["patch"]["supported"] = False
    assert service_provider_config(BASE, 100)["patch"] == {"supported": True}


def test_the_config_defaults_to_the_service_defaults() -> None:
    defaults = ServiceConfig()
    offered = service_provider_config(BASE, defaults.max_results)["pagination"]
    assert offered == pagination(defaults.max_results, defaults.default_count, None)


# --------------------------------------------------------------------------- RFC 7643 §6


def test_the_resource_types_are_where_the_resources_are(service) -> None:
    listing = get(service, "/ResourceTypes")
    assert listing["totalResults"] == 2
    by_id = {kind["id"]: kind for kind in listing["Resources"]}
    assert set(by_id) == {"User", "Group"}
    for kind in by_id.values():
        assert kind["schemas"] == [RESOURCE_TYPE_URN]
        assert kind["name"] == kind["id"]
        assert kind["description"] and isinstance(kind["description"], str)
        assert kind["meta"] == {
            "resourceType": "ResourceType",
            "location": f"{BASE}/ResourceTypes/{kind['id']}",
        }
        assert get(service, kind["meta"]["location"].removeprefix(BASE)) == kind
    # RFC 7644 §3.2's endpoints, as written there: a proxy in front may route them by case.
    assert (by_id["User"]["endpoint"], by_id["Group"]["endpoint"]) == ("/Users", "/Groups")
    assert by_id["User"]["schema"] == USER_URN
    assert by_id["Group"]["schema"] == GROUP_URN
    user = post(service, by_id["User"]["endpoint"], ALICE)
    assert user["meta"]["resourceType"] == by_id["User"]["name"]
    assert user["schemas"][0] == by_id["User"]["schema"]
    group = post(service, by_id["Group"]["endpoint"], {"schemas": [GROUP_URN], "displayName": "g"})
    assert group["meta"]["resourceType"] == by_id["Group"]["name"]
    assert group["schemas"][0] == by_id["Group"]["schema"]


def test_each_resource_type_lists_its_extensions_none_required() -> None:
    listed = {kind["id"]: kind["schemaExtensions"] for kind in resource_types(BASE)}
    assert listed == {"User": [{"schema": ENTERPRISE_URN, "required": False}], "Group": []}
    extra = "urn:example:params:scim:schemas:extension:site:2.0:Group"
    extended = DEFAULT_SCHEMAS.with_attributes("Group", extra, (Attribute("site", "string"),))
    listed = {kind["id"]: kind["schemaExtensions"] for kind in resource_types(BASE, extended)}
    assert listed["Group"] == [{"schema": extra, "required": False}]
    assert listed["User"] == [{"schema": ENTERPRISE_URN, "required": False}]


# --------------------------------------------------------------------------- RFC 7643 §7


def test_the_schemas_are_those_of_the_resource_types_each_at_its_location(service) -> None:
    listing = get(service, "/Schemas")
    assert [s["id"] for s in listing["Resources"]] == [USER_URN, ENTERPRISE_URN, GROUP_URN]
    kinds = get(service, "/ResourceTypes")["Resources"]
    named = {k["schema"] for k in kinds} | {
        e["schema"] for k in kinds for e in k["schemaExtensions"]
    }
    assert named == {s["id"] for s in listing["Resources"]}
    for schema in listing["Resources"]:
        assert schema["schemas"] == [SCHEMA_URN]
        assert schema["meta"] == {
            "resourceType": "Schema",
            "location": f"{BASE}/Schemas/{schema['id']}",
        }
        assert get(service, f"/Schemas/{schema['id']}") == schema


def test_the_schemas_follow_the_schema_set() -> None:
    extra = "urn:example:params:scim:schemas:extension:site:2.0:Group"
    extended = DEFAULT_SCHEMAS.with_attributes("Group", extra, (Attribute("site", "string"),))
    rendered = {s["id"]: s for s in schemas(BASE, extended)}
    assert list(rendered) == [USER_URN, ENTERPRISE_URN, GROUP_URN, extra]
    assert [a["name"] for a in rendered[extra]["attributes"]] == ["site"]
    assert rendered[extra]["meta"]["location"] == f"{BASE}/Schemas/{extra}"
