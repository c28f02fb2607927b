"""Dry run: every write planned against the directory as it is, written as LDIF, never sent.

With ``SCIM_LDAP_DRY_RUN`` the plugin's writes (add, modify, delete, rename, password) stop at
:class:`Planner`. It reads the entry a write concerns from the directory (reads stay live),
applies the write to that copy in memory, answers the service as the directory would (the
post-read entry, ``noSuchObject``, ``entryAlreadyExists``, ``attributeOrValueExists``), and
records the write as an RFC 2849 change record. The copies live for one SCIM request on one
thread, so a request that adds an entry and then changes it (a create with an RFC 3062
password) or renames one and reads it back is planned whole; the next request starts from the
directory again. An entry planned in this request has no id of the directory's and no version
(answers carry no ETag).

Each request's records form one block, logged on ``scim.dryrun`` and appended to
``SCIM_LDAP_DRY_RUN_LDIF`` when set; ``ldapmodify -c -f`` applies the file and makes the
changes the service would have made. Passwords are never in it: a password change is a
comment naming the entry, and a password attribute (AD's ``unicodePwd``) is left out of its
record with a comment.

What a plan cannot tell: a refusal only the directory's own rules give (a password policy,
schema, size or ACL check), and a change made by someone else in between (assertions are not
evaluated).
"""

from __future__ import annotations

import base64
import fcntl
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ldap3 import BASE
from ldap3.core.exceptions import LDAPOperationResult
from ldap3.core.results import RESULT_CODES
from ldap3.utils.ciDict import CaseInsensitiveDict
from ldap3.utils.dn import safe_rdn, to_dn

from scim_core.backends.ldap import wire
from scim_core.backends.ldap.controls import POST_READ_OID
from scim_core.backends.ldap.encoding import MODIFY_OPERATIONS
from scim_core.backends.ldap.results import (
    ALREADY_EXISTS,
    NO_SUCH_ATTRIBUTE,
    NO_SUCH_OBJECT,
    OBJECT_CLASS_VIOLATION,
    VALUE_EXISTS,
)
from scim_core.backends.ldap.values import dn_key

__all__ = ["Planner", "change_record", "ldif_line"]

log = logging.getLogger("scim.dryrun")

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


def _refused(code: int, dn: str, kind: str) -> LDAPOperationResult:
    return LDAPOperationResult(
        result=code, description=RESULT_CODES[code], dn=dn, message="", response_type=kind
    )


def _safe(value: str) -> bool:
    """RFC 2849 SAFE-STRING: printable ASCII, not starting with space, colon or '<'."""
    return (
        value.isascii()
        and value.isprintable()
        and not value.startswith((" ", ":", "<"))
        and not value.endswith(" ")
    )


def ldif_line(name: str, value: object) -> str:
    """One RFC 2849 attribute line: the value as written when it is a SAFE-STRING, else base64."""
    if isinstance(value, bytes | bytearray) or not _safe(str(value)):
        raw = bytes(value) if isinstance(value, bytes | bytearray) else str(value).encode()
        return f"{name}:: {base64.b64encode(raw).decode()}"
    return f"{name}: {value}"


def change_record(
    dn: str,
    changetype: str,
    body: Sequence[str] = (),
    comments: Sequence[str] = (),
) -> str:
    """One RFC 2849 change record (``dn``, ``changetype`` and ``body`` lines), comments first."""
    lines = [f"# {comment}" for comment in comments]
    lines += [ldif_line("dn", dn), f"changetype: {changetype}", *body]
    return "\n".join(lines) + "\n"


def _same(left: object, right: object) -> bool:
    if isinstance(left, bytes) or isinstance(right, bytes):
        return left == right
    return str(left).lower() == str(right).lower()


class _Request(threading.local):
    """One thread's planned entries for the request it serves."""

    def __init__(self) -> None:
        self.active = False
        self.entries: dict[str, Entry | None] = {}  # None: deleted in this request
        self.records: list[str] = []
        self.what: str | None = None  # names the block in the LDIF


