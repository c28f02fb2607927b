"""The service account is confined to the people and groups subtrees.

``test_slapd_launcher.py`` shows it cannot write the base entry, ``ou=people`` itself,
``ou=services`` or the placeholder, nor add entries elsewhere. This adds what that leaves
out: the password policy (which makes ``active=false`` an enforced disable), the service's
own entry, moving or renaming entries out of or over the subtrees, and deleting them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from ldap3 import BASE, MODIFY_ADD, MODIFY_DELETE, MODIFY_REPLACE, NONE, Connection, Server

from scim_core.testing.slapd import SlapdInstance

pytestmark = pytest.mark.slapd

INSUFFICIENT_ACCESS = 50
#: Attributes of the policy entry compared before and after the attempts.
POLICY_ATTRIBUTES = ["pwdLockout", "pwdMinLength", "pwdMaxFailure", "pwdCheckQuality"]


def bound(instance: SlapdInstance, dn: str, password: str) -> Connection:
    server = Server(instance.url, get_info=NONE, connect_timeout=5)
    connection = Connection(server, dn, password, receive_timeout=10)
    assert connection.bind(), connection.result
    return connection


@pytest.fixture
def service(slapd: SlapdInstance) -> Iterator[Connection]:
    connection = bound(slapd, slapd.service_dn, slapd.service_password)
    yield connection
    connection.unbind()


@pytest.fixture
def admin(slapd: SlapdInstance) -> Iterator[Connection]:
    connection = bound(slapd, slapd.admin_dn, slapd.admin_password)
    yield connection
    connection.unbind()


def snapshot(admin: Connection, dn: str, attributes: list[str]) -> dict[str, list[str]]:
    assert admin.search(dn, "(objectClass=*)", BASE, attributes=attributes), admin.result
    return {k: sorted(map(str, v)) for k, v in admin.response[0]["attributes"].items()}


def test_the_password_policy_is_out_of_reach(
    slapd: SlapdInstance, service: Connection, admin: Connection
) -> None:
    policy = slapd.policy_dn
    policies = policy.split(",", 1)[1]
    before = snapshot(admin, policy, POLICY_ATTRIBUTES)
    attempts = {
        "disable lockout": service.modify(policy, {"pwdLockout": [(MODIFY_REPLACE, ["FALSE"])]}),
        "weaken quality": service.modify(policy, {"pwdMinLength": [(MODIFY_REPLACE, ["1"])]}),
        "drop an attribute": service.modify(policy, {"pwdMaxFailure": [(MODIFY_DELETE, [])]}),
        "delete the policy": service.delete(policy),
        "rename the policy": service.modify_dn(policy, "cn=renamed"),
        "modify ou=policies": service.modify(policies, {"description": [(MODIFY_REPLACE, ["x"])]}),
        "add a policy": service.add(
            f"cn=weak-{uuid.uuid4().hex[:6]},{policies}",
            attributes={
                "objectClass": ["device", "pwdPolicy"],
                "cn": "weak",
                "pwdAttribute": "userPassword",
            },
        ),
    }
    assert not any(attempts.values()), attempts
    assert snapshot(admin, policy, POLICY_ATTRIBUTES) == before


def test_the_service_cannot_change_its_own_entry(slapd: SlapdInstance, service: Connection) -> None:
    own = slapd.service_dn
    attempts = {
        "description": service.modify(own, {"description": [(MODIFY_REPLACE, ["x"])]}),
        "password": service.modify(own, {"userPassword": [(MODIFY_REPLACE, ["new-pass-123"])]}),
        "password modify": service.extend.standard.modify_password(
            own, slapd.service_password, "new-pass-123"
        ),
        "lock itself": service.modify(
            own, {"pwdAccountLockedTime": [(MODIFY_ADD, ["000001010000Z"])]}
        ),
        "delete itself": service.delete(own),
    }
    assert not any(attempts.values()), attempts
    assert bound(slapd, own, slapd.service_password).unbind()


def test_entries_cannot_leave_or_replace_the_subtrees(
    slapd: SlapdInstance, service: Connection, admin: Connection
) -> None:
    uid = f"acl-move-{uuid.uuid4().hex[:8]}"
    dn = f"uid={uid},{slapd.users_base}"
    attributes = {
        "objectClass": ["inetOrgPerson"],
        "uid": uid,
        "cn": uid,
        "sn": uid,
        "givenName": uid,
        "mail": f"{uid}@example.org",
    }
    assert service.add(dn, attributes=attributes), service.result
    try:
        attempts = {
            "move to ou=services": service.modify_dn(
                dn, f"uid={uid}", new_superior=slapd.services_base
            ),
            "move to the base": service.modify_dn(dn, f"uid={uid}", new_superior=slapd.base_dn),
            "rename ou=people": service.modify_dn(slapd.users_base, "ou=elsewhere"),
            "delete ou=groups": service.delete(slapd.groups_base),
            "delete ou=services": service.delete(slapd.services_base),
        }
        assert not any(attempts.values()), attempts
        assert service.result["result"] == INSUFFICIENT_ACCESS
        # (Between people and groups it may move entries: both subtrees are its own.)
        # Still where it was.
        assert admin.search(dn, "(objectClass=*)", BASE, attributes=["uid"]), admin.result
    finally:
        assert service.delete(dn), service.result
