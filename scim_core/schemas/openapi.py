"""The OpenAPI 3 description of the HTTP API, generated from marshmallow schemas with apispec.

This module owns the message schemas the resource schemas of :mod:`scim_core.schemas.resources`
leave out (RFC 7644 §3.4.2 ListResponse, §3.4.3 SearchRequest, §3.5.2 PatchOp, §3.12 Error),
the response shapes the service renders, and :func:`openapi_document`, which assembles them
with every endpoint, status code and header into the document served at ``/openapi.json``.

Request schemas describe the canonical input; the service also accepts the tolerant forms the
README lists (flat aliases, ``"True"``/``"False"`` strings, a bare array of PATCH operations).
Response schemas are strict (``additionalProperties: false``): a response carrying a key the
document does not name, a password say, breaks the schema and fails the schemathesis test.

apispec is imported here only; the service imports this module when the document is asked for.
"""

from __future__ import annotations

import functools
from typing import Any

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from apispec.ext.marshmallow.common import resolve_schema_instance
from marshmallow import EXCLUDE, INCLUDE, RAISE, Schema, fields, validate

from scim_core.schemas.attributes import DEFAULT_SCHEMAS, ENTERPRISE_URN, Attribute, SchemaSet
from scim_core.schemas.resources import (
    EmailSchema,
    GroupSchema,
    UserNameField,
    UserSchema,
    mapped_attributes,
)
from scim_core.urns import ERROR_URN, LIST_RESPONSE_URN, PATCH_OP_URN, SEARCH_REQUEST_URN

__all__ = [
    "ErrorSchema",
    "GroupListResponseSchema",
    "GroupResponseSchema",
    "ListResponseSchema",
    "PatchOpSchema",
    "PatchOperationSchema",
    "SearchRequestSchema",
    "UserListResponseSchema",
    "UserResponseSchema",
    "openapi_document",
]

OPENAPI_VERSION = "3.0.3"
_SCIM_JSON = "application/scim+json"
_REQUEST_TYPES = (_SCIM_JSON, "application/json")
_COMPONENT_REF = "#/components/schemas/"


# --------------------------------------------------------------------------- responses


class _Out(Schema):
    """A response shape: keys the document does not name are a schema violation."""

    class Meta:
        unknown = RAISE


class _Meta(_Out):
    resource_type = fields.String(data_key="resourceType")
    created = fields.String(metadata={"format": "date-time"})
    last_modified = fields.String(data_key="lastModified", metadata={"format": "date-time"})
    version = fields.String()
    location = fields.String()


class _NameOut(_Out):
    formatted = fields.String()
    given_name = fields.String(data_key="givenName")
    family_name = fields.String(data_key="familyName")


class _EmailOut(_Out):
    value = fields.String()
    type = fields.String()
    primary = fields.Boolean()
    display = fields.String()


class _ManagerOut(_Out):
    value = fields.String()
    ref = fields.String(data_key="$ref")
    display_name = fields.String(data_key="displayName")


class _EnterpriseOut(_Out):
    employee_number = fields.String(data_key="employeeNumber")
    manager = fields.Nested(_ManagerOut)


class _MemberOut(_Out):
    value = fields.String()
    display = fields.String()
    type = fields.String()
    ref = fields.String(data_key="$ref")


class UserResponseSchema(_Out):
    """A User as the service renders it (RFC 7643 §4.1); ``password`` never appears."""

    schemas = fields.List(fields.String(), required=True)
    id = fields.String(required=True)
    external_id = fields.String(data_key="externalId")
    user_name = fields.String(data_key="userName")
    name = fields.Nested(_NameOut)
    display_name = fields.String(data_key="displayName")
    title = fields.String()
    emails = fields.List(fields.Nested(_EmailOut))
    active = fields.Boolean()
    enterprise = fields.Nested(_EnterpriseOut, data_key=ENTERPRISE_URN)
    meta = fields.Nested(_Meta, required=True)


