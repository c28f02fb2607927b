"""The SCIM use cases: a :class:`ScimRequest` in, a :class:`ScimResponse` out (RFC 7644 §3).

Routing is a table from (method, endpoint) to a handler; handlers parse, consult the
:class:`~scim_core.backend.Backend`, and render canonical RFC 7643 JSON. Nothing here knows
HTTP frameworks or LDAP.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote

from scim_core import discovery
from scim_core.backend import Backend, Query, Resource
from scim_core.config import ServiceConfig
from scim_core.cursor import CursorBinding, CursorCodec
from scim_core.errors import (
    InvalidCursor,
    InvalidFilter,
    InvalidSyntax,
    InvalidValue,
    MethodNotAllowed,
    Mutability,
    NotFound,
    NotImplementedByDesign,
    PayloadTooLarge,
    PreconditionFailed,
    ScimError,
    UnsupportedMediaType,
    VersionConflict,
)
from scim_core.filter import (
    And,
    Compare,
    Filter,
    FilterPolicy,
    Not,
    Or,
    ValueFilter,
    parse_filter,
)
from scim_core.group_patch import MembershipPlan, group_value
from scim_core.members import STREAMED_MEMBERS, MemberList, StreamedGroup, member_template
from scim_core.messages import SCIM_MEDIA_TYPE, ScimRequest, ScimResponse
from scim_core.paging import Window, parse_window
from scim_core.patch import PatchOperation, apply_patch, checked_operations
from scim_core.projection import Projection, parse_projection, without_unreturned
from scim_core.schemas.attributes import DEFAULT_SCHEMAS, Attribute, SchemaSet
from scim_core.schemas.resources import (
    GROUP_URN,
    USER_URN,
    group_name_problem,
    mapped_attributes,
    validate_group,
    validate_user,
)
from scim_core.secret import Secret
from scim_core.urns import LIST_RESPONSE_URN, PATCH_OP_URN, SEARCH_REQUEST_URN

__all__ = [
    "DRY_RUN_HEADER",
    "LIST_RESPONSE_URN",
    "PATCH_OP_URN",
    "SEARCH_REQUEST_URN",
    "ScimService",
]

#: Marks the answer to a write the backend planned but did not make (a dry run).
DRY_RUN_HEADER = "X-Dry-Run"


_ACCEPTED_MEDIA_TYPES = frozenset({SCIM_MEDIA_TYPE, "application/json"})
_MAX_JSON_DEPTH = 32
#: RFC 4511 maxInt: the largest offset a VLV request (and most directories) can carry.
_MAX_START_INDEX = 2**31 - 1
_UPDATE_ATTEMPTS = 3

audit_log = logging.getLogger("scim.audit")
log = logging.getLogger("scim.service")

Handler = Callable[["ScimService", ScimRequest, str], ScimResponse]


def _check_document(document: Any) -> None:
    """Refuse nesting deeper than :data:`_MAX_JSON_DEPTH`, and strings no directory value may
    hold: a NUL, or an unpaired UTF-16 surrogate.

    JSON can spell both (``\\u0000``, ``\\ud800``); LDAP strings are UTF-8 text in which a NUL
    would truncate the value for C clients and a lone surrogate cannot be encoded at all.
    """
    pending = [(document, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, str):
            if "\x00" in item:
                raise InvalidValue("The request body holds a NUL character (\\u0000).")
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidSyntax("The request body holds an unpaired surrogate.") from None
            continue
        if not isinstance(item, dict | list):
            continue
        if depth >= _MAX_JSON_DEPTH:
            raise InvalidSyntax(f"The JSON body is nested deeper than {_MAX_JSON_DEPTH} levels.")
        if isinstance(item, dict):
            pending.extend((key, depth) for key in item)
            pending.extend((value, depth + 1) for value in item.values())
        else:
            pending.extend((value, depth + 1) for value in item)


@dataclass(frozen=True)
class _Route:
    handlers: Mapping[str, Handler]
    by_design_unsupported: frozenset[str] = frozenset()


@dataclass
class ScimService:
    """The framework-free SCIM service over one backend.

    :param backend: where users and groups live.
    :param config: bounds and policies; defaults are the service's documented ones.
    """

    backend: Backend
    config: ServiceConfig = field(default_factory=ServiceConfig)

    # ------------------------------------------------------------------ dispatch

    def handle(self, request: ScimRequest) -> ScimResponse:
        """Answer one request; every failure becomes an RFC 7644 §3.12 error response.

        A backend that plans its writes rather than making them (its ``dry_run`` is true)
        gets every answer to a write marked ``X-Dry-Run: true``.
        """
        scope = getattr(self.backend, "plan_scope", None) if self._dry_run else None
        try:
            with scope() if scope is not None else nullcontext():
                response = self._dispatch(request)
        except ScimError as error:
            self._audit_failure(request, error.status, error.scim_type, partial=error.partial)
            response = error_response(error)
        except Exception:
            self._audit_failure(request, 500, None)
            raise
        if (
            self._dry_run
            and request.method.upper() in _WRITE_ACTIONS
            and not request.path.endswith("/.search")
        ):
            response = replace(response, headers={**response.headers, DRY_RUN_HEADER: "true"})
        return response

    @property
    def schemas(self) -> SchemaSet:
        """What the service advertises and understands: the backend's (``schemas``, from its
        mapping) where it has one, else the defaults."""
        found = getattr(self.backend, "schemas", None)
        return found if isinstance(found, SchemaSet) else DEFAULT_SCHEMAS

    @functools.cached_property
    def _filter_policy(self) -> FilterPolicy:
        """The configured policy, plus the ``eq`` forms the backend's mapping allows
        (``filter_forms``: (resource type, attribute, operator) each)."""
        policy = self.config.filter_policy
        extra = frozenset(getattr(self.backend, "filter_forms", ()))
        return replace(policy, forms=policy.forms | extra) if extra else policy

    @functools.cached_property
    def _cursors(self) -> CursorCodec | None:
        """The cursor codec, where cursor-based paging is offered: a secret is configured and
        the backend pages by position (``keyset_paging``)."""
        secret = self.config.cursor_secret
        if secret is None or not getattr(self.backend, "keyset_paging", False):
            return None
        return CursorCodec(secret, self.config.cursor_timeout)

    @functools.cached_property
    def _group_extensions(self) -> dict[str, tuple[str, Attribute]]:
        """``urn:...:name`` in lower case -> (as its schema spells it, its definition), for
        each attribute of a Group extension the backend keeps (a PATCH writes them through
        ``update_group``)."""
        return {
            f"{schema.id}:{attribute.name}".lower(): (f"{schema.id}:{attribute.name}", attribute)
            for schema in self.schemas.get("Group")[1:]
            for attribute in schema.attributes
        }

    @functools.cached_property
    def _guarded_on_replace(self) -> tuple[tuple[str | None, str, str], ...]:
        """(extension URN or None, name, mutability) of each User attribute a backend's
        mapping adds that a PUT must not simply overwrite (RFC 7644 §3.5.1)."""
        return tuple(
            (urn, attribute.name, attribute.mutability)
            for urn, attribute in mapped_attributes(self.schemas, "User")
            if attribute.mutability in ("readOnly", "writeOnly", "immutable")
        )

    def _kept_on_replace(self, current: Resource, desired: Resource) -> Resource:
        """``desired`` (a PUT's resource) with what RFC 7644 §3.5.1 keeps: a readOnly value
        as the service holds it (``desired`` has none: loading the body drops them), a
        writeOnly or immutable one the client left out as it was (a client cannot read the
        one, and must not clear the other); an immutable one the client sends must equal the
        value held.

        :raises Mutability: an immutable attribute sent with another value than it holds.
        """
        replaced = dict(desired)
        for urn, name, mutability in self._guarded_on_replace:
            held = (current if urn is None else current.get(urn) or {}).get(name)
            holder = replaced if urn is None else dict(replaced.get(urn) or {})
            sent = holder.get(name)
            changed = sent is not None and sent != held and held not in (None, "", [])
            if mutability == "immutable" and changed:
                raise Mutability(f"The attribute '{name}' is immutable.")
            if sent is None and held is not None:
                holder[name] = held
            if urn is not None and holder:
                replaced[urn] = holder
        return replaced

    @functools.cached_property
    def _user_references(self) -> dict[str, tuple[tuple[str, str], ...]]:
        """resource type -> (extension URN, attribute) of each single reference to a User
        (the enterprise manager, a site's), whose ``$ref`` the service derives."""
        found: dict[str, tuple[tuple[str, str], ...]] = {}
        for resource_type in ("User", "Group"):
            found[resource_type] = tuple(
                (schema.id, attribute.name)
                for schema in self.schemas.get(resource_type)[1:]
                for attribute in schema.attributes
                if attribute.type == "complex"
                and not attribute.multi_valued
                and (ref := attribute.sub("$ref")) is not None
                and "User" in ref.reference_types
            )
        return found

    @property
    def _dry_run(self) -> bool:
        return bool(getattr(self.backend, "dry_run", False))

    def refuse(self, request: ScimRequest, error: ScimError) -> ScimResponse:
        """Answer a request its adapter refused before :meth:`handle` (a missing or wrong
        token, a rate limit): the error response, audited like any refused change."""
        self._audit_failure(request, error.status, error.scim_type)
        return error_response(error)

    def _dispatch(self, request: ScimRequest) -> ScimResponse:
        # The id is all that follows the endpoint: a group's id (its cn) may hold a "/".
        # Only the leading "/" goes: a trailing one is part of the id, so that an id always
        # reaches the entry its own Location names, never another one.
        endpoint, _, ident = request.path.lstrip("/").partition("/")
        if not endpoint:
            raise NotFound("No SCIM endpoint at this path.")
        route_key = (endpoint.lower(), bool(ident) and ident != ".search")
        if ident == ".search":
            route_key = (endpoint.lower() + "/.search", False)
        route = _ROUTES.get(route_key)
        if route is None:
            if endpoint == ".search":
                raise NotImplementedByDesign(
                    "POST /.search across resource types is not supported; "
                    "use /Users/.search or /Groups/.search."
                )
            if endpoint.lower() == "bulk" and not ident:
                # RFC 7644 §3.7 names the endpoint; a client that tries it without reading
                # bulk.supported learns why it fails, not that nothing is there.
                raise NotImplementedByDesign(
                    "Bulk operations are not supported (bulk.supported is false in "
                    "/ServiceProviderConfig); send each operation as its own request."
                )
            raise NotFound("No SCIM endpoint at this path.")
        handler = route.handlers.get(request.method.upper())
        if handler is None:
            if request.method.upper() in route.by_design_unsupported:
                raise NotImplementedByDesign(_GROUP_WRITES_DETAIL)
            allowed = ", ".join(sorted(route.handlers))
            error = MethodNotAllowed(f"{request.method} is not allowed here; use {allowed}.")
            error.headers["Allow"] = allowed
            raise error
        if route_key == ("groups", True) and group_name_problem(ident):
            raise NotFound("No group has this id.")  # no group can be named so (see create)
        return handler(self, request, ident)

    # ------------------------------------------------------------------ request parsing

    def _json_body(self, request: ScimRequest) -> Any:
        if len(request.body) > self.config.max_body_bytes:
            raise PayloadTooLarge(
                f"The request body is over the limit of {self.config.max_body_bytes} bytes."
            )
        media_type = (request.content_type or "").split(";", 1)[0].strip().lower()
        if media_type and media_type not in _ACCEPTED_MEDIA_TYPES:
            raise UnsupportedMediaType(
                "Send the body as application/scim+json or application/json."
            )
        if not request.body.strip():
            raise InvalidSyntax("The request needs a JSON body.")
        try:
            document = json.loads(request.body.decode("utf-8"))
        except RecursionError:  # the parser's own guard, far deeper than ours
            raise InvalidSyntax(
                f"The JSON body is nested deeper than {_MAX_JSON_DEPTH} levels."
            ) from None
        except UnicodeDecodeError:
            raise InvalidSyntax("The request body is not valid UTF-8.") from None
        except ValueError as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "not JSON"
            raise InvalidSyntax(f"The request body is not valid JSON: {reason}.") from None
        _check_document(document)
        return document

    def _object_body(self, request: ScimRequest) -> dict[str, Any]:
        body = self._json_body(request)
        if not isinstance(body, dict):
            raise InvalidSyntax("The request body must be a JSON object.")
        return body

    def _operations(self, request: ScimRequest) -> list[PatchOperation]:
        """PATCH operations from the RFC 7644 §3.5.2 envelope or a bare array (the spec's form),
        checked before anything is read (users and groups alike)."""
        body = self._json_body(request)
        if isinstance(body, dict):
            operations = next((v for k, v in body.items() if k.lower() == "operations"), None)
        else:
            operations = body
        if not isinstance(operations, list) or not operations:
            raise InvalidSyntax("PATCH needs a non-empty list of Operations.")
        return checked_operations(operations)

    def _query(
        self,
        params: Mapping[str, str],
        resource_type: str,
        core_urn: str,
    ) -> tuple[Query, Projection, Window]:
        window = parse_window(
            params,
            default_count=self.config.default_count,
            max_results=self.config.max_results,
        )
        projection = parse_projection(params, core_urn)
        parsed: Filter | None = None
        text = params.get("filter")
        if text is not None and text.strip():
            parsed = parse_filter(text, max_length=self.config.max_filter_length)
            self._filter_policy.check(parsed, resource_type)
            parsed = self._check_names(parsed, resource_type)
        query = Query(
            filter=parsed,
            start_index=min(window.start_index, _MAX_START_INDEX),
            count=window.count,
            # What to read is a hint to the backend: the projection applies to the answer anyway.
            attributes=projection.top_level(),  # pragma: no mutate
            keyset=window.cursor is not None,
        )
        return query, projection, window

    def _check_names(self, node: Filter, resource_type: str) -> Filter:
        """Refuse a group name no group can have as it is refused at create (so folding or
        lookalike characters never find an entry)."""
        if isinstance(node, Compare):
            if (
                resource_type == "Group"
                and node.path.attr.lower() == "displayname"
                and isinstance(node.value, str)
            ):
                problem = group_name_problem(node.value)
                if problem is not None:
                    raise InvalidFilter(f"No group can have this displayName: {problem}")
            return node
        if isinstance(node, (And, Or)):
            return replace(
                node,
                left=self._check_names(node.left, resource_type),
                right=self._check_names(node.right, resource_type),
            )
        if isinstance(node, Not):
            return replace(node, inner=self._check_names(node.inner, resource_type))
        if isinstance(node, ValueFilter):
            return replace(node, filter=self._check_names(node.filter, resource_type))
        return node

    # ------------------------------------------------------------------ rendering

    def _render(
        self,
        resource: Resource,
        resource_type: str,
        request: ScimRequest,
        projection: Projection | None = None,
    ) -> dict[str, Any]:
        endpoint = _ENDPOINTS[resource_type]
        if isinstance(resource.get("members"), MemberList):
            resource = {**resource, "members": list(resource["members"])}
        urns = [schema.id for schema in self.schemas.get(resource_type)]
        rendered: dict[str, Any] = {"schemas": [urns[0]]}
        asked = projection.include if projection is not None else frozenset()
        unreturned = self.schemas.unreturned[resource_type]
        rendered.update(without_unreturned(resource, unreturned, asked))
        rendered["schemas"] += [urn for urn in urns[1:] if rendered.get(urn)]
        meta = dict(resource.get("meta") or {})
        meta["resourceType"] = resource_type
        ident = quote(str(resource["id"]), safe="")  # pragma: no mutate (letters never quoted)
        meta["location"] = f"{request.base_url}/{endpoint}/{ident}"
        rendered["meta"] = meta
        if resource_type == "Group":
            for member in rendered.get("members") or ():
                member["$ref"] = f"{request.base_url}/Users/{member['value']}"
        for urn, name in self._user_references.get(resource_type, ()):
            holder = rendered.get(urn)
            if isinstance(holder, dict) and isinstance(holder.get(name), dict):
                reference = {**holder[name]}
                if reference.get("value"):
                    reference["$ref"] = f"{request.base_url}/Users/{reference['value']}"
                rendered[urn] = {**holder, name: reference}
        return (projection or Projection()).apply(rendered)

    def _resource_response(
        self,
        status: int,
        resource: Resource,
        resource_type: str,
        request: ScimRequest,
        projection: Projection | None = None,
    ) -> ScimResponse:
        body = self._render(resource, resource_type, request, projection)
        headers = {"Content-Type": SCIM_MEDIA_TYPE}
        version = (resource.get("meta") or {}).get("version")
        if version:
            headers["ETag"] = version
        if status == 201:
            headers["Location"] = body["meta"]["location"]
        return ScimResponse(status, body, headers)

    def _list_response(
        self,
        request: ScimRequest,
        resource_type: str,
        query: Query,
        projection: Projection,
        total: int,
        resources: Sequence[Resource],
        next_cursor: str | None = None,
    ) -> ScimResponse:
        """A ListResponse; a cursor page (RFC 9865) has no ``startIndex``, counts in
        ``itemsPerPage`` the resources it holds, and has ``nextCursor`` unless it is the last."""
        body: dict[str, Any] = {"schemas": [LIST_RESPONSE_URN], "totalResults": total}
        if query.keyset:
            body["itemsPerPage"] = len(resources)
            if next_cursor is not None:
                body["nextCursor"] = next_cursor
        else:
            body["startIndex"] = query.start_index
            body["itemsPerPage"] = query.count
        body["Resources"] = [self._render(r, resource_type, request, projection) for r in resources]
        return ScimResponse(200, body, {"Content-Type": SCIM_MEDIA_TYPE})

    # ------------------------------------------------------------------ discovery

    def _service_provider_config(self, request: ScimRequest, _: str) -> ScimResponse:
        codec = self._cursors
        body = discovery.service_provider_config(
            request.base_url,
            self.config.max_results,
            default_count=self.config.default_count,
            cursor_timeout=codec.timeout if codec is not None else None,
        )
        return ScimResponse(200, body, {"Content-Type": SCIM_MEDIA_TYPE})

    def _resource_types(self, request: ScimRequest, name: str) -> ScimResponse:
        listing = discovery.resource_types(request.base_url, self.schemas)
        return _listing_or_one(listing, name, "ResourceType")

    def _schemas(self, request: ScimRequest, urn: str) -> ScimResponse:
        return _listing_or_one(discovery.schemas(request.base_url, self.schemas), urn, "Schema")

    def _openapi(self, request: ScimRequest, _: str) -> ScimResponse:
        """The OpenAPI 3 document of this API (apispec, the ``openapi`` extra, is imported on
        first use only; without it the document is 501)."""
        from scim_core import __version__

        try:
            from scim_core.schemas.openapi import openapi_document
        except ImportError:
            raise NotImplementedByDesign(
                "The OpenAPI document is not served here: apispec (scim-ldap[openapi]) is missing."
            ) from None

        body = openapi_document(request.base_url, __version__, self.schemas)
        return ScimResponse(200, body, {"Content-Type": "application/json"})

    # ------------------------------------------------------------------ users

    def _user_or_404(self, user_id: str) -> Resource:
        user = self.backend.get_user(user_id)
        if user is None:
            raise NotFound("No user has this id.")
        return user

    def _load_user(self, body: Mapping[str, Any]) -> tuple[Resource, Secret | None]:
        """Fold a POST/PUT body into a canonical, validated User and its password, if any."""
        # The PATCH engine reads an operation's keys and its op in any case, and leaves out
        # what a client cannot write (id, meta, schemas, groups).
        add = [{"op": "add", "value": dict(body)}]  # pragma: no mutate
        folded, _changed = apply_patch({}, add, "User", self.schemas)
        user = validate_user(folded, schemas=self.schemas)
        password = user.pop("password", None)
        return user, Secret(password) if password is not None else None

    def _list_users(self, request: ScimRequest, _: str) -> ScimResponse:
        return self._list(request, request.query, "User")

    def _search_users(self, request: ScimRequest, _: str) -> ScimResponse:
        return self._list(request, _search_params(self._object_body(request)), "User")

    def _list(
        self, request: ScimRequest, params: Mapping[str, str], resource_type: str
    ) -> ScimResponse:
        urn = USER_URN if resource_type == "User" else GROUP_URN
        query, projection, window = self._query(params, resource_type, urn)
        find = self.backend.find_users if resource_type == "User" else self.backend.find_groups
        if window.cursor is None:
            page = find(query)
            return self._list_response(
                request, resource_type, query, projection, page.total_results, page.resources
            )
        codec = self._cursors
        if codec is None:
            raise InvalidCursor(
                "Cursor-based paging is not offered here (see /ServiceProviderConfig); "
                "page with startIndex."
            )
        # The walk belongs to its query and its caller: a cursor shown with another filter,
        # on the other endpoint or by another client is refused like a forged one.
        binding = CursorBinding(
            resource_type,
            repr(query.filter) if query.filter is not None else "",
            request.principal,
        )
        after = codec.open(window.cursor, query.count, binding) if window.cursor else None
        page = find(replace(query, after=after))
        next_cursor = None
        if page.next_position is not None and query.count > 0:
            next_cursor = codec.seal(page.next_position, query.count, binding)
        return self._list_response(
            request,
            resource_type,
            query,
            projection,
            page.total_results,
            page.resources,
            next_cursor,
        )

    def _get_user(self, request: ScimRequest, user_id: str) -> ScimResponse:
        projection = parse_projection(request.query, USER_URN)
        # A hint to the backend (see _query).
        user = self.backend.get_user(user_id, projection.top_level())  # pragma: no mutate
        if user is None:
            raise NotFound("No user has this id.")
        return self._resource_response(200, user, "User", request, projection)

    def _create_user(self, request: ScimRequest, _: str) -> ScimResponse:
        user, password = self._load_user(self._object_body(request))
        created = self.backend.create_user(user, password)
        self._audit(request, "create", "User", created["id"], 201)
        return self._resource_response(201, created, "User", request)

    def _replace_user(self, request: ScimRequest, user_id: str) -> ScimResponse:
        desired, password = self._load_user(self._object_body(request))

        def plan(current: Resource) -> tuple[Resource, Secret | None] | None:
            replaced = self._kept_on_replace(current, {**desired, "id": current["id"]})
            if replaced.get("active") is None:
                # Only an explicit true enables: a PUT without active (or with null) keeps
                # the state, so a full replace from a client that does not manage it never
                # re-enables a disabled user.
                replaced["active"] = current.get("active", True)
            if password is None and _comparable(replaced) == _comparable(current):
                return None
            return replaced, password

        return self._update_user(request, user_id, "replace", plan)

    def _patch_user(self, request: ScimRequest, user_id: str) -> ScimResponse:
        operations = self._operations(request)

        def plan(current: Resource) -> tuple[Resource, Secret | None] | None:
            patched, changed = apply_patch(current, operations, "User", self.schemas)
            if not changed:
                return None
            if current.get("active") is not None and patched.get("active") is None:
                raise InvalidValue("active cannot be removed or set to null; send true or false.")
            # Only what the PATCH changed is checked: the rest is as the backend stored it.
            touched = {
                k for k in patched.keys() | current.keys() if patched.get(k) != current.get(k)
            }
            desired = validate_user(patched, before=current, schemas=self.schemas, changed=touched)
            password = desired.pop("password", None)
            if password is None and all(desired.get(k) == current.get(k) for k in touched):
                return None  # the same once checked (a userName sent with spaces around it)
            return desired, Secret(password) if password is not None else None

        return self._update_user(request, user_id, "patch", plan)

    def _update_user(
        self,
        request: ScimRequest,
        user_id: str,
        action: str,
        plan: Callable[[Resource], tuple[Resource, Secret | None] | None],
    ) -> ScimResponse:
        """Read, plan the new state, write it under an optimistic lock on the version read.

        A concurrent change makes the backend raise :class:`VersionConflict`: with
        ``If-Match`` that is 412 (RFC 7644 §3.14), otherwise the plan runs again on a fresh
        read, so no update is lost and none is applied to a state it was not computed from.
        """
        for _attempt in range(_UPDATE_ATTEMPTS):
            current = self._user_or_404(user_id)
            _check_version(request, current)
            planned = plan(current)
            if planned is None:
                return self._resource_response(200, current, "User", request)
            desired, password = planned
            try:
                updated = self.backend.update_user(current["id"], current, desired, password)
            except VersionConflict:
                if request.if_match:
                    raise PreconditionFailed(
                        "The resource has changed since the version in If-Match."
                    ) from None
                continue
            self._audit(request, action, "User", current["id"], 200)
            return self._resource_response(200, updated, "User", request)
        raise VersionConflict("The user is changing concurrently; retry the request.")

    def _delete_user(self, request: ScimRequest, user_id: str) -> ScimResponse:
        if request.if_match:
            _check_version(request, self._user_or_404(user_id))
        if not self.backend.delete_user(user_id):
            raise NotFound("No user has this id.")
        self._audit(request, "delete", "User", user_id, 204)
        return ScimResponse(204)

    # ------------------------------------------------------------------ groups

    def _list_groups(self, request: ScimRequest, _: str) -> ScimResponse:
        return self._list(request, request.query, "Group")

    def _search_groups(self, request: ScimRequest, _: str) -> ScimResponse:
        return self._list(request, _search_params(self._object_body(request)), "Group")

    def _group_or_404(self, group_id: str, projection: Projection) -> Resource:
        # Members the answer leaves out need not be read; wants() folds case, and a backend
        # reads members by default.
        members = projection.wants("members")  # pragma: no mutate
        group = self.backend.get_group(group_id, members=members)  # pragma: no mutate
        if group is None:
            raise NotFound("No group has this id.")
        return group

    def _get_group(self, request: ScimRequest, group_id: str) -> ScimResponse:
        projection = parse_projection(request.query, GROUP_URN)
        return self._group_response(self._group_or_404(group_id, projection), request, projection)

    def _group_response(
        self, group: Resource, request: ScimRequest, projection: Projection
    ) -> ScimResponse:
        """A 200 with the group: in chunks past ``STREAMED_MEMBERS`` members kept as a
        :class:`~scim_core.members.MemberList`, else whole."""
        members = group.get("members")
        if isinstance(members, MemberList) and len(members) > STREAMED_MEMBERS:
            streamed = self._streamed_group(group, members, request, projection)
            if streamed is not None:
                return streamed
        return self._resource_response(200, group, "Group", request, projection)

    def _streamed_group(
        self,
        group: Resource,
        members: MemberList,
        request: ScimRequest,
        projection: Projection,
    ) -> ScimResponse | None:
        """A 200 whose body is ``chunks`` (:class:`~scim_core.members.StreamedGroup`): the
        group rendered as usual with its first member only, which shows how every member is
        written; ``None`` where the rendering is not one that template reproduces."""
        sample = self._resource_response(
            200, {**group, "members": members[:1]}, "Group", request, projection
        )
        rendered = dict(sample.body or {})
        shown = rendered.get("members")
        if not isinstance(shown, list) or len(shown) != 1:
            return None
        write = member_template(shown[0], members.pairs[0], request.base_url)
        if write is None:
            return None
        return replace(sample, body=None, chunks=StreamedGroup(rendered, members, write))

    def _create_group(self, request: ScimRequest, _: str) -> ScimResponse:
        body = self._object_body(request)
        add = [{"op": "add", "value": body}]  # pragma: no mutate (see _load_user)
        folded, _changed = apply_patch({}, add, "Group", self.schemas)
        group = validate_group(folded, schemas=self.schemas)
        group["members"] = [{"value": m["value"]} for m in group.get("members") or ()]
        created = self.backend.create_group(group)
        self._audit(request, "create", "Group", created["id"], 201)
        return self._resource_response(201, created, "Group", request)

    def _patch_group(self, request: ScimRequest, group_id: str) -> ScimResponse:
        operations = self._operations(request)
        projection = parse_projection(request.query, GROUP_URN)
        plan = MembershipPlan.from_operations(operations, self._group_extensions)
        if request.if_match:
            # The version is all a check needs: read no members (a hint, as in _group_or_404).
            version_only = Projection(include=frozenset({"id"}))  # pragma: no mutate
            _check_version(request, self._group_or_404(group_id, version_only))
        add, remove = list(plan.add), list(plan.remove)
        current: Resource | None = None
        if plan.replace is not None:
            current = self._group_or_404(group_id, Projection())
            present = {m["value"] for m in current.get("members") or ()}
            add = [*add, *(v for v in plan.replace if v not in present)]
            remove = [*remove, *(v for v in present if v not in plan.replace)]
        # The group read for a replace saves _update_group a read of its own.
        renamed = self._update_group(group_id, plan, current)  # pragma: no mutate
        if add or remove:
            try:
                if not self.backend.change_members(group_id, add=add, remove=remove):
                    raise NotFound("No group has this id.")
            except ScimError as error:
                error.partial = error.partial or renamed
                raise
        if renamed or add or remove:
            self._audit(request, "patch", "Group", group_id, 200)
        return self._group_response(self._group_or_404(group_id, projection), request, projection)

    def _update_group(self, group_id: str, plan: MembershipPlan, current: Resource | None) -> bool:
        """Write the group's new displayName (its id stays) and externalId where the backend
        keeps them (``update_group``); whether that wrote anything. What equals the stored
        value (``current``, read here unless the caller read it) is no change; a new name
        where the backend cannot rename is 400."""
        wanted: dict[str, str | None] = {}
        if plan.display_name is not None:
            problem = group_name_problem(plan.display_name)
            if problem is not None:
                raise InvalidValue(f"displayName: {problem}")
            wanted["displayName"] = plan.display_name
        # attribute() finds a name in any case.
        external = self.schemas.get("Group")[0].attribute("externalId")  # pragma: no mutate
        if plan.external_id_sent and external and external.mutability == "readWrite":
            wanted["externalId"] = plan.external_id
        wanted.update(plan.extensions)
        if not wanted:
            return False
        if current is None:
            no_members = Projection(exclude=frozenset({"members"}))  # pragma: no mutate (a hint)
            current = self._group_or_404(group_id, no_members)
        changes = {k: v for k, v in wanted.items() if v != group_value(current, k)}
        update = getattr(self.backend, "update_group", None)
        if "displayName" in changes and update is None:
            if str(changes["displayName"]).casefold() == str(current["displayName"]).casefold():
                return False
            raise Mutability("displayName is the group's id here and cannot change through SCIM.")
        if not changes or update is None:
            return False
        if not update(group_id, changes):
            raise NotFound("No group has this id.")
        return True

    # ------------------------------------------------------------------ audit

    def _audit(
        self,
        request: ScimRequest,
        action: str,
        resource_type: str,
        ident: str | None,
        status: int,
        scim_type: str | None = None,
        *,
        partial: bool = False,
    ) -> None:
        """One ``scim.audit`` line per change made or refused: who, what, which id, result.

        It names the token (its configured name, never the token), the action, the resource
        type and id, and the HTTP status (with the scimType of a refusal); never a value from
        the body, so no password can reach it. A write that changes nothing logs no audit line.
        A refused change left as it was has ``result: failure``; one that failed after a
        first part of it was written (an outage between two directory operations) adds
        ``partial: true``, so an auditor knows that entry may hold part of the change.
        """
        record = {
            "who": request.principal,
            "action": action,
            "resourceType": resource_type,
            "id": ident,
            "status": status,
            "result": "success" if status < 400 else "failure",
        }
        if scim_type:
            record["scimType"] = scim_type
        if partial:
            record["partial"] = True
        if self._dry_run:
            record["dryRun"] = True
        level = logging.INFO if status < 400 else logging.WARNING
        audit_log.log(
            level,
            "%s %s %s %s",
            action,
            resource_type,
            ident or "-",
            status,
            extra={"audit": record},
        )

    def _audit_failure(
        self, request: ScimRequest, status: int, scim_type: str | None, *, partial: bool = False
    ) -> None:
        """Audit a refused change: a POST, PUT, PATCH or DELETE on /Users or /Groups."""
        action = _WRITE_ACTIONS.get(request.method.upper())
        endpoint, _, ident = request.path.strip("/").partition("/")
        resource_type = _AUDITED_ENDPOINTS.get(endpoint.lower())
        if action is None or resource_type is None or ident == ".search":
            return
        if bool(ident) == (action == "create"):
            return  # POST /Users/{id}, PUT /Users: no such change (405)
        self._audit(
            request, action, resource_type, ident or None, status, scim_type, partial=partial
        )

    # ------------------------------------------------------------------ health

    def check_ready(self) -> None:
        """Raise :class:`~scim_core.errors.DirectoryUnavailable` unless the backend answers."""
        self.backend.check_ready()


def _comparable(resource: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in resource.items() if k != "meta"}


def _check_version(request: ScimRequest, resource: Mapping[str, Any]) -> None:
    """RFC 7644 §3.14: ``If-Match`` must name the current version (or ``*``)."""
    if not request.if_match:
        return
    wanted = {tag.strip() for tag in request.if_match.split(",")}
    version = (resource.get("meta") or {}).get("version")
    if "*" in wanted or version in wanted:
        return
    raise PreconditionFailed("The resource has changed since the version in If-Match.")


def _search_params(body: Mapping[str, Any]) -> dict[str, str]:
    """RFC 7644 §3.4.3: a SearchRequest body as the equivalent query parameters."""
    params: dict[str, str] = {}
    for key in ("filter", "startIndex", "count", "cursor"):
        if body.get(key) is not None:
            params[key] = str(body[key])
    for key in ("attributes", "excludedAttributes"):
        value = body.get(key)
        if isinstance(value, list):
            params[key] = ",".join(str(v) for v in value)
        elif isinstance(value, str):
            params[key] = value
    return params


def _listing_or_one(items: Sequence[dict[str, Any]], ident: str, kind: str) -> ScimResponse:
    if ident:
        for item in items:
            if item["id"] == ident:
                return ScimResponse(200, item, {"Content-Type": SCIM_MEDIA_TYPE})
        raise NotFound(f"No {kind} has this id.")
    body = {
        "schemas": [LIST_RESPONSE_URN],
        "totalResults": len(items),
        "startIndex": 1,
        "itemsPerPage": len(items),
        "Resources": list(items),
    }
    return ScimResponse(200, body, {"Content-Type": SCIM_MEDIA_TYPE})


def error_response(error: ScimError) -> ScimResponse:
    """Render any :class:`ScimError` as its RFC 7644 §3.12 response."""
    headers = {"Content-Type": SCIM_MEDIA_TYPE, **error.headers}
    return ScimResponse(error.status, error.to_body(), headers)


_WRITE_ACTIONS = {"POST": "create", "PUT": "replace", "PATCH": "patch", "DELETE": "delete"}
_AUDITED_ENDPOINTS = {"users": "User", "groups": "Group"}

_GROUP_WRITES_DETAIL = (
    "Group replacement and deletion are managed in the directory, not through SCIM; "
    "use PATCH to change membership."
)

#: Resource type -> its endpoint (its schemas come from :attr:`ScimService.schemas`).
_ENDPOINTS: dict[str, str] = {"User": "Users", "Group": "Groups"}

_ROUTES: dict[tuple[str, bool], _Route] = {
    ("serviceproviderconfig", False): _Route({"GET": ScimService._service_provider_config}),
    ("resourcetypes", False): _Route({"GET": ScimService._resource_types}),
    ("resourcetypes", True): _Route({"GET": ScimService._resource_types}),
    ("schemas", False): _Route({"GET": ScimService._schemas}),
    ("schemas", True): _Route({"GET": ScimService._schemas}),
    ("openapi.json", False): _Route({"GET": ScimService._openapi}),
    ("users", False): _Route({"GET": ScimService._list_users, "POST": ScimService._create_user}),
    ("users/.search", False): _Route({"POST": ScimService._search_users}),
    ("users", True): _Route(
        {
            "GET": ScimService._get_user,
            "PUT": ScimService._replace_user,
            "PATCH": ScimService._patch_user,
            "DELETE": ScimService._delete_user,
        }
    ),
    ("groups", False): _Route({"GET": ScimService._list_groups, "POST": ScimService._create_group}),
    ("groups/.search", False): _Route({"POST": ScimService._search_groups}),
    ("groups", True): _Route(
        {"GET": ScimService._get_group, "PATCH": ScimService._patch_group},
        by_design_unsupported=frozenset({"PUT", "DELETE"}),
    ),
}