class Planner:
    """Plans writes instead of sending them; see the module's description.

    :param password_attributes: attributes holding a password, never written to a record.
    :param new_id: the id attribute's value for a planned new entry.
    :param id_attribute: the attribute the directory sets as the entry's id.
    :param binary: attributes read as octets (AD's ``objectGUID``).
    :param ldif_file: where blocks are appended (one ``write`` each, under a file lock, so the
        workers of one server can share it); ``None`` logs them only.
    """

    def __init__(
        self,
        *,
        id_attribute: str,
        new_id: Callable[[], object],
        password_attributes: Sequence[str] = ("userPassword",),
        binary: frozenset[str] = frozenset(),
        ldif_file: str | None = None,
    ) -> None:
        self._id_attribute = id_attribute
        self._new_id = new_id
        self._passwords = {name.lower() for name in password_attributes}
        self._binary = binary
        self._ldif_file = ldif_file
        self._request = _Request()

    # ----------------------------------------------------------------- requests

    @contextmanager
    def request(self, what: str | None = None) -> Iterator[None]:
        """Plan one SCIM request's writes; its records go out as one block when it ends (also
        when it fails part-way: what was planned up to there is what a real run would have
        written). Nested, the outer one owns the block, named by the first ``what`` given."""
        state = self._request
        if state.active:
            state.what = state.what or what
            yield
            return
        state.active, state.entries, state.records, state.what = True, {}, [], what
        try:
            yield
        finally:
            records, what = state.records, state.what
            state.active, state.entries, state.records, state.what = False, {}, [], None
            if records:
                self._emit(what or "a request", records)

    def _emit(self, what: str, records: list[str]) -> None:
        block = f"# dry run: {what}\n" + "\n".join(records) + "\n"
        log.info("dry run: %s\n%s", what, block, extra={"ldif": block})
        if self._ldif_file is None:
            return
        descriptor = os.open(self._ldif_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            os.write(descriptor, block.encode())
        finally:
            os.close(descriptor)

    def _record(self, record: str) -> None:
        self._request.records.append(record)

    # ----------------------------------------------------------------- reads

    def planned(self, dn: str) -> tuple[bool, Entry | None]:
        """(whether this request planned a change of ``dn``, the entry as planned or None)."""
        entries = self._request.entries
        key = dn_key(dn)
        return (key in entries, entries.get(key))

    def _entry(self, connection: Any, dn: str) -> Entry | None:
        """The entry as this request left it, else as the directory holds it."""
        known, entry = self.planned(dn)
        if known:
            return entry
        try:
            entries, _ = wire.search(
                connection,
                wire.Search(dn, "(objectClass=*)", BASE, ["*", "+"], binary=self._binary),
            )
        except LDAPOperationResult as error:
            if error.result != NO_SUCH_OBJECT:
                raise
            return None
        if not entries:
            return None
        found = CaseInsensitiveDict()
        for name, values in entries[0]["attributes"].items():
            found[name] = list(values) if isinstance(values, list | tuple) else [values]
        return found

    def _answer(self, entry: Entry, controls: Sequence[Any] | None) -> dict[str, Any]:
        result: dict[str, Any] = {"result": 0, "description": "success", "type": "dryRun"}
        if any(control[0] == POST_READ_OID for control in controls or ()):
            shown = CaseInsensitiveDict(
                (name, values)
                for name, values in entry.items()
                if name.lower() not in _OPERATIONAL_NAMES
            )
            result["controls"] = {POST_READ_OID: {"value": {"result": shown}}}
        return result

    def _keep(self, dn: str, entry: Entry | None) -> None:
        """Remember the entry as planned: without the directory's own attributes, whose
        values a real write would change (a read of it in this request shows no version)."""
        if entry is not None:
            entry = CaseInsensitiveDict(
                (name, values)
                for name, values in entry.items()
                if name.lower() not in _OPERATIONAL_NAMES
            )
        self._request.entries[dn_key(dn)] = entry

    # ----------------------------------------------------------------- writes

    def add(
        self,
        connection: Any,
        dn: str,
        attributes: Mapping[str, Any],
        controls: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        """Plan an add; ``entryAlreadyExists`` when the entry is there."""
        if self._entry(connection, dn) is not None:
            raise _refused(ALREADY_EXISTS, dn, "addResponse")
        entry = CaseInsensitiveDict()
        body, comments = [], []
        for name, values in attributes.items():
            values = list(values) if isinstance(values, list | tuple) else [values]
            if name.lower() in self._passwords:
                comments.append(f"{name} is set here (value not shown)")
                continue
            entry[name] = values
            body += [ldif_line(name, value) for value in values]
        entry[self._id_attribute] = [self._new_id()]
        self._keep(dn, entry)
        self._record(change_record(dn, "add", body, comments))
        return self._answer(entry, controls)

    def modify(
        self, connection: Any, dn: str, changes: Changes, controls: Sequence[Any] | None = None
    ) -> dict[str, Any]:
        """Plan a modify; the directory's answer for a missing entry, a value already there
        (an add) or one that is not (a delete)."""
        entry = self._entry(connection, dn)
        if entry is None:
            raise _refused(NO_SUCH_OBJECT, dn, "modifyResponse")
        entry = CaseInsensitiveDict(entry)
        body, comments = [], []
        for name, operations in changes.items():
            for operation, values in operations:
                values = list(values)
                kind = _LDIF_OPERATIONS[MODIFY_OPERATIONS[operation]]
                if name.lower() in self._passwords:
                    comments.append(f"{name} is set here (value not shown)")
                    continue
                have = list(entry.get(name, []))
                if kind == "add":
                    if any(_same(v, h) for v in values for h in have):
                        raise _refused(VALUE_EXISTS, dn, "modifyResponse")
                    have += values
                elif kind == "delete":
                    if values and not all(any(_same(v, h) for h in have) for v in values):
                        raise _refused(NO_SUCH_ATTRIBUTE, dn, "modifyResponse")
                    if not values and not have:
                        raise _refused(NO_SUCH_ATTRIBUTE, dn, "modifyResponse")
                    have = [h for h in have if values and not any(_same(v, h) for v in values)]
                else:
                    have = values
                if have:
                    entry[name] = have
                elif name in entry:
                    del entry[name]
                body += [f"{kind}: {name}", *(ldif_line(name, v) for v in values), "-"]
        for object_class in entry.get("objectClass", []):
            required = _REQUIRED.get(str(object_class).lower())
            if required and not entry.get(required):
                raise _refused(OBJECT_CLASS_VIOLATION, dn, "modifyResponse")
        self._keep(dn, entry)
        self._record(change_record(dn, "modify", body, comments))
        return self._answer(entry, controls)

    def delete(self, connection: Any, dn: str) -> None:
        """Plan a delete; ``noSuchObject`` when the entry is not there."""
        if self._entry(connection, dn) is None:
            raise _refused(NO_SUCH_OBJECT, dn, "delResponse")
        self._keep(dn, None)
        self._record(change_record(dn, "delete"))

    def rename(self, connection: Any, dn: str, new_rdn: str) -> None:
        """Plan a modrdn that deletes the old RDN value; the entry moves to its new DN."""
        entry = self._entry(connection, dn)
        if entry is None:
            raise _refused(NO_SUCH_OBJECT, dn, "modDNResponse")
        new_dn = ",".join([new_rdn, *to_dn(dn)[1:]])
        if self._entry(connection, new_dn) is not None:
            raise _refused(ALREADY_EXISTS, new_dn, "modDNResponse")
        moved = CaseInsensitiveDict(entry)
        old_name, _, old_value = safe_rdn(dn)[0].partition("=")
        new_name, _, new_value = new_rdn.partition("=")
        moved[old_name] = [v for v in moved.get(old_name, []) if not _same(v, old_value)]
        moved[new_name] = [*moved.get(new_name, []), new_value]
        self._keep(dn, None)
        self._keep(new_dn, moved)
        body = [ldif_line("newrdn", new_rdn), "deleteoldrdn: 1"]
        self._record(change_record(dn, "modrdn", body))

    def password(self, dn: str) -> None:
        """Plan an RFC 3062 password change: a comment, never the value."""
        self._record(f"# the password of {dn} is set here (RFC 3062; value not shown)\n")
