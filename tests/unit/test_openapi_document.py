"""The OpenAPI document of GET /openapi.json, built in-process, as a client reads it: every
path and method the service serves, with its status codes, error bodies, headers, query
parameters, media types and request and response shapes; the attributes a mapping adds; and
the answers of the service itself, which fit what the document says of them."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

pytest.importorskip("apispec")

from scim_core import ScimRequest, ScimResponse, ScimService
from scim_core.backends.memory import MemoryBackend
from scim_core.schemas.attributes import (
    DEFAULT_SCHEMAS,
    GROUP_EXTERNAL_ID,
    Attribute,
    SchemaSet,
)
from scim_core.schemas.openapi import openapi_document
from scim_core.urns import (
    ENTERPRISE_URN,
    ERROR_URN,
    GROUP_URN,
    LIST_RESPONSE_URN,
    PATCH_OP_URN,
    USER_URN,
)

BASE = "https://openapi.test/scim/v2"
SCIM_JSON = "application/scim+json"
REQUEST_TYPES = [SCIM_JSON, "application/json"]
SITE_URN = "urn:example:params:scim:schemas:extension:site:2.0:User"
TEAM_URN = "urn:example:params:scim:schemas:extension:team:2.0:Group"
METHODS = {"get", "put", "post", "delete", "patch", "options", "head", "trace"}
ALWAYS = {"401", "429", "503"}
WRITE = {"400", "404", "409", "412", "413", "415"}

SITE_SCHEMAS = (
    MemoryBackend.schemas.with_attributes(
        "User",
        USER_URN,
        (
            Attribute("badge", "string", mutability="readOnly"),
            Attribute("pin", "string", mutability="writeOnly", returned="never"),
            Attribute("hireDate", "dateTime"),
            Attribute("level", "integer"),
            Attribute("photo", "binary"),
            Attribute("homepage", "reference"),
            Attribute("remote", "boolean"),
            Attribute("tags", "string", multi_valued=True),
            Attribute("shirt", "string", canonical_values=("S", "M", "L")),
            Attribute(
                "addresses",
                "complex",
                multi_valued=True,
                sub_attributes=(
                    Attribute("street", "string"),
                    Attribute("kind", "string", canonical_values=("work", "home")),
                    Attribute("code", "string", returned="never"),
                ),
            ),
        ),
    )
    .with_attributes(
        "User",
        SITE_URN,
        (
            Attribute("seat", "string", mutability="readOnly"),
            Attribute("token", "string", mutability="writeOnly", returned="never"),
            Attribute(
                "desk",
                "complex",
                sub_attributes=(
                    Attribute("floor", "integer"),
                    Attribute("key", "string", returned="never"),
                ),
            ),
        ),
        name="Site",
    )
    .with_attributes("User", ENTERPRISE_URN, (Attribute("costCenter", "string"),))
    .with_attributes("Group", GROUP_URN, (GROUP_EXTERNAL_ID, Attribute("mail", "string")))
    .with_attributes("Group", TEAM_URN, (Attribute("budget", "integer"),), name="Team")
)


def build(
    base_url: str = BASE, version: str = "9.8.7", schemas: SchemaSet = DEFAULT_SCHEMAS
) -> Any:
    """The document built afresh: a cached one (kept by whatever process ran before, a warm
    test worker say) would not show what building it does now. Building takes milliseconds."""
    openapi_document.cache_clear()
    return openapi_document(base_url, version, schemas)


@pytest.fixture
def document() -> dict[str, Any]:
    built: dict[str, Any] = build()
    return built


@pytest.fixture
def mapped() -> dict[str, Any]:
    built: dict[str, Any] = build(schemas=SITE_SCHEMAS)
    return built


def resolve(document: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = document
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def component(document: dict[str, Any], name: str) -> dict[str, Any]:
    shape: dict[str, Any] = document["components"]["schemas"][name]
    return shape


def operations(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (method, path): operation
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    }


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


# --------------------------------------------------------------------------- the document


def test_the_document_names_itself_its_server_and_its_bearer_scheme(document) -> None:
    assert document["openapi"] == "3.0.3"
    assert document["info"] == {
        "title": "scim-ldap",
        "version": "9.8.7",
        "description": "SCIM 2.0 (RFC 7643, RFC 7644) provisioning of users and groups "
        "held in an LDAP directory.",
    }
    assert document["servers"] == [{"url": BASE}]
    assert document["security"] == [{"bearer": []}]
    assert document["components"]["securitySchemes"] == {
        "bearer": {"type": "http", "scheme": "bearer"}
    }
    assert set(document) == {"openapi", "info", "servers", "security", "paths", "components"}


def test_a_service_without_a_version_says_unversioned() -> None:
    assert build(BASE, "")["info"]["version"] == "unversioned"


def test_the_document_is_cached_per_base_url() -> None:
    first = build(BASE + "/cached", "1")
    assert openapi_document(BASE + "/cached", "1", DEFAULT_SCHEMAS) is first
    other = openapi_document(BASE + "/other", "1")
    assert other["servers"] == [{"url": BASE + "/other"}]


def test_every_path_and_method_the_service_serves(document) -> None:
    assert {path: set(item) for path, item in document["paths"].items()} == {
        "/Users": {"get", "post"},
        "/Users/.search": {"post"},
        "/Users/{id}": {"parameters", "get", "patch", "put", "delete"},
        "/Groups": {"get", "post"},
        "/Groups/.search": {"post"},
        "/Groups/{id}": {"parameters", "get", "patch", "put", "delete"},
        "/ResourceTypes": {"get"},
        "/ResourceTypes/{id}": {"parameters", "get"},
        "/Schemas": {"get"},
        "/Schemas/{id}": {"parameters", "get"},
        "/ServiceProviderConfig": {"get"},
        "/openapi.json": {"get"},
    }
    id_parameter = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
    for path, item in document["paths"].items():
        if "{id}" in path:
            assert item["parameters"] == [id_parameter], path


def test_every_operation_says_what_it_does(document) -> None:
    summaries = {f"{m.upper()} {p}": op["summary"] for (m, p), op in operations(document).items()}
    not_offered = "Not offered: group lifecycle belongs to the directory"
    assert summaries == {
        "GET /Users": "List or filter Users",
        "POST /Users": "Create a User",
        "POST /Users/.search": "Search Users with a SearchRequest body",
        "GET /Users/{id}": "One User",
        "PATCH /Users/{id}": "Change a User (RFC 7644 §3.5.2), idempotently",
        "PUT /Users/{id}": "Replace a User's writable attributes",
        "DELETE /Users/{id}": "Delete a User (it leaves every group)",
        "GET /Groups": "List or filter Groups",
        "POST /Groups": "Create a Group",
        "POST /Groups/.search": "Search Groups with a SearchRequest body",
        "GET /Groups/{id}": "One Group",
        "PATCH /Groups/{id}": "Change a Group (RFC 7644 §3.5.2), idempotently",
        "PUT /Groups/{id}": not_offered,
        "DELETE /Groups/{id}": not_offered,
        "GET /ResourceTypes": "ResourceTypes",
        "GET /ResourceTypes/{id}": "ResourceTypes",
        "GET /Schemas": "Schemas",
        "GET /Schemas/{id}": "Schemas",
        "GET /ServiceProviderConfig": "What the service supports",
        "GET /openapi.json": "This document",
    }


def test_every_operation_lists_its_status_codes(document) -> None:
    statuses = {
        f"{m.upper()} {p}": set(op["responses"]) for (m, p), op in operations(document).items()
    }
    write = {"200", *WRITE, *ALWAYS}
    assert statuses == {
        "GET /Users": {"200", "400", *ALWAYS},
        "POST /Users": {"201", "400", "409", "413", "415", *ALWAYS},
        "POST /Users/.search": {"200", "400", "413", "415", *ALWAYS},
        "GET /Users/{id}": {"200", "400", "404", *ALWAYS},
        "PATCH /Users/{id}": write,
        "PUT /Users/{id}": write,
        "DELETE /Users/{id}": {"204", "404", "412", *ALWAYS},
        "GET /Groups": {"200", "400", *ALWAYS},
        "POST /Groups": {"201", "400", "409", "413", "415", *ALWAYS},
        "POST /Groups/.search": {"200", "400", "413", "415", *ALWAYS},
        "GET /Groups/{id}": {"200", "400", "404", *ALWAYS},
        "PATCH /Groups/{id}": write,
        "PUT /Groups/{id}": {"404", "501", *ALWAYS},
        "DELETE /Groups/{id}": {"404", "501", *ALWAYS},
        "GET /ResourceTypes": {"200", *ALWAYS},
        "GET /ResourceTypes/{id}": {"200", "404", *ALWAYS},
        "GET /Schemas": {"200", *ALWAYS},
        "GET /Schemas/{id}": {"200", "404", *ALWAYS},
        "GET /ServiceProviderConfig": {"200", *ALWAYS},
        "GET /openapi.json": {"200", *ALWAYS},
    }
    for operation in operations(document).values():
        assert list(operation["responses"]) == sorted(operation["responses"])


ERROR_TEXTS = {
    "400": "invalidSyntax, invalidValue, invalidFilter, invalidPath, noTarget, mutability, or "
    "on a list: invalidCursor, expiredCursor, invalidCount",
    "401": "No bearer token, or an unknown one",
    "404": "No such resource or endpoint",
    "409": "uniqueness: the userName or group name is taken",
    "412": "If-Match names a version that is no longer current",
    "413": "The body is over the size limit, or a PATCH has too many operations",
    "415": "The body is not application/scim+json or application/json",
    "429": "The token's rate limit is exhausted; see Retry-After",
    "501": "Not offered by design (group PUT and DELETE)",
    "503": "The directory is unreachable; see Retry-After",
}


def test_every_error_is_an_error_body_with_its_headers(document) -> None:
    retry_after = {"Retry-After": {"schema": {"type": "integer"}, "required": True}}
    headers = {
        "401": {"WWW-Authenticate": {"schema": {"type": "string"}, "required": True}},
        "429": retry_after,
        "503": retry_after,
    }
    seen = set()
    for operation in operations(document).values():
        for status, response in operation["responses"].items():
            if not status.startswith(("4", "5")):
                continue
            seen.add(status)
            expected = {
                "description": ERROR_TEXTS[status],
                "content": {SCIM_JSON: {"schema": ref("Error")}},
            }
            if status in headers:
                expected["headers"] = headers[status]
            assert response == expected, status
    assert seen == set(ERROR_TEXTS)


def test_success_answers_carry_their_resource(document) -> None:
    by_operation = operations(document)
    expected = {
        ("get", "/Users"): "UserListResponse",
        ("post", "/Users/.search"): "UserListResponse",
        ("get", "/Users/{id}"): "User",
        ("patch", "/Users/{id}"): "User",
        ("put", "/Users/{id}"): "User",
        ("get", "/Groups"): "GroupListResponse",
        ("post", "/Groups/.search"): "GroupListResponse",
        ("get", "/Groups/{id}"): "Group",
        ("patch", "/Groups/{id}"): "Group",
        ("get", "/ResourceTypes"): "ListResponse",
        ("get", "/Schemas"): "ListResponse",
        ("get", "/ResourceTypes/{id}"): "Discovery",
        ("get", "/Schemas/{id}"): "Discovery",
        ("get", "/ServiceProviderConfig"): "Discovery",
    }
    for key, schema in expected.items():
        assert by_operation[key]["responses"]["200"] == {
            "description": "Success",
            "content": {SCIM_JSON: {"schema": ref(schema)}},
        }, key
    location = {"Location": {"schema": {"type": "string"}, "required": True}}
    for kind in ("User", "Group"):
        assert by_operation[("post", f"/{kind}s")]["responses"]["201"] == {
            "description": "Success",
            "content": {SCIM_JSON: {"schema": ref(kind)}},
            "headers": location,
        }
    assert by_operation[("delete", "/Users/{id}")]["responses"]["204"] == {"description": "Success"}
    assert by_operation[("get", "/openapi.json")]["responses"]["200"] == {
        "description": "OpenAPI 3",
        "content": {"application/json": {}},
    }


QUERY = {
    "filter": ("string", "RFC 7644 §3.4.2.2, in the forms the README lists"),
    "startIndex": ("integer", "1-based index of the first result (below 1 means 1)"),
    "count": ("integer", "Page size, capped at maxResults (below 0 means 0)"),
    "cursor": (
        "string",
        "Cursor paging (RFC 9865): empty on a walk's first page, then the nextCursor of "
        "the page before; not with startIndex",
    ),
    "attributes": ("string", "Comma-separated attributes to return (RFC 7644 §3.4.2.5)"),
    "excludedAttributes": ("string", "Comma-separated attributes to leave out"),
}
IF_MATCH = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "description": "The ETag the change was computed from (RFC 7644 §3.14)",
    "schema": {"type": "string"},
}


def query(*names: str) -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "in": "query",
            "required": False,
            "description": QUERY[name][1],
            "schema": {"type": QUERY[name][0]},
        }
        for name in names
    ]


def test_query_and_header_parameters(document) -> None:
    projection = query("attributes", "excludedAttributes")
    listing = query("filter", "startIndex", "count", "cursor", "attributes", "excludedAttributes")
    expected: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for kind in ("Users", "Groups"):
        expected[("get", f"/{kind}")] = listing
        expected[("get", f"/{kind}/{{id}}")] = projection
        expected[("patch", f"/{kind}/{{id}}")] = [*projection, IF_MATCH]
    expected[("put", "/Users/{id}")] = [IF_MATCH]
    expected[("delete", "/Users/{id}")] = [IF_MATCH]
    found = {
        key: op["parameters"] for key, op in operations(document).items() if "parameters" in op
    }
    assert found == expected


def test_request_bodies_take_both_json_media_types(document) -> None:
    patch = {
        "oneOf": [
            ref("PatchOp"),
            {"type": "array", "minItems": 1, "items": ref("PatchOperation")},
        ]
    }
    expected = {
        ("post", "/Users"): ref("UserRequest"),
        ("put", "/Users/{id}"): ref("UserRequest"),
        ("post", "/Groups"): ref("GroupRequest"),
        ("post", "/Users/.search"): ref("SearchRequest"),
        ("post", "/Groups/.search"): ref("SearchRequest"),
        ("patch", "/Users/{id}"): patch,
        ("patch", "/Groups/{id}"): patch,
    }
    found = {
        key: op["requestBody"] for key, op in operations(document).items() if "requestBody" in op
    }
    assert found == {
        key: {"required": True, "content": {t: {"schema": schema} for t in REQUEST_TYPES}}
        for key, schema in expected.items()
    }


def references(node: Any) -> list[str]:
    """Every local ``$ref`` under ``node``."""
    if isinstance(node, list):
        return [found for value in node for found in references(value)]
    if not isinstance(node, dict):
        return []
    own = node.get("$ref")
    local = [own] if isinstance(own, str) and own.startswith("#/") else []
    return local + [found for value in node.values() for found in references(value)]


def test_the_document_is_well_formed_openapi(document, mapped) -> None:
    """What a validator checks of an OpenAPI 3.0 document, for the parts this one uses."""
    for doc in (document, mapped):
        refs = references(doc)
        for target in refs:
            assert isinstance(resolve(doc, target), dict), target
        assert refs
        assert re.fullmatch(r"3\.0\.\d+", doc["openapi"])
        assert doc["info"]["title"] and doc["info"]["version"]
        schemes = doc["components"]["securitySchemes"]
        for requirement in doc["security"]:
            assert set(requirement) <= set(schemes)
        for path, item in doc["paths"].items():
            assert path.startswith("/")
            templated = set(re.findall(r"{(\w+)}", path))
            declared = {p["name"] for p in item.get("parameters", []) if p["in"] == "path"}
            assert templated == declared, path
            for method, operation in item.items():
                if method == "parameters":
                    continue
                assert method in METHODS
                assert operation["responses"]
                for parameter in operation.get("parameters", []):
                    assert parameter["in"] in ("query", "header")
                    assert set(parameter) >= {"name", "in", "schema"}
                for status, response in operation["responses"].items():
                    assert re.fullmatch(r"[1-5][0-9]{2}", status)
                    assert isinstance(response["description"], str) and response["description"]
        assert json.loads(json.dumps(doc)) == doc  # JSON-ready as it is


# --------------------------------------------------------------------------- shapes


def test_component_names(document) -> None:
    assert set(document["components"]["schemas"]) == {
        "User",
        "Group",
        "UserListResponse",
        "GroupListResponse",
        "ListResponse",
        "Error",
        "Discovery",
        "UserRequest",
        "GroupRequest",
        "PatchOperation",
        "PatchOp",
        "SearchRequest",
        # nested shapes, named after their class
        "NameOut",
        "EmailOut",
        "ManagerOut",
        "EnterpriseOut",
        "MemberOut",
        "Meta",
        "NameIn",
        "Email",
        "Reference",
        "Enterprise",
    }


def test_responses_are_strict_and_never_carry_a_password(document) -> None:
    user = component(document, "User")
    assert user["additionalProperties"] is False
    assert "password" not in user["properties"]
    assert sorted(user["required"]) == ["id", "meta", "schemas"]
    assert user["properties"]["emails"] == {"type": "array", "items": ref("EmailOut")}
    assert user["properties"][ENTERPRISE_URN] == ref("EnterpriseOut")
    group = component(document, "Group")
    assert group["additionalProperties"] is False
    assert group["properties"]["members"] == {"type": "array", "items": ref("MemberOut")}
    for name in ("NameOut", "EmailOut", "Meta", "MemberOut", "ManagerOut", "EnterpriseOut"):
        assert component(document, name)["additionalProperties"] is False, name
    error = component(document, "Error")
    assert sorted(error["required"]) == ["schemas", "status"]
    assert error["properties"]["schemas"]["items"]["enum"] == [ERROR_URN]
    listing = component(document, "UserListResponse")
    assert listing["properties"]["Resources"] == {"type": "array", "items": ref("User")}
    assert "startIndex" not in listing["required"]  # a cursor page has none
    assert listing["properties"]["schemas"]["items"]["enum"] == [LIST_RESPONSE_URN]


def test_requests_name_what_a_client_must_send(document) -> None:
    user = component(document, "UserRequest")
    assert sorted(user["required"]) == ["emails", "name", "userName"]
    assert user["properties"]["password"]["type"] == "string"
    assert user["properties"]["emails"]["type"] == "array"
    assert user["properties"][ENTERPRISE_URN] == ref("Enterprise")
    assert component(document, "GroupRequest")["required"] == ["displayName"]
    patch = component(document, "PatchOp")
    assert patch["properties"]["schemas"]["items"]["enum"] == [PATCH_OP_URN]
    assert component(document, "PatchOperation")["properties"]["op"]["enum"] == [
        "add",
        "remove",
        "replace",
    ]
    search = component(document, "SearchRequest")
    assert set(search["properties"]) == {
        "schemas",
        "filter",
        "startIndex",
        "count",
        "cursor",
        "attributes",
        "excludedAttributes",
    }


def test_the_default_mapping_adds_nothing(document) -> None:
    memory = build(schemas=MemoryBackend.schemas)
    assert memory["components"] == document["components"]


# --------------------------------------------------------------------------- a mapping


def test_a_mapping_adds_its_core_attributes_typed(mapped) -> None:
    for shape in ("User", "UserRequest"):
        properties = component(mapped, shape)["properties"]
        assert properties["badge"] == {"type": "string"}
        assert properties["hireDate"] == {"type": "string", "format": "date-time"}
        assert properties["level"] == {"type": "integer"}
        assert properties["photo"] == {"type": "string", "format": "byte"}
        assert properties["homepage"] == {"type": "string", "format": "uri"}
        assert properties["remote"] == {"type": "boolean"}
        assert properties["tags"] == {"type": "array", "items": {"type": "string"}}
        assert properties["shirt"] == {"type": "string", "description": "One of: S, M, L."}


def test_a_mapped_complex_attribute_is_an_object_of_its_subs(mapped) -> None:
    street = {"type": "string"}
    kind = {"type": "string", "description": "One of: work, home."}
    sent = component(mapped, "UserRequest")["properties"]["addresses"]
    assert sent == {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"street": street, "kind": kind, "code": {"type": "string"}},
            "additionalProperties": False,
        },
    }
    returned = component(mapped, "User")["properties"]["addresses"]
    assert returned == {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"street": street, "kind": kind},
            "additionalProperties": False,
        },
    }


def test_what_is_never_returned_is_not_in_a_response_shape(mapped) -> None:
    user = component(mapped, "User")["properties"]
    request = component(mapped, "UserRequest")["properties"]
    assert "pin" not in user and request["pin"] == {"type": "string"}
    assert "token" not in user[SITE_URN]["properties"]
    assert request[SITE_URN]["properties"]["token"] == {"type": "string"}
    assert "password" not in user


def test_a_mapping_adds_its_extension_as_a_strict_object(mapped) -> None:
    user = component(mapped, "User")["properties"]
    floor = {"floor": {"type": "integer"}}
    assert user[SITE_URN] == {
        "type": "object",
        "properties": {"seat": {"type": "string"}, "desk": strict(floor)},
        "additionalProperties": False,
    }
    request = component(mapped, "UserRequest")["properties"]
    assert request[SITE_URN] == {
        "type": "object",
        "properties": {
            "seat": {"type": "string"},
            "token": {"type": "string"},
            "desk": strict({**floor, "key": {"type": "string"}}),
        },
        "additionalProperties": False,
    }


def strict(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "additionalProperties": False}


def test_what_is_never_returned_is_left_out_at_any_depth() -> None:
    inner = Attribute(
        "inner",
        "complex",
        sub_attributes=(Attribute("a", "string"), Attribute("b", "string", returned="never")),
    )
    outer = Attribute("outer", "complex", sub_attributes=(inner,))
    built = build(schemas=DEFAULT_SCHEMAS.with_attributes("User", USER_URN, (outer,)))
    a, b = {"a": {"type": "string"}}, {"b": {"type": "string"}}
    assert component(built, "User")["properties"]["outer"] == strict({"inner": strict(a)})
    request = component(built, "UserRequest")["properties"]["outer"]
    assert request == strict({"inner": strict({**a, **b})})


def test_a_mapping_adds_to_the_enterprise_extension_in_place(mapped, document) -> None:
    for shape, nested in (("User", "EnterpriseOut"), ("UserRequest", "Enterprise")):
        assert component(mapped, shape)["properties"][ENTERPRISE_URN] == ref(nested)
        properties = component(mapped, nested)["properties"]
        assert properties["costCenter"] == {"type": "string"}
        assert "employeeNumber" in properties
        assert "costCenter" not in component(document, nested)["properties"]


def test_a_mapping_adds_its_group_attributes(mapped) -> None:
    team = {
        "type": "object",
        "properties": {"budget": {"type": "integer"}},
        "additionalProperties": False,
    }
    for shape in ("Group", "GroupRequest"):
        properties = component(mapped, shape)["properties"]
        assert properties["mail"] == {"type": "string"}
        assert properties[TEAM_URN] == team
        assert "badge" not in properties and SITE_URN not in properties
    assert "mail" not in component(mapped, "User")["properties"]
    assert TEAM_URN not in component(mapped, "UserRequest")["properties"]


def test_a_user_only_mapping_leaves_groups_alone(document) -> None:
    schemas = SchemaSet(
        {
            "User": DEFAULT_SCHEMAS.with_attributes(
                "User", USER_URN, (Attribute("room", "string"),)
            ).get("User"),
            "Group": DEFAULT_SCHEMAS.get("Group"),
        }
    )
    built = build(schemas=schemas)
    assert component(built, "User")["properties"]["room"] == {"type": "string"}
    for shape in ("Group", "GroupRequest"):
        assert component(built, shape) == component(document, shape)


# --------------------------------------------------------------------------- the service


def check(document: dict[str, Any], schema: dict[str, Any], value: Any, where: str = "") -> None:
    """``value`` fits ``schema``, for the JSON schema keywords the document uses."""
    if "$ref" in schema:
        check(document, resolve(document, schema["$ref"]), value, where)
        return
    if "oneOf" in schema:
        fits = 0
        for option in schema["oneOf"]:
            try:
                check(document, option, value, where)
            except AssertionError:
                continue
            fits += 1
        assert fits == 1, where
        return
    kind = schema.get("type")
    types = {"object": dict, "array": list, "string": str, "boolean": bool}
    if kind == "integer":
        assert isinstance(value, int) and not isinstance(value, bool), where
        assert value >= schema.get("minimum", value), where
    elif kind is not None:
        assert isinstance(value, types[kind]), f"{where}: {value!r} is not {kind}"
    if "enum" in schema:
        assert value in schema["enum"], where
    if "pattern" in schema:
        assert re.search(schema["pattern"], value), where
    if kind == "array":
        for index, item in enumerate(value):
            check(document, schema.get("items", {}), item, f"{where}[{index}]")
    if kind == "object":
        for name in schema.get("required", []):
            assert name in value, f"{where}: {name} missing"
        properties = schema.get("properties", {})
        for name, item in value.items():
            if name in properties:
                check(document, properties[name], item, f"{where}.{name}")
            else:
                assert schema.get("additionalProperties", True) is not False, f"{where}.{name}"


class Conformance:
    """Sends requests to the service and checks each answer against the document."""

    def __init__(self, document: dict[str, Any], backend: MemoryBackend) -> None:
        self.document = document
        self.service = ScimService(backend)
        self.statuses: set[tuple[str, str, int]] = set()

    def __call__(self, method: str, path: str, body: Any = None, **query: str) -> ScimResponse:
        if_match = query.pop("if_match", None)
        answer = self.service.handle(
            ScimRequest(
                method,
                path,
                query=query,
                body=b"" if body is None else json.dumps(body).encode(),
                content_type=None if body is None else SCIM_JSON,
                if_match=if_match,
                base_url=BASE,
            )
        )
        endpoint, _, rest = path[1:].partition("/")
        template = path if rest in ("", ".search") else f"/{endpoint}/{{id}}"
        operation = self.document["paths"][template][method.lower()]
        documented = operation["responses"].get(str(answer.status))
        assert documented is not None, f"{method} {path} answered {answer.status}"
        self.statuses.add((method, template, answer.status))
        for header, definition in documented.get("headers", {}).items():
            assert not definition["required"] or header in answer.headers, header
        content = documented.get("content")
        if content is None:
            assert answer.body is None, f"{method} {path}"
            return answer
        assert list(content) == [answer.headers["Content-Type"]]
        (shape,) = content.values()
        body_seen = answer.json()
        if "schema" in shape:
            check(self.document, shape["schema"], body_seen, f"{method} {path}")
        return answer


def alice(**extra: Any) -> dict[str, Any]:
    return {
        "schemas": [USER_URN],
        "userName": "alice",
        "name": {"givenName": "Alice", "familyName": "Liddell"},
        "emails": [{"value": "alice@example.org", "type": "work", "primary": True}],
        "title": "Explorer",
        **extra,
    }


def test_the_service_answers_as_the_document_says(document) -> None:
    call = Conformance(document, MemoryBackend())
    created = call("POST", "/Users", alice(password="s3cret-Passw0rd")).json()
    user = f"/Users/{created['id']}"
    assert call("POST", "/Users", alice()).status == 409
    call("GET", "/Users")
    call("GET", "/Users", filter='userName eq "alice"', count="1", startIndex="1")
    call("GET", "/Users", filter="userName eq")
    call("POST", "/Users/.search", {"filter": "title pr", "attributes": ["userName"]})
    call("GET", user, attributes="userName")
    call("GET", "/Users/nobody")
    patched = call(
        "PATCH",
        user,
        {
            "schemas": [PATCH_OP_URN],
            "Operations": [{"op": "replace", "path": "title", "value": "Queen"}],
        },
    )
    assert patched.status == 200
    stale = call(
        "PATCH", user, [{"op": "replace", "path": "title", "value": "Q"}], if_match='W/"0"'
    )
    assert stale.status == 412
    assert call("PUT", user, alice(title="Cook")).status == 200
    call("POST", "/Groups", {"schemas": [GROUP_URN], "displayName": "readers"})
    call(
        "PATCH",
        "/Groups/readers",
        [{"op": "add", "path": "members", "value": [{"value": created["id"]}]}],
    )
    call("GET", "/Groups/readers")
    call("GET", "/Groups", filter='displayName eq "readers"')
    call(
        "POST",
        "/Groups/.search",
        {"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"]},
    )
    assert call("PUT", "/Groups/readers", {"displayName": "x"}).status == 501
    assert call("DELETE", "/Groups/readers").status == 501
    for path in ("/ResourceTypes", "/Schemas", "/ResourceTypes/User", "/Schemas/" + USER_URN):
        call("GET", path)
    call("GET", "/Schemas/urn:nothing")
    call("GET", "/ServiceProviderConfig")
    call("GET", "/openapi.json")
    assert call("DELETE", user).status == 204
    assert call("DELETE", user).status == 404
    assert {status for *_, status in call.statuses} == {200, 201, 204, 400, 404, 409, 412, 501}


def test_a_password_in_a_response_would_break_the_document(document) -> None:
    user = {"schemas": [USER_URN], "id": "1", "meta": {}}
    check(document, ref("User"), user)
    with pytest.raises(AssertionError):
        check(document, ref("User"), {**user, "password": "s3cret"})


class SiteBackend(MemoryBackend):
    """The in-process backend with the mapping above."""

    schemas = SITE_SCHEMAS


def test_the_service_with_a_mapping_answers_as_its_document_says(mapped) -> None:
    call = Conformance(mapped, SiteBackend())
    sent = alice(
        pin="1234",
        level=3,
        tags=["a", "b"],
        remote=True,
        addresses=[{"street": "Main", "kind": "work", "code": "7"}],
        **{SITE_URN: {"token": "t"}, ENTERPRISE_URN: {"costCenter": "C1"}},
    )
    created = call("POST", "/Users", sent).json()
    assert created["level"] == 3 and created[ENTERPRISE_URN] == {"costCenter": "C1"}
    assert "pin" not in created
    call("GET", f"/Users/{created['id']}")
    team = {"schemas": [GROUP_URN, TEAM_URN], "displayName": "team", TEAM_URN: {"budget": 5}}
    call("POST", "/Groups", team)
    call("GET", "/Groups/team")
    assert {status for *_, status in call.statuses} == {200, 201}