class GroupResponseSchema(_Out):
    """A Group as the service renders it (RFC 7643 §4.2)."""

    schemas = fields.List(fields.String(), required=True)
    id = fields.String(required=True)
    external_id = fields.String(data_key="externalId")
    display_name = fields.String(data_key="displayName")
    members = fields.List(fields.Nested(_MemberOut))
    meta = fields.Nested(_Meta, required=True)


class ListResponseSchema(_Out):
    """RFC 7644 §3.4.2: a page of results; discovery listings hold discovery documents. A
    cursor page (RFC 9865) has no ``startIndex``, and ``nextCursor`` unless it is the last."""

    schemas = fields.List(fields.String(validate=validate.Equal(LIST_RESPONSE_URN)), required=True)
    total_results = fields.Integer(
        data_key="totalResults", required=True, validate=validate.Range(min=0)
    )
    start_index = fields.Integer(data_key="startIndex", validate=validate.Range(1))
    items_per_page = fields.Integer(
        data_key="itemsPerPage", required=True, validate=validate.Range(min=0)
    )
    next_cursor = fields.String(data_key="nextCursor")
    resources = fields.List(fields.Dict(), data_key="Resources", required=True)


class UserListResponseSchema(ListResponseSchema):
    """A page of Users."""

    resources = fields.List(fields.Nested(UserResponseSchema), data_key="Resources", required=True)


class GroupListResponseSchema(ListResponseSchema):
    """A page of Groups."""

    resources = fields.List(fields.Nested(GroupResponseSchema), data_key="Resources", required=True)


class ErrorSchema(_Out):
    """RFC 7644 §3.12: ``status`` is the HTTP status as a string; never a traceback."""

    schemas = fields.List(fields.String(validate=validate.Equal(ERROR_URN)), required=True)
    status = fields.String(required=True, validate=validate.Regexp(r"^[1-5][0-9]{2}$"))
    scim_type = fields.String(
        data_key="scimType",
        validate=validate.OneOf(
            [
                "invalidFilter",
                "tooMany",
                "uniqueness",
                "mutability",
                "invalidSyntax",
                "invalidPath",
                "noTarget",
                "invalidValue",
                "invalidVers",
                "sensitive",
                "invalidCursor",
                "expiredCursor",
                "invalidCount",
            ]
        ),
    )
    detail = fields.String()


class _Discovery(Schema):
    """Discovery documents (RFC 7643 §5-§7): their full shape is the RFC's."""

    class Meta:
        unknown = INCLUDE

    schemas = fields.List(fields.String(), required=True)


# --------------------------------------------------------------------------- requests


class _NameIn(Schema):
    class Meta:
        unknown = EXCLUDE

    given_name = fields.String(data_key="givenName", required=True, validate=validate.Length(1))
    family_name = fields.String(data_key="familyName", required=True, validate=validate.Length(1))
    formatted = fields.String(validate=validate.Length(1, 1024))


class UserRequestSchema(UserSchema):
    """A POST or PUT body: the required attributes of the specification."""

    schemas = fields.List(fields.String())
    user_name = UserNameField(
        data_key="userName", required=True, validate=validate.Length(min=1, max=256)
    )
    name = fields.Nested(_NameIn, required=True)
    emails = fields.List(
        fields.Nested(EmailSchema),
        required=True,
        validate=validate.Length(min=1, max=100),
    )


class GroupRequestSchema(GroupSchema):
    """A POST /Groups body: ``displayName`` (the cn, and so the id) and optional members."""

    schemas = fields.List(fields.String())
    display_name = fields.String(
        data_key="displayName", required=True, validate=validate.Length(min=1, max=256)
    )


class PatchOperationSchema(Schema):
    """One RFC 7644 §3.5.2 operation; ``op`` is accepted in any case."""

    op = fields.String(required=True, validate=validate.OneOf(["add", "remove", "replace"]))
    path = fields.String(validate=validate.Length(min=1, max=4096))
    value = fields.Raw(allow_none=True)


