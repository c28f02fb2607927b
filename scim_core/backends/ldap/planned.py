"""A dry run's writes applied to an in-memory copy of an entry, as the directory would apply
them: the entry they leave, the refusal the directory would give instead, and each write's
RFC 2849 change record (:mod:`~scim_core.backends.ldap.ldif`).

The copies come from :class:`~scim_core.backends.ldap.dryrun.Planner`, which reads them from
the directory (or from what its request already planned) and keeps what these functions
return. Values are compared as the directory compares the attributes the service writes: case
aside, octets exactly. A password attribute's values never reach a record: it is named in a
comment instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ldap3.core.exceptions import LDAPOperationResult
from ldap3.core.results import RESULT_CODES
from ldap3.utils.ciDict import CaseInsensitiveDict
from ldap3.utils.dn import safe_rdn, to_dn

from scim_core.backends.ldap.controls import POST_READ_OID
from scim_core.backends.ldap.encoding import MODIFY_OPERATIONS
from scim_core.backends.ldap.ldif import change_record, ldif_line
from scim_core.backends.ldap.results import (
    NO_SUCH_ATTRIBUTE,
    OBJECT_CLASS_VIOLATION,
    VALUE_EXISTS,
)
from scim_core.backends.ldap.values import rdn_value

__all__ = [
    "Changes",
    "Entry",
    "added",
    "answer",
    "modified",
    "refusal",
    "renamed",
    "renamed_dn",
    "without_operational",
]

Entry = Any  # ldap3's CaseInsensitiveDict: attribute name -> values
Changes = Mapping[str, Sequence[tuple[str, Sequence[Any]]]]

# A modification's number -> its LDIF keyword (RFC 2849).
_LDIF_OPERATIONS = ("add", "delete", "replace", "increment")
# What a modify must leave in an entry of these classes (RFC 4519 MUST), checked as the
# directory would: the service relies on the refusal to keep a placeholder member.
_REQUIRED = {"groupofnames": "member", "groupofuniquenames": "uniqueMember"}
# Kept by the directory itself: never part of a planned entry's record, nor of an answer's
# version (an ETag the directory never issued would be a lie).
_OPERATIONAL_NAMES = frozenset(
    {"entrycsn", "entryusn", "usnchanged", "modifytimestamp", "modifiersname"}
)


def refusal(code: int, dn: str, kind: str) -> LDAPOperationResult:
    """The error ldap3 raises for the directory's answer ``code`` to a ``kind`` request
    (``modifyResponse``, ...) about ``dn``."""
    return LDAPOperationResult(
        result=code, description=RESULT_CODES[code], dn=dn, message="", response_type=kind
    )


def _rdn_value(text: str) -> str:
    """An RDN's value as the entry holds it: ``uid=jane\\+doe`` holds ``jane+doe``."""
    return rdn_value(text.partition("=")[2])


def _same(left: object, right: object) -> bool:
    if isinstance(left, bytes) or isinstance(right, bytes):
        return left == right
    return str(left).lower() == str(right).lower()


def _password_comment(name: str) -> str:
    return f"{name} is set here (value not shown)"


def added(dn: str, attributes: Mapping[str, Any], passwords: frozenset[str]) -> tuple[Entry, str]:
    """The entry an add of ``attributes`` makes, and its record.

    :param passwords: the password attributes (lower case): left out of both.
    """
    entry = CaseInsensitiveDict()
    body, comments = [], []
    for name, values in attributes.items():
        values = list(values) if isinstance(values, list | tuple) else [values]
        if name.lower() in passwords:
            comments.append(_password_comment(name))
            continue
        entry[name] = values
        body += [ldif_line(name, value) for value in values]
    return entry, change_record(dn, "add", body, comments)


def modified(
    dn: str, entry: Entry, changes: Changes, passwords: frozenset[str]
) -> tuple[Entry, str]:
    """The entry ``changes`` (attribute -> (ldap3 operation, values) each) leave of ``entry``
    (left as it is), and their record.

    :param passwords: the password attributes (lower case): their changes are a comment only.
    :raises LDAPOperationResult: as the directory refuses: ``attributeOrValueExists`` for an
        added value already there, ``noSuchAttribute`` for a deleted value (or attribute) that
        is not, ``objectClassViolation`` for a group left without its members' attribute.
    """
    entry = CaseInsensitiveDict(entry)
    body, comments = [], []
    for name, operations in changes.items():
        for operation, values in operations:
            values = list(values)
            kind = _LDIF_OPERATIONS[MODIFY_OPERATIONS[operation]]
            if name.lower() in passwords:
                comments.append(_password_comment(name))
                continue
            have = list(entry.get(name, []))
            if kind == "add":
                if any(_same(v, h) for v in values for h in have):
                    raise refusal(VALUE_EXISTS, dn, "modifyResponse")
                have += values
            elif kind == "delete":
                if values and not all(any(_same(v, h) for h in have) for v in values):
                    raise refusal(NO_SUCH_ATTRIBUTE, dn, "modifyResponse")
                if not values and not have:
                    raise refusal(NO_SUCH_ATTRIBUTE, dn, "modifyResponse")
                have = [h for h in have if values and not any(_same(v, h) for v in values)]
            else:
                have = values
            if have:
                entry[name] = have
            elif name in entry:
                del entry[name]
            body += [f"{kind}: {name}", *(ldif_line(name, v) for v in values), "-"]
    # The entry's names are matched case aside: no other spelling of the name finds more.
    for object_class in entry.get("objectClass", []):  # pragma: no mutate
        required = _REQUIRED.get(str(object_class).lower())
        if required and not entry.get(required):
            raise refusal(OBJECT_CLASS_VIOLATION, dn, "modifyResponse")
    return entry, change_record(dn, "modify", body, comments)


def renamed_dn(dn: str, new_rdn: str) -> str:
    """Where a modrdn of ``dn`` to ``new_rdn`` moves the entry (the same parent)."""
    return ",".join([new_rdn, *to_dn(dn)[1:]])


def renamed(dn: str, entry: Entry, new_rdn: str) -> tuple[Entry, str]:
    """The entry a modrdn of ``dn`` to ``new_rdn`` that deletes the old RDN value leaves of
    ``entry`` (left as it is), and its record. The RDNs' values are compared and kept
    unescaped, as the entry holds them."""
    moved = CaseInsensitiveDict(entry)
    old, new = safe_rdn(dn)[0], new_rdn
    old_name, new_name = old.partition("=")[0], new.partition("=")[0]
    moved[old_name] = [v for v in moved.get(old_name, []) if not _same(v, _rdn_value(old))]
    moved[new_name] = [*moved.get(new_name, []), _rdn_value(new)]
    body = [ldif_line("newrdn", new_rdn), "deleteoldrdn: 1"]
    return moved, change_record(dn, "modrdn", body)


def without_operational(entry: Entry) -> Entry:
    """``entry`` without the attributes the directory keeps itself (its change numbers and
    times), whose values a real write would change."""
    return CaseInsensitiveDict(
        (name, values) for name, values in entry.items() if name.lower() not in _OPERATIONAL_NAMES
    )


def answer(entry: Entry, controls: Sequence[Any] | None) -> dict[str, Any]:
    """The directory's answer to a write that left ``entry``: success, with the entry (less
    :func:`without_operational`'s attributes) when ``controls`` ask for a post-read."""
    result: dict[str, Any] = {"result": 0, "description": "success", "type": "dryRun"}
    if any(control[0] == POST_READ_OID for control in controls or ()):
        result["controls"] = {POST_READ_OID: {"value": {"result": without_operational(entry)}}}
    return result
