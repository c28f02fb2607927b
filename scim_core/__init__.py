"""scim_core: a framework-free SCIM 2.0 service (RFC 7643, RFC 7644) over pluggable backends.

A request object in, a response object out::

    from scim_core import ScimRequest, ScimService, load_backend

    service = ScimService(load_backend("memory")({}))
    response = service.handle(ScimRequest("GET", "/ServiceProviderConfig"))

This package never imports flask, werkzeug or ldap3, and needs only lark and marshmallow
(``pip install scim-ldap``); the LDAP backend is a plugin loaded by name through the
``scim_core.backends`` entry-point group and needs the ``ldap`` extra (see the README).

The names below (``__all__``) are the public API, kept stable under semantic versioning; a test
compares their signatures with a checked-in snapshot. They fall into these groups:

- the service facade: :class:`ScimService`, :class:`ScimRequest`, :class:`ScimResponse`,
  :func:`error_response`, :data:`SCIM_MEDIA_TYPE`;
- configuration: :class:`ServiceConfig`, :class:`FilterPolicy` and :data:`DEFAULT_POLICY`,
  :class:`Setting`, :func:`read_settings`, :data:`SERVICE_SETTINGS`, :class:`ConfigError`;
- backends: the :class:`Backend` protocol, :class:`BackendFactory`, :class:`Query`,
  :class:`Page`, :data:`Resource`, :class:`Secret` and :func:`load_backend`; a backend that
  stores more attributes than the defaults says so with a :class:`SchemaSet` (built from
  :data:`DEFAULT_SCHEMAS`), which the service then advertises and understands;
- errors: :class:`ScimError` and one subclass per RFC 7644 §3.12 error;
- authentication for an adapter: :class:`TokenSet` (static bearer tokens kept as SHA-256
  digests, compared in constant time; 401 :class:`Unauthorized` otherwise), made by
  :func:`parse_tokens` from ``SCIM_TOKENS_SHA256``'s text;
- observation: :func:`add_directory_observer` (a :data:`DirectoryObserver` sees each directory
  operation a backend reports with :func:`directory_operation`),
  :func:`add_dropped_attribute_observer` (a :data:`DroppedAttributeObserver` sees each attribute
  a client wrote that nothing stores) and :data:`DRY_RUN_HEADER`,
  which marks the answers of a backend that plans its writes instead of making them;
- building blocks: :func:`parse_filter` (and the :data:`Filter` AST), :func:`apply_patch`
  (with :func:`checked_operations`, which checks a PATCH's operations before anything is read,
  into :class:`PatchOperation`), and
  the userName normalization hook (:data:`Normalizer`, :func:`normalize_username`).

The subpackage :mod:`scim_core.filter` (AST node types, :func:`~scim_core.filter.evaluate`) is
public too; other modules are implementation details.
"""

from scim_core.auth import TokenSet, parse_tokens
from scim_core.backend import Backend, BackendFactory, Page, Query, Resource, load_backend
from scim_core.config import SERVICE_SETTINGS, ConfigError, ServiceConfig, Setting, read_settings
from scim_core.errors import (
    DirectoryRefused,
    DirectoryUnavailable,
    ExpiredCursor,
    Forbidden,
    InternalError,
    InvalidCount,
    InvalidCursor,
    InvalidFilter,
    InvalidPath,
    InvalidSyntax,
    InvalidValue,
    MethodNotAllowed,
    Mutability,
    NoTarget,
    NotFound,
    NotImplementedByDesign,
    PayloadTooLarge,
    PreconditionFailed,
    ScimError,
    TooMany,
    TooManyRequests,
    Unauthorized,
    Uniqueness,
    UnsupportedMediaType,
    VersionConflict,
)
from scim_core.filter import Filter, parse_filter
from scim_core.filter.policy import DEFAULT_POLICY, FilterPolicy
from scim_core.messages import SCIM_MEDIA_TYPE, ScimRequest, ScimResponse
from scim_core.normalize import Normalizer, normalize_username
from scim_core.observe import (
    DirectoryObserver,
    DroppedAttributeObserver,
    add_directory_observer,
    add_dropped_attribute_observer,
    directory_operation,
)
from scim_core.patch import PatchOperation, apply_patch, checked_operations
from scim_core.schemas.attributes import DEFAULT_SCHEMAS, SchemaSet
from scim_core.secret import Secret
from scim_core.service import DRY_RUN_HEADER, ScimService, error_response

__version__ = "0.1.0"
"""The distribution's version; ``setup.cfg`` reads it from here (``attr:``)."""

__all__ = [
    "DEFAULT_POLICY",
    "DEFAULT_SCHEMAS",
    "DRY_RUN_HEADER",
    "SCIM_MEDIA_TYPE",
    "SERVICE_SETTINGS",
    "Backend",
    "BackendFactory",
    "ConfigError",
    "DirectoryObserver",
    "DirectoryRefused",
    "DirectoryUnavailable",
    "DroppedAttributeObserver",
    "ExpiredCursor",
    "Filter",
    "FilterPolicy",
    "Forbidden",
    "InternalError",
    "InvalidCount",
    "InvalidCursor",
    "InvalidFilter",
    "InvalidPath",
    "InvalidSyntax",
    "InvalidValue",
    "MethodNotAllowed",
    "Mutability",
    "NoTarget",
    "Normalizer",
    "NotFound",
    "NotImplementedByDesign",
    "Page",
    "PatchOperation",
    "PayloadTooLarge",
    "PreconditionFailed",
    "Query",
    "Resource",
    "SchemaSet",
    "ScimError",
    "ScimRequest",
    "ScimResponse",
    "ScimService",
    "Secret",
    "ServiceConfig",
    "Setting",
    "TokenSet",
    "TooMany",
    "TooManyRequests",
    "Unauthorized",
    "Uniqueness",
    "UnsupportedMediaType",
    "VersionConflict",
    "__version__",
    "add_directory_observer",
    "add_dropped_attribute_observer",
    "apply_patch",
    "checked_operations",
    "directory_operation",
    "error_response",
    "load_backend",
    "normalize_username",
    "parse_filter",
    "parse_tokens",
    "read_settings",
]