class PatchOpSchema(Schema):
    """RFC 7644 §3.5.2: the PatchOp envelope; a bare array of operations is accepted too."""

    schemas = fields.List(fields.String(validate=validate.Equal(PATCH_OP_URN)), required=True)
    operations = fields.List(
        fields.Nested(PatchOperationSchema),
        data_key="Operations",
        required=True,
        validate=validate.Length(min=1, max=1000),
    )


class SearchRequestSchema(Schema):
    """RFC 7644 §3.4.3: a query sent as a POST body to ``/.search``."""

    schemas = fields.List(fields.String(validate=validate.Equal(SEARCH_REQUEST_URN)))
    filter = fields.String()
    start_index = fields.Integer(data_key="startIndex")
    count = fields.Integer()
    cursor = fields.String()
    attributes = fields.List(fields.String())
    excluded_attributes = fields.List(fields.String(), data_key="excludedAttributes")


# --------------------------------------------------------------------------- document

_COMPONENTS: tuple[tuple[str, type[Schema]], ...] = (
    ("User", UserResponseSchema),
    ("Group", GroupResponseSchema),
    ("UserListResponse", UserListResponseSchema),
    ("GroupListResponse", GroupListResponseSchema),
    ("ListResponse", ListResponseSchema),
    ("Error", ErrorSchema),
    ("Discovery", _Discovery),
    ("UserRequest", UserRequestSchema),
    ("GroupRequest", GroupRequestSchema),
    ("PatchOperation", PatchOperationSchema),  # before PatchOp, which nests it
    ("PatchOp", PatchOpSchema),
    ("SearchRequest", SearchRequestSchema),
)

_ERRORS: dict[int, str] = {
    400: (
        "invalidSyntax, invalidValue, invalidFilter, invalidPath, noTarget, mutability, or "
        "on a list: invalidCursor, expiredCursor, invalidCount"
    ),
    401: "No bearer token, or an unknown one",
    404: "No such resource or endpoint",
    409: "uniqueness: the userName or group name is taken",
    412: "If-Match names a version that is no longer current",
    413: "The body is over the size limit, or a PATCH has too many operations",
    415: "The body is not application/scim+json or application/json",
    429: "The token's rate limit is exhausted; see Retry-After",
    501: "Not offered by design (group PUT and DELETE)",
    503: "The directory is unreachable; see Retry-After",
}
_RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer"}, "required": True}}
_ERROR_HEADERS: dict[int, dict[str, Any]] = {
    401: {"WWW-Authenticate": {"schema": {"type": "string"}, "required": True}},
    429: _RETRY_AFTER,
    503: _RETRY_AFTER,
}
_ALWAYS = (401, 429, 503)
_WITH_BODY = (400, 413, 415)


def _content(schema: Any, types: tuple[str, ...] = (_SCIM_JSON,)) -> dict[str, Any]:
    return {media_type: {"schema": schema} for media_type in types}


def _errors(*statuses: int) -> dict[str, Any]:
    """Error responses, each an RFC 7644 §3.12 body, plus those any request may get."""
    responses: dict[str, Any] = {}
    for status in sorted({*statuses, *_ALWAYS}):
        response: dict[str, Any] = {"description": _ERRORS[status], "content": _content("Error")}
        if status in _ERROR_HEADERS:
            response["headers"] = _ERROR_HEADERS[status]
        responses[str(status)] = response
    return responses


def _responses(ok: int, schema: str | None, *errors: int) -> dict[str, Any]:
    """``ok`` with ``schema`` (none for 204), a ``Location`` with 201, and the errors."""
    success: dict[str, Any] = {"description": "Success"}
    if schema is not None:
        success["content"] = _content(schema)
    if ok == 201:
        success["headers"] = {"Location": {"schema": {"type": "string"}, "required": True}}
    return {str(ok): success, **_errors(*errors)}


