"""Dry run: every write planned against the directory as it is, written as LDIF, never sent.

With ``SCIM_LDAP_DRY_RUN`` the plugin's writes (add, modify, delete, rename, password) stop at
:class:`Planner`. It reads the entry a write concerns from the directory (reads stay live),
applies the write to that copy in memory (:mod:`~.planned`), answers the service as the
directory would (the post-read entry, ``noSuchObject``, ``entryAlreadyExists``,
``attributeOrValueExists``), and records the write as an RFC 2849 change record
(:mod:`~.ldif`). The copies live for one SCIM request on one
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

import fcntl
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ldap3 import BASE
from ldap3.core.exceptions import LDAPOperationResult
from ldap3.utils.ciDict import CaseInsensitiveDict

from scim_core.backends.ldap import wire
from scim_core.backends.ldap.ldif import change_record
from scim_core.backends.ldap.planned import (
    Changes,
    Entry,
    added,
    answer,
    modified,
    refusal,
    renamed,
    renamed_dn,
    without_operational,
)
from scim_core.backends.ldap.results import ALREADY_EXISTS, NO_SUCH_OBJECT
from scim_core.backends.ldap.values import dn_key

__all__ = ["Planner"]

log = logging.getLogger("scim.dryrun")


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
        self._passwords = frozenset(name.lower() for name in password_attributes)
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

    def _keep(self, dn: str, entry: Entry | None) -> None:
        """Remember the entry as planned: without the directory's own attributes, whose
        values a real write would change (a read of it in this request shows no version)."""
        self._request.entries[dn_key(dn)] = None if entry is None else without_operational(entry)

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
            raise refusal(ALREADY_EXISTS, dn, "addResponse")
        entry, record = added(dn, attributes, self._passwords)
        entry[self._id_attribute] = [self._new_id()]
        self._keep(dn, entry)
        self._record(record)
        return answer(entry, controls)

    def modify(
        self, connection: Any, dn: str, changes: Changes, controls: Sequence[Any] | None = None
    ) -> dict[str, Any]:
        """Plan a modify; the directory's answer for a missing entry, a value already there
        (an add) or one that is not (a delete): :func:`~.planned.modified`."""
        entry = self._entry(connection, dn)
        if entry is None:
            raise refusal(NO_SUCH_OBJECT, dn, "modifyResponse")
        entry, record = modified(dn, entry, changes, self._passwords)
        self._keep(dn, entry)
        self._record(record)
        return answer(entry, controls)

    def delete(self, connection: Any, dn: str) -> None:
        """Plan a delete; ``noSuchObject`` when the entry is not there."""
        if self._entry(connection, dn) is None:
            raise refusal(NO_SUCH_OBJECT, dn, "delResponse")
        self._keep(dn, None)
        self._record(change_record(dn, "delete"))

    def rename(self, connection: Any, dn: str, new_rdn: str) -> None:
        """Plan a modrdn that deletes the old RDN value; the entry moves to its new DN."""
        entry = self._entry(connection, dn)
        if entry is None:
            raise refusal(NO_SUCH_OBJECT, dn, "modDNResponse")
        new_dn = renamed_dn(dn, new_rdn)
        if self._entry(connection, new_dn) is not None:
            raise refusal(ALREADY_EXISTS, new_dn, "modDNResponse")
        moved, record = renamed(dn, entry, new_rdn)
        self._keep(dn, None)
        self._keep(new_dn, moved)
        self._record(record)

    def password(self, dn: str) -> None:
        """Plan an RFC 3062 password change: a comment, never the value."""
        self._record(f"# the password of {dn} is set here (RFC 3062; value not shown)\n")
