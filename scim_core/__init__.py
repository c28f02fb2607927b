"""scim_core: a framework-free SCIM 2.0 service (RFC 7643, RFC 7644) over pluggable backends.

A request object in, a response object out::

    from scim_core import ScimRequest, ScimService, load_backend

    service = ScimService(load_backend("memory")({}))
    response = service.handle(ScimRequest("GET", "/ServiceProviderConfig"))

This package never imports flask, werkzeug or ldap3; the LDAP backend is a plugin loaded by
name through the ``scim_core.backends`` entry-point group.
"""

from scim_core.backend import Backend, BackendFactory, Page, Query, Resource, load_backend
from scim_core.config import ConfigError, ServiceConfig, Setting
from scim_core.errors import (
    DirectoryUnavailable,
    InvalidFilter,
    InvalidPath,
    InvalidSyntax,
    InvalidValue,
    Mutability,
    NoTarget,
    NotFound,
    NotImplementedByDesign,
    PreconditionFailed,
    ScimError,
    Uniqueness,
)
from scim_core.filter import Filter, parse_filter
from scim_core.filter.policy import DEFAULT_POLICY, FilterPolicy
from scim_core.messages import ScimRequest, ScimResponse
from scim_core.normalize import Normalizer, normalize_username
from scim_core.patch import apply_patch
from scim_core.secret import Secret
from scim_core.service import ScimService

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_POLICY",
    "Backend",
    "BackendFactory",
    "ConfigError",
    "DirectoryUnavailable",
    "Filter",
    "FilterPolicy",
    "InvalidFilter",
    "InvalidPath",
    "InvalidSyntax",
    "InvalidValue",
    "Mutability",
    "NoTarget",
    "Normalizer",
    "NotFound",
    "NotImplementedByDesign",
    "Page",
    "PreconditionFailed",
    "Query",
    "Resource",
    "ScimError",
    "ScimRequest",
    "ScimResponse",
    "ScimService",
    "Secret",
    "ServiceConfig",
    "Setting",
    "Uniqueness",
    "__version__",
    "apply_patch",
    "load_backend",
    "normalize_username",
    "parse_filter",
]