def _query(*names: str) -> list[dict[str, Any]]:
    described = {
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
    return [
        {
            "name": name,
            "in": "query",
            "required": False,
            "description": described[name][1],
            "schema": {"type": described[name][0]},
        }
        for name in names
    ]


_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
_IF_MATCH = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "description": "The ETag the change was computed from (RFC 7644 §3.14)",
    "schema": {"type": "string"},
}
_PROJECTION = ("attributes", "excludedAttributes")
_LIST = ("filter", "startIndex", "count", "cursor", *_PROJECTION)
_PATCH_BODY = {
    "oneOf": [
        {"$ref": "#/components/schemas/PatchOp"},
        {"type": "array", "minItems": 1, "items": {"$ref": "#/components/schemas/PatchOperation"}},
    ]
}


def _body(schema: Any) -> dict[str, Any]:
    return {"required": True, "content": _content(schema, _REQUEST_TYPES)}


def _paths() -> dict[str, dict[str, Any]]:
    """Every endpoint the service serves, with what it answers."""
    paths: dict[str, dict[str, Any]] = {}
    for endpoint, kind in (("Users", "User"), ("Groups", "Group")):
        listing = f"{kind}ListResponse"
        paths[f"/{endpoint}"] = {
            "get": {
                "summary": f"List or filter {endpoint}",
                "parameters": _query(*_LIST),
                "responses": _responses(200, listing, 400),
            },
            "post": {
                "summary": f"Create a {kind}",
                "requestBody": _body(f"{kind}Request"),
                "responses": _responses(201, kind, 409, *_WITH_BODY),
            },
        }
        paths[f"/{endpoint}/.search"] = {
            "post": {
                "summary": f"Search {endpoint} with a SearchRequest body",
                "requestBody": _body("SearchRequest"),
                "responses": _responses(200, listing, *_WITH_BODY),
            }
        }
        write = (404, 412, *_WITH_BODY)
        one: dict[str, Any] = {
            "parameters": [_ID],
            "get": {
                "summary": f"One {kind}",
                "parameters": _query(*_PROJECTION),
                "responses": _responses(200, kind, 400, 404),
            },
            "patch": {
                "summary": f"Change a {kind} (RFC 7644 §3.5.2), idempotently",
                "parameters": [*_query(*_PROJECTION), _IF_MATCH],
                "requestBody": _body(_PATCH_BODY),
                "responses": _responses(200, kind, 409, *write),
            },
        }
        if kind == "User":
            one["put"] = {
                "summary": "Replace a User's writable attributes",
                "parameters": [_IF_MATCH],
                "requestBody": _body("UserRequest"),
                "responses": _responses(200, kind, 409, *write),
            }
            one["delete"] = {
                "summary": "Delete a User (it leaves every group)",
                "parameters": [_IF_MATCH],
                "responses": _responses(204, None, 404, 412),
            }
        else:
            for method in ("put", "delete"):
                one[method] = {
                    "summary": "Not offered: group lifecycle belongs to the directory",
                    "responses": _errors(404, 501),  # 404: an id no URL can route
                }
        paths[f"/{endpoint}/{{id}}"] = one
    for endpoint in ("ResourceTypes", "Schemas"):
        paths[f"/{endpoint}"] = {
            "get": {"summary": endpoint, "responses": _responses(200, "ListResponse")}
        }
        paths[f"/{endpoint}/{{id}}"] = {
            "parameters": [_ID],
            "get": {"summary": endpoint, "responses": _responses(200, "Discovery", 404)},
        }
    paths["/ServiceProviderConfig"] = {
        "get": {"summary": "What the service supports", "responses": _responses(200, "Discovery")}
    }
    paths["/openapi.json"] = {
        "get": {
            "summary": "This document",
            "responses": {
                "200": {"description": "OpenAPI 3", "content": {"application/json": {}}},
                **_errors(),
            },
        }
    }
    return paths


