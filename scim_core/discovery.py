"""The discovery documents (RFC 7644 §4, RFC 7643 §5-§7), true to what the service implements."""

from __future__ import annotations

from typing import Any

from scim_core.schemas.attributes import DEFAULT_SCHEMAS, SchemaSet, to_schema_json
from scim_core.schemas.resources import GROUP_URN, USER_URN
from scim_core.urns import RESOURCE_TYPE_URN, SERVICE_PROVIDER_CONFIG_URN

__all__ = ["pagination", "resource_types", "schemas", "service_provider_config"]


def pagination(max_results: int, default_count: int, cursor_timeout: int | None) -> dict[str, Any]:
    """RFC 9865 §4: the paging methods offered. Index paging always is, and stays the default
    (clients that send neither ``startIndex`` nor ``cursor`` get what they always got);
    cursor paging is where ``cursor_timeout`` is given (``None``: not offered)."""
    block: dict[str, Any] = {
        "cursor": cursor_timeout is not None,
        "index": True,
        "defaultPaginationMethod": "index",
        "maxPageSize": max_results,
    }
    if default_count > 0:  # the attribute is a positive integer
        block["defaultPageSize"] = min(default_count, max_results)
    if cursor_timeout is not None:
        block["cursorTimeout"] = cursor_timeout
    return block


def service_provider_config(
    base_url: str,
    max_results: int,
    *,
    default_count: int = 100,
    cursor_timeout: int | None = None,
) -> dict[str, Any]:
    """RFC 7643 §5: what the service supports; ``patch`` and ``etag`` are, bulk and sort are
    not; ``pagination`` (RFC 9865) says whether cursors are (``cursor_timeout``)."""
    return {
        "schemas": [SERVICE_PROVIDER_CONFIG_URN],
        "documentationUri": "https://datatracker.ietf.org/doc/html/rfc7644",
        "patch": {"supported": True},
        "bulk": {"supported": False, "maxOperations": 0, "maxPayloadSize": 0},
        "filter": {"supported": True, "maxResults": max_results},
        "changePassword": {"supported": True},
        "sort": {"supported": False},
        "etag": {"supported": True},
        "pagination": pagination(max_results, default_count, cursor_timeout),
        "authenticationSchemes": [
            {
                "type": "oauthbearertoken",
                # Prose for people (any text serves): not mutated.
                "name": "Bearer token",  # pragma: no mutate
                "description": (
                    "A bearer token in the Authorization header (RFC 6750)."  # pragma: no mutate
                ),
                "specUri": "https://www.rfc-editor.org/rfc/rfc6750",
                "primary": True,
            }
        ],
        "meta": {
            "resourceType": "ServiceProviderConfig",
            "location": f"{base_url}/ServiceProviderConfig",
        },
    }


def resource_types(base_url: str, schema_set: SchemaSet = DEFAULT_SCHEMAS) -> list[dict[str, Any]]:
    """RFC 7643 §6: the User and Group resource types, with the extensions of ``schema_set``."""
    extensions = {
        kind: [{"schema": schema.id, "required": False} for schema in schema_set.get(kind)[1:]]
        for kind in ("User", "Group")
    }
    return [
        {
            "schemas": [RESOURCE_TYPE_URN],
            "id": "User",
            "name": "User",
            "endpoint": "/Users",
            "description": "User accounts in the directory",  # pragma: no mutate (prose)
            "schema": USER_URN,
            "schemaExtensions": extensions["User"],
            "meta": {"resourceType": "ResourceType", "location": f"{base_url}/ResourceTypes/User"},
        },
        {
            "schemas": [RESOURCE_TYPE_URN],
            "id": "Group",
            "name": "Group",
            "endpoint": "/Groups",
            # Prose for people (any text serves): not mutated.
            "description": (
                "Groups in the directory (read, create and membership changes)"  # pragma: no mutate
            ),
            "schema": GROUP_URN,
            "schemaExtensions": extensions["Group"],
            "meta": {
                "resourceType": "ResourceType",
                "location": f"{base_url}/ResourceTypes/Group",
            },
        },
    ]


def schemas(base_url: str, schema_set: SchemaSet = DEFAULT_SCHEMAS) -> list[dict[str, Any]]:
    """RFC 7643 §7: only the attributes the service stores and returns faithfully (those of
    ``schema_set``, which follows the backend's mapping)."""
    rendered = []
    for schema in (*schema_set.get("User"), *schema_set.get("Group")):
        document = to_schema_json(schema)
        document["meta"]["location"] = f"{base_url}/Schemas/{document['id']}"
        rendered.append(document)
    return rendered
