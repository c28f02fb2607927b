"""``scim-ldap check --write-test``: what the service account may write, proven with throwaways.

It makes, changes, disables, sets a password on and deletes a throwaway user, and makes,
changes and deletes a throwaway group, through the backend's own write paths
(:class:`~.backend.LdapBackend`), so each step proves what a request would do; a step the
account has no right to fails with the directory's answer, the rest are skipped, and whatever
was made is deleted again, also after a failure. The throwaway password never appears in a step.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final

from ldap3.core.exceptions import LDAPBindError, LDAPOperationResult

from scim_core.backend import Resource
from scim_core.backends.ldap import operations
from scim_core.backends.ldap.backend import LdapBackend
from scim_core.backends.ldap.connection import UNAVAILABLE, ConnectionFactory, failure_reason
from scim_core.checks import FAILED, OK, SKIPPED, Step
from scim_core.errors import ScimError
from scim_core.schemas.resources import USER_URN
from scim_core.secret import Secret

__all__ = ["Unexpected", "ldap_refusal", "write_steps"]


class Unexpected(Exception):
    """A write step's outcome is not what the service relies on."""


def ldap_refusal(error: BaseException) -> str:
    """What the directory answered behind a failed step: the LDAP result's name and code
    where there is one (the plugin's SCIM errors keep it as their context), else the
    error's own words."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, LDAPOperationResult):
            return f"{seen.description} ({seen.result})"
        seen = seen.__cause__ or seen.__context__
    if isinstance(error, ScimError):
        return error.detail
    if isinstance(error, Unexpected):
        return str(error)
    return failure_reason(error)


_PASSWORD_SYMBOLS: Final = "#%!"


def _throwaway_password() -> Secret:
    """A random password of lower- and upper-case letters, each followed by a symbol.

    389-DS and AD refuse a password holding any three characters in a row of the user's
    names (uid, cn, givenName, mail, ...). Those names are letters, digits, ``-``, ``.``,
    ``@`` and spaces, and every three characters in a row here hold a symbol, so no draw
    is refused for them (a run of letters was, now and then: "ght" of "Preflight").
    """
    letters = [secrets.choice(string.ascii_lowercase) for _ in range(8)]
    letters += [secrets.choice(string.ascii_uppercase) for _ in range(8)]
    return Secret("".join(letter + secrets.choice(_PASSWORD_SYMBOLS) for letter in letters))


_REFUSED: Final = (ScimError, LDAPOperationResult, Unexpected, *UNAVAILABLE)


@dataclass
class _Throwaways:
    """What the write test made and has not deleted yet."""

    user: Resource | None = None
    group: str | None = None
    steps: list[Step] = field(default_factory=list)

    def step(self, name: str, action: Callable[[], Any], detail: str) -> bool:
        """Run one write; record it; whether it succeeded."""
        if any(step.failed for step in self.steps):
            self.steps.append(Step(name, SKIPPED, "an earlier step failed"))
            return False
        try:
            action()
        except _REFUSED as error:
            self.steps.append(Step(name, FAILED, ldap_refusal(error)))
            return False
        self.steps.append(Step(name, OK, detail))
        return True


def write_steps(backend: LdapBackend) -> list[Step]:
    """The write test's steps, run in order, and a clean-up step if anything is left."""
    tag = secrets.token_hex(3)
    user_name, group_name = f"scim-check-{tag}", f"scim-check-g-{tag}"
    made = _Throwaways()
    password = _throwaway_password()

    def create_user() -> None:
        made.user = backend.create_user(
            {
                "schemas": [USER_URN],
                "userName": user_name,
                "name": {"givenName": "Preflight", "familyName": "Check"},
                "emails": [{"value": f"{user_name}@example.invalid", "primary": True}],
                "active": True,
            },
            None,
        )

    def update(**changes: Any) -> Callable[[], None]:
        def action() -> None:
            assert made.user is not None
            password = changes.pop("password", None)
            made.user = backend.update_user(
                made.user["id"], made.user, {**made.user, **changes}, password
            )

        return action

    def create_group() -> None:
        made.group = backend.create_group({"displayName": group_name})["id"]

    def cannot_bind() -> None:
        dn = backend.user_dn(backend.users.uid(user_name))
        as_user = replace(backend.settings, bind_dn=dn, bind_password=password.reveal())
        try:
            with ConnectionFactory(as_user).fresh():
                pass
        except LDAPBindError:
            return
        raise Unexpected("the disabled user could bind with its new password")

    def add_member() -> None:
        assert made.user is not None and made.group is not None
        backend.change_members(made.group, add=[made.user["id"]])

    steps = (
        (
            "write: create user",
            create_user,
            f"made {user_name} in {backend.settings.new_users_base}",
        ),
        ("write: modify user", update(title="Preflight"), "title set"),
        ("write: disable user", update(active=False), "active=false written"),
        ("write: set password", update(password=password), "a random password set"),
        ("bind as disabled user", cannot_bind, "refused, as it must be"),
        (
            "write: create group",
            create_group,
            f"made {group_name} in {backend.settings.new_groups_base}",
        ),
        ("write: modify group", add_member, "the throwaway user added as a member"),
        ("write: delete group", lambda: _delete_group(backend, made), "deleted"),
        ("write: delete user", lambda: _delete_user(backend, made), "deleted"),
    )
    try:
        for name, action, detail in steps:
            made.step(name, action, detail)
    finally:
        made.steps += _clean_up(backend, made)
    return made.steps


def _delete_group(backend: LdapBackend, made: _Throwaways) -> None:
    """Delete the throwaway group (the service never deletes one; a plain delete of its DN)."""
    dn = backend.group_dn(str(made.group))
    if dn is not None:
        backend.connections.run(lambda connection: operations.delete(connection, dn), retry=False)
    made.group = None


def _delete_user(backend: LdapBackend, made: _Throwaways) -> None:
    assert made.user is not None
    backend.delete_user(made.user["id"])
    made.user = None


def _clean_up(backend: LdapBackend, made: _Throwaways) -> list[Step]:
    """Delete what a failed step left; name what cannot be deleted."""
    left = []
    for what, delete, name in (
        ("group", _delete_group, made.group),
        ("user", _delete_user, made.user and made.user["userName"]),
    ):
        if name is None:
            continue
        try:
            delete(backend, made)
        except _REFUSED as error:
            left.append(f"the {what} {name} ({ldap_refusal(error)}): delete it by hand")
    if left:
        return [Step("write: clean up", FAILED, "left behind: " + "; ".join(left))]
    return []