def _schema_name(schema: type[Schema] | Schema | str) -> str:
    """Component names for nested schemas: the class name without its leading ``_``."""
    return type(resolve_schema_instance(schema)).__name__.removeprefix("_")


_JSON_TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "reference": {"type": "string", "format": "uri"},
    "boolean": {"type": "boolean"},
    "integer": {"type": "integer"},
    "dateTime": {"type": "string", "format": "date-time"},
    "binary": {"type": "string", "format": "byte"},
}


def _json_schema(attribute: Attribute, response: bool) -> dict[str, Any]:
    """An attribute definition as a JSON schema (a complex one as an object of its subs); in a
    ``response`` shape without the sub-attributes never returned."""
    if attribute.type == "complex":
        subs = [s for s in attribute.sub_attributes if not (response and s.returned == "never")]
        shape: dict[str, Any] = {
            "type": "object",
            "properties": {s.name: _json_schema(s, response) for s in subs},
            "additionalProperties": False,
        }
    else:
        shape = dict(_JSON_TYPES[attribute.type])
    if attribute.canonical_values:
        shape["description"] = "One of: " + ", ".join(attribute.canonical_values) + "."
    return {"type": "array", "items": shape} if attribute.multi_valued else shape


def _add_mapped(document: dict[str, Any], schemas: SchemaSet) -> None:
    """The User and Group request and response shapes with the attributes a backend's
    mapping adds; an attribute never returned (a write-only one) is left out of the response
    shape, as ``password`` is, so that a response carrying it breaks the schema."""
    components = document["components"]["schemas"]
    mapped = [
        (kind, urn, attribute)
        for kind in ("User", "Group")
        for urn, attribute in mapped_attributes(schemas, kind)
    ]
    for kind, urn, attribute in mapped:
        for component, response in ((kind, True), (f"{kind}Request", False)):
            if response and attribute.returned == "never":
                continue
            properties = components[component]["properties"]
            if urn is None:
                properties[attribute.name] = _json_schema(attribute, response)
                continue
            extension = properties.setdefault(
                urn, {"type": "object", "properties": {}, "additionalProperties": False}
            )
            if "$ref" in extension:  # the enterprise extension: a named component
                extension = components[extension["$ref"].removeprefix(_COMPONENT_REF)]
            extension["properties"][attribute.name] = _json_schema(attribute, response)


@functools.lru_cache(maxsize=8)
def openapi_document(
    base_url: str, version: str = "", schemas: SchemaSet = DEFAULT_SCHEMAS
) -> dict[str, Any]:
    """The OpenAPI 3 document of the API rooted at ``base_url`` (``.../scim/v2``).

    Every path requires a bearer token, this document's own included.

    :param base_url: the absolute URL of the SCIM root, the document's only server.
    :param version: the service's version, shown as ``info.version``.
    :param schemas: what the backend stores (its mapping may add User attributes).
    :returns: a JSON-ready dictionary; cached per base URL, so callers must not change it.
    """
    spec = APISpec(
        title="scim-ldap",
        version=version or "unversioned",
        openapi_version=OPENAPI_VERSION,
        plugins=[MarshmallowPlugin(schema_name_resolver=_schema_name)],
        info={
            "description": "SCIM 2.0 (RFC 7643, RFC 7644) provisioning of users and groups "
            "held in an LDAP directory."
        },
        servers=[{"url": base_url}],
        security=[{"bearer": []}],
    )
    spec.components.security_scheme("bearer", {"type": "http", "scheme": "bearer"})
    for name, schema in _COMPONENTS:
        spec.components.schema(name, schema=schema)
    for path, operations in _paths().items():
        parameters = operations.pop("parameters", None)
        spec.path(path=path, operations=operations, parameters=parameters)
    document: dict[str, Any] = spec.to_dict()
    if schemas is not DEFAULT_SCHEMAS:
        _add_mapped(document, schemas)
    return document
