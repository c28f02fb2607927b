"""Okta provisioning (a SCIM 2.0 OIN integration), replayed on the real slapd.

Follows Okta Developer, "SCIM 2.0 Protocol Reference" (Okta and SCIM Version 2.0):
``userName eq`` lookups with ``startIndex=1&count=100``, user creation carrying Okta's
generated password, 409 for an existing user, retrieval and PUT for profile updates,
deactivation with a path-less ``{"active": false}``, group push, the group name update
(a path-less replace with ``id``; here a different name is 400 ``mutability``, the same name a
no-op), membership add/remove and full replace, paged group retrieval, the 404 error body, and
deactivation by PUT as App Integration Wizard (AIW) integrations send it; password sync by PATCH
as described in "Build a SCIM provisioning integration". The steps are in
``tests/data/idp/okta.json``.
"""

import uuid

from replay import Replay

LOCKED = ["000001010000Z"]


def test_okta(http, directory, run_id):
    replay = Replay(http, "okta", run=run_id, missing=str(uuid.uuid4()))

    replay.through("create the user")
    user = replay.variables["user"]
    entry = directory.user(user, "uid", "mail", "displayName", "scimExternalId", "userPassword")
    assert entry["uid"] == [f"test.user.{run_id}@okta.local"]
    assert entry["mail"] == [f"test.user.{run_id}@okta.local"]
    assert entry["displayName"] == ["Test User"]
    assert entry["scimExternalId"] == ["00ujl29u0le5T6Aj10h7"]
    assert not entry["userPassword"][0].startswith("1mz050nq")  # hashed by the directory
    assert directory.can_bind(user, "1mz050nq")

    replay.through("create the user again: 409")
    assert directory.user(user, "uid")["uid"] == [f"test.user.{run_id}@okta.local"]

    replay.through("update the user with PUT")
    assert directory.user(user, "givenName")["givenName"] == ["Another"]
    assert directory.can_bind(user, "1mz050nq")  # a PUT without password keeps it

    replay.through("sync the password")
    assert directory.can_bind(user, f"t1meMa$heen-{run_id}")
    assert not directory.can_bind(user, "1mz050nq")

    replay.through("deactivate the user")
    assert directory.user(user, "pwdAccountLockedTime")["pwdAccountLockedTime"] == LOCKED
    assert not directory.can_bind(user, f"t1meMa$heen-{run_id}")

    replay.through("reactivate the user")
    assert "pwdAccountLockedTime" not in directory.user(user, "pwdAccountLockedTime")
    assert directory.can_bind(user, f"t1meMa$heen-{run_id}")

    replay.through("deactivate with PUT (App Integration Wizard apps)")
    assert directory.user(user, "pwdAccountLockedTime")["pwdAccountLockedTime"] == LOCKED

    replay.through("reactivate with PUT")
    assert "pwdAccountLockedTime" not in directory.user(user, "pwdAccountLockedTime")
    assert directory.can_bind(user, f"t1meMa$heen-{run_id}")  # PUT without password keeps it

    replay.through("push the group")
    group = replay.variables["group"]
    other = replay.variables["other"]
    assert directory.members(group) == set()

    replay.through("membership: remove one, add one")
    assert directory.members(group) == {directory.dn(user)}

    replay.through("membership: full replace")
    assert directory.members(group) == {directory.dn(user), directory.dn(other)}

    replay.through("group rename with a path-less replace")
    renamed = directory.group(group, "cn", "displayName")
    assert renamed["cn"] == [f"Test SCIMv2 {run_id}"]
    assert renamed["displayName"] == [f"Test SCIMv20 {run_id}"]
    assert directory.group(f"Test SCIMv20 {run_id}") is None

    replay.rest()
    assert directory.members(group) == {directory.dn(user), directory.dn(other)}
