"""SCIM filters and PATCH paths: parse, police, evaluate (RFC 7644 §3.4.2.2, §3.5.2).

- :func:`parse_filter` / :func:`parse_path`: text -> frozen AST (:mod:`.ast`), syntax errors as
  :class:`~scim_core.errors.InvalidFilter` / :class:`~scim_core.errors.InvalidPath` with the
  column;
- :class:`FilterPolicy` / :data:`DEFAULT_POLICY`: which forms a resource type supports;
- :func:`evaluate`: a filter as a predicate over a resource in RFC 7643 JSON form.

Framework-free: nothing here imports flask, werkzeug or ldap3. The LDAP translation is the LDAP
plugin's (:mod:`scim_core.backends.ldap.filter`).
"""

from scim_core.filter.ast import (
    And,
    AttrPath,
    Compare,
    CompareOp,
    Filter,
    Not,
    Or,
    PatchPath,
    Present,
    Value,
    ValueFilter,
)
from scim_core.filter.evaluate import CASE_EXACT, evaluate
from scim_core.filter.parser import MAX_DEPTH, MAX_LENGTH, parse_filter, parse_path
from scim_core.filter.policy import (
    CORE_SCHEMAS,
    DEFAULT_POLICY,
    FilterPolicy,
    Form,
)

__all__ = [
    "CASE_EXACT",
    "CORE_SCHEMAS",
    "DEFAULT_POLICY",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "And",
    "AttrPath",
    "Compare",
    "CompareOp",
    "Filter",
    "FilterPolicy",
    "Form",
    "Not",
    "Or",
    "PatchPath",
    "Present",
    "Value",
    "ValueFilter",
    "evaluate",
    "parse_filter",
    "parse_path",
]
