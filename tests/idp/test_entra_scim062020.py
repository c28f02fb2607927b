"""Microsoft Entra ID with the 2020 PATCH behaviour (tenant URL flag ``aadOptscim062020``).

Follows Microsoft Learn, "Known issues and resolutions with SCIM 2.0 protocol compliance of
the Microsoft Entra user provisioning service", section "Flags to alter the SCIM behavior":
the samples "With feature flag" (lowercase ops, ``false`` as a JSON boolean, a path-less
replace whose value object has dotted and URN-prefixed keys, and member removal with
``members[value eq "id"]``); the flag itself travels in the tenant URL, a query parameter the
service ignores. The steps are in ``tests/data/idp/entra-scim062020.json``.
"""

import uuid

from replay import Replay

LOCKED = ["000001010000Z"]


def test_entra_with_the_2020_patch_behaviour(http, directory, run_id):
    replay = Replay(http, "entra-scim062020", run=run_id, probe=str(uuid.uuid4()))

    replay.through("replace multiple attributes: a filtered path, then a no-path replace")
    user = replay.variables["user"]
    entry = directory.user(user, "uid", "displayName", "givenName", "sn", "mail", "employeeNumber")
    assert entry["uid"] == [f"test_user_{run_id}@contoso.com"]
    assert entry["displayName"] == ["Bjfe"]
    assert (entry["givenName"], entry["sn"]) == (["Kkom"], ["Unua"])
    assert entry["mail"] == [f"TestMhvaes_{run_id}@test.microsoft.com"]
    assert entry["employeeNumber"] == ["Aklq"]

    replay.through("disable user with a real boolean")
    assert directory.user(user, "pwdAccountLockedTime")["pwdAccountLockedTime"] == LOCKED

    replay.through("enable user again")
    assert "pwdAccountLockedTime" not in directory.user(user, "pwdAccountLockedTime")

    replay.through("add member")
    group = replay.variables["group"]
    assert directory.members(group) == {directory.dn(user)}

    replay.rest()
    assert directory.members(group) == set()
