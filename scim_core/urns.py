"""The URNs of RFC 7643 and RFC 7644 the service speaks: schemas and messages, one place."""

from __future__ import annotations

__all__ = [
    "ENTERPRISE_URN",
    "ERROR_URN",
    "GROUP_URN",
    "LIST_RESPONSE_URN",
    "PATCH_OP_URN",
    "RESOURCE_TYPE_URN",
    "SCHEMA_URN",
    "SEARCH_REQUEST_URN",
    "SERVICE_PROVIDER_CONFIG_URN",
    "USER_URN",
]

#: RFC 7643 §4.1, §4.3 and §4.2: the core User, its enterprise extension, the core Group.
USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User"
ENTERPRISE_URN = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
GROUP_URN = "urn:ietf:params:scim:schemas:core:2.0:Group"
#: RFC 7643 §5-§7: discovery resources.
SERVICE_PROVIDER_CONFIG_URN = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
RESOURCE_TYPE_URN = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
SCHEMA_URN = "urn:ietf:params:scim:schemas:core:2.0:Schema"
#: RFC 7644 §3.4.2, §3.5.2, §3.4.3 and §3.12: messages.
LIST_RESPONSE_URN = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
PATCH_OP_URN = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
SEARCH_REQUEST_URN = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"
ERROR_URN = "urn:ietf:params:scim:api:messages:2.0:Error"
