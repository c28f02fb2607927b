"""Microsoft Entra ID provisioning, default PATCH behaviour, replayed on the real slapd.

Follows Microsoft Learn, "Tutorial: Develop and plan provisioning for a SCIM endpoint in
Microsoft Entra ID" (section "SCIM protocol requests and responses": test connection with a
random GUID, create/get/query/update/disable/delete user, create/get/query/update/delete
group) and "Known issues and resolutions with SCIM 2.0 protocol compliance of the Microsoft
Entra user provisioning service" (the samples "Without feature flag": capitalised ops,
``"False"`` as a string, one operation per attribute, member removal by a value list).
The steps are in ``tests/data/idp/entra-default.json``.
"""

import uuid

from replay import Replay

LOCKED = ["000001010000Z"]


def test_entra_default_mode(http, directory, run_id):
    replay = Replay(http, "entra-default", run=run_id, probe=str(uuid.uuid4()))

    replay.through("create user")
    user = replay.variables["user"]
    entry = directory.user(
        user,
        "uid",
        "scimUserName",
        "mail",
        "givenName",
        "sn",
        "cn",
        "scimExternalId",
        "pwdAccountLockedTime",
    )
    assert entry is not None
    # The uid is the normalized form; the userName is kept as Entra wrote it.
    assert entry["uid"] == [f"test_user_{run_id}"]
    assert entry["scimUserName"] == [f"Test_User_{run_id}"]
    assert entry["mail"] == [f"Test_User_{run_id}@testuser.com"]
    assert (entry["givenName"], entry["sn"]) == (["givenName"], ["familyName"])
    assert entry["cn"] == ["givenName familyName"]
    assert entry["scimExternalId"] == [f"0a21f0f2-8d2a-4f8e-bf98-{run_id}"]
    assert "pwdAccountLockedTime" not in entry

    replay.through("update user: multi-valued properties")
    entry = directory.user(user, "mail", "sn")
    assert entry["mail"] == [f"updated_{run_id}@microsoft.com"]
    assert entry["sn"] == ["updatedFamilyName"]

    replay.through("the same PATCH again changes nothing")
    entry = directory.user(
        user, "displayName", "mail", "givenName", "sn", "scimExternalId", "employeeNumber"
    )
    assert entry["displayName"] == ["Pvlo"]
    assert entry["mail"] == [f"TestBcwqnm_{run_id}@test.microsoft.com"]
    assert (entry["givenName"], entry["sn"]) == (["Gtfd"], ["Pkqf"])
    assert entry["scimExternalId"] == ["Eqpj"]
    assert entry["employeeNumber"] == ["Eqpj"]

    replay.through("add a single-value attribute (kept: every profile maps nickName)")
    assert directory.user(user, "scimNickName")["scimNickName"] == ["Babs"]

    replay.through("enterprise employeeNumber and manager")
    manager = replay.variables["manager"]
    entry = directory.user(user, "employeeNumber", "manager")
    assert entry["employeeNumber"] == ["701984"]
    assert [dn.lower() for dn in entry["manager"]] == [directory.dn(manager)]

    replay.through("disable user")
    assert directory.user(user, "pwdAccountLockedTime")["pwdAccountLockedTime"] == LOCKED

    replay.through("create group")
    group = replay.variables["group"]
    assert directory.group(group, "cn")["cn"] == [f"Entra Group {run_id}"]
    assert directory.members(group) == set()

    replay.through("update group: add members")
    assert directory.members(group) == {directory.dn(user), directory.dn(manager)}

    replay.through("update group: non-member attributes (a rename)")
    renamed = directory.group(group, "cn", "displayName")
    assert renamed["displayName"] == [f"1879db59-3bdf-4490-ad68-{run_id}updatedDisplayName"]
    assert directory.members(group) == {directory.dn(user), directory.dn(manager)}

    replay.through("update group: remove members")
    assert directory.members(group) == {directory.dn(user)}

    replay.through("delete group")
    assert directory.members(group) == {directory.dn(user)}  # 501: untouched

    replay.rest()
    assert directory.user(user) is None
    assert directory.members(group) == set()  # the deleted user left the group
