"""authentik's outgoing SCIM provider, replayed on the real slapd.

Follows the authentik documentation of the SCIM provider and its client code
(``authentik/providers/scim/clients/``): it reads ``/ServiceProviderConfig`` first (PATCH and
filter support decide its strategy), creates users with the default property mapping and
updates them with PUT, creates
groups and pushes membership with ``add``/``remove`` operations on ``members`` (one PATCH,
since ``bulk.maxOperations`` is 0), and after a 409 on group creation looks the group up with
``displayName eq``. The steps are in ``tests/data/idp/authentik.json``.
"""

from replay import Replay


def test_authentik(http, directory, run_id):
    replay = Replay(http, "authentik", run=run_id)

    replay.through("create a second user")
    admin, jane = replay.variables["admin"], replay.variables["jane"]
    entry = directory.user(admin, "uid", "cn", "givenName", "sn", "mail")
    assert entry["uid"] == [f"akadmin-{run_id}"]
    assert entry["cn"] == ["authentik Default Admin"]
    assert (entry["givenName"], entry["sn"]) == (["authentik"], ["Default Admin"])
    assert entry["mail"] == [f"akadmin-{run_id}@example.com"]

    replay.through("update a user with PUT")
    assert directory.user(jane, "sn", "cn")["sn"] == ["Roe"]
    assert directory.user(jane, "cn")["cn"] == ["Jane Roe"]

    replay.through("add the members, batched")
    group = replay.variables["group"]
    assert directory.members(group) == {directory.dn(admin), directory.dn(jane)}

    replay.through("remove a member")
    assert directory.members(group) == {directory.dn(admin)}

    replay.through("update the group with a path-less replace")
    assert directory.members(group) == {directory.dn(admin)}

    replay.rest()
    assert directory.members(group) == {directory.dn(admin)}
