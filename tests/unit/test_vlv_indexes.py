"""The 389-DS VLV index LDIF for the service's settings, and ``scim-ldap check``'s report on
the indexes a directory has (pure; the LDIF is loaded into a real 389-DS and used there, and
the check run against it, in tests/integration/test_vlv_indexes_389ds.py)."""

import base64

import pytest

from scim_core.backends.ldap.settings import LdapSettings
from scim_core.backends.ldap.vlv_indexes import (
    REINDEX_TASK_DN,
    VLV_ATTRIBUTES,
    VLV_CONFIGURATION,
    vlv_index_ldif,
    vlv_index_report,
)
from scim_core.checks import OK, WARNING, Step

ACCOUNT = "uid=scim,ou=services,dc=example,dc=org"


def settings(**changes: str) -> LdapSettings:
    values = {
        "SCIM_LDAP_URL": "ldaps://ds.example.org",
        "SCIM_LDAP_BIND_DN": ACCOUNT,
        "SCIM_LDAP_BIND_PASSWORD": "x",
        "SCIM_LDAP_USERS_BASE": "ou=people,dc=example,dc=org",
        "SCIM_LDAP_GROUPS_BASE": "ou=groups,dc=example,dc=org",
        "SCIM_LDAP_DIALECT": "389ds",
        **changes,
    }
    return LdapSettings.from_environ(values)


def records(ldif: str) -> dict[str, dict[str, list[str]]]:
    """dn -> attribute -> values, base64 values decoded, comments skipped."""
    found: dict[str, dict[str, list[str]]] = {}
    for block in ldif.split("\n\n"):
        pairs = []
        for line in block.splitlines():
            if line.startswith("#") or not line:
                continue
            name, _, value = line.partition(":")
            if value.startswith(":"):
                value = base64.b64decode(value[1:].strip()).decode()
            pairs.append((name, value.strip()))
        if pairs:
            (_, dn), *rest = pairs
            entry = found.setdefault(dn, {})
            for name, value in rest:
                entry.setdefault(name, []).append(value)
    return found


def test_one_search_per_base_with_an_index_per_list_order():
    found = records(vlv_index_ldif(settings()))
    parent = "cn=userRoot,cn=ldbm database,cn=plugins,cn=config"
    users, groups = found[f"cn=scim users,{parent}"], found[f"cn=scim groups,{parent}"]
    assert users["vlvBase"] == ["ou=people,dc=example,dc=org"] and users["vlvScope"] == ["1"]
    assert users["vlvFilter"] == ["(&(|(objectClass=inetOrgPerson)(objectClass=nsPerson)))"]
    assert groups["vlvFilter"] == ["(&(objectClass=groupOfNames))"]
    assert 'userdn="ldap:///all"' in users["aci"][0]
    sorts = {dn: e["vlvSort"][0] for dn, e in found.items() if "vlvSort" in e}
    assert sorts == {
        f"cn=scim users by uid,cn=scim users,{parent}": "uid",
        f"cn=scim users by nsUniqueId,cn=scim users,{parent}": "nsUniqueId",
        f"cn=scim groups by cn,cn=scim groups,{parent}": "cn",
    }
    task = found[REINDEX_TASK_DN]
    assert task["nsInstance"] == ["userRoot"]
    assert task["nsIndexVLVAttribute"] == [
        "scim users by uid",
        "scim users by nsUniqueId",
        "scim groups by cn",
    ]


ACI = (
    'aci: (targetattr="*")(version 3.0; acl "VLV index of the SCIM service\'s lists"; '
    'allow (read, search, compare) userdn="ldap:///all";)'
)
STAFF = "cn=staff,cn=ldbm database,cn=plugins,cn=config"


def test_the_ldif_as_printed_for_ldapadd():
    assert (
        vlv_index_ldif(settings(), backend="staff")
        == f"""\
# VLV indexes for the SCIM service's list searches on 389 Directory Server, for its
# bases and scopes as configured (SCIM_LDAP_*). Add it as the Directory Manager once
# the bases exist (ldapadd -x -D 'cn=Directory Manager' -W -H ldap://HOST -f vlv.ldif);
# its last entry starts the task that builds the indexes. Then
# `dsconf INSTANCE backend vlv-index list staff` shows vlvEnabled: 1 for each.

dn: cn=scim users,{STAFF}
objectClass: top
objectClass: vlvSearch
cn: scim users
vlvBase: ou=people,dc=example,dc=org
vlvScope: 1
vlvFilter: (&(|(objectClass=inetOrgPerson)(objectClass=nsPerson)))
{ACI}

dn: cn=scim users by uid,cn=scim users,{STAFF}
objectClass: top
objectClass: vlvIndex
cn: scim users by uid
vlvSort: uid

dn: cn=scim users by nsUniqueId,cn=scim users,{STAFF}
objectClass: top
objectClass: vlvIndex
cn: scim users by nsUniqueId
vlvSort: nsUniqueId

dn: cn=scim groups,{STAFF}
objectClass: top
objectClass: vlvSearch
cn: scim groups
vlvBase: ou=groups,dc=example,dc=org
vlvScope: 1
vlvFilter: (&(objectClass=groupOfNames))
{ACI}

dn: cn=scim groups by cn,cn=scim groups,{STAFF}
objectClass: top
objectClass: vlvIndex
cn: scim groups by cn
vlvSort: cn

dn: {REINDEX_TASK_DN}
objectClass: top
objectClass: extensibleObject
cn: scim-ldap vlv indexes
nsInstance: staff
nsIndexVLVAttribute: scim users by uid
nsIndexVLVAttribute: scim users by nsUniqueId
nsIndexVLVAttribute: scim groups by cn
"""
    )


def test_several_bases_a_subtree_scope_another_backend_and_a_non_ascii_base():
    found = records(
        vlv_index_ldif(
            settings(
                SCIM_LDAP_USERS_BASE="ou=people,dc=example,dc=org;ou=Zürich,dc=example,dc=org",
                SCIM_LDAP_USERS_SCOPE="sub",
            ),
            backend="people",
        )
    )
    parent = "cn=people,cn=ldbm database,cn=plugins,cn=config"
    first, second = found[f"cn=scim users 1,{parent}"], found[f"cn=scim users 2,{parent}"]
    assert second["vlvBase"] == ["ou=Zürich,dc=example,dc=org"]
    assert first["vlvScope"] == second["vlvScope"] == ["2"]
    assert found[f"cn=scim groups,{parent}"]["vlvScope"] == ["1"]
    assert "scim users 2 by nsUniqueId" in found[REINDEX_TASK_DN]["nsIndexVLVAttribute"]


@pytest.mark.parametrize("dialect", ["openldap", "ad"])
def test_only_389ds_has_vlv_indexes(dialect):
    with pytest.raises(ValueError, match="389-DS"):
        vlv_index_ldif(settings(SCIM_LDAP_DIALECT=dialect))


def test_the_command_prints_them_for_the_environment_and_refuses_other_directories(
    capsys, monkeypatch
):
    from scim_flask.cli import main

    environment = {
        "SCIM_LDAP_URL": "ldaps://ds.example.org",
        "SCIM_LDAP_BIND_DN": ACCOUNT,
        "SCIM_LDAP_BIND_PASSWORD": "x",
        "SCIM_LDAP_USERS_BASE": "ou=staff,dc=example,dc=org",
        "SCIM_LDAP_GROUPS_BASE": "ou=teams,dc=example,dc=org",
    }
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert main(["schema", "--dialect", "389ds", "--vlv-indexes", "--backend", "staff"]) == 0
    printed = records(capsys.readouterr().out)
    assert printed["cn=scim users,cn=staff,cn=ldbm database,cn=plugins,cn=config"]["vlvBase"] == [
        "ou=staff,dc=example,dc=org"
    ]
    assert main(["schema", "--dialect", "openldap", "--vlv-indexes"]) == 2
    assert "389-DS" in capsys.readouterr().err
    monkeypatch.delenv("SCIM_LDAP_USERS_BASE")
    assert main(["schema", "--dialect", "389ds", "--vlv-indexes"]) == 2
    assert "SCIM_LDAP_USERS_BASE" in capsys.readouterr().err


# ------------------------------------------------------------------ the check's report

PEOPLE, TEAMS = "ou=people,dc=example,dc=org", "ou=groups,dc=example,dc=org"
USERS_FILTER = "(&(|(objectClass=inetOrgPerson)(objectClass=nsPerson)))"
ROOT = f"cn=userRoot,{VLV_CONFIGURATION}"
SORTING = (
    ": those lists sort every match on every page; "
    "`scim-ldap schema --dialect 389ds --vlv-indexes` prints them"
)


def search_entry(dn: str, **attributes: str) -> dict:
    """An entry as the check's subtree search returns it."""
    return {
        "type": "searchResEntry",
        "dn": dn,
        "attributes": {a: [v] for a, v in attributes.items()},
    }


def built(of: LdapSettings) -> list[dict]:
    """The entries the printed LDIF adds, as the check reads them once every index is built."""
    entries = []
    for dn, entry in records(vlv_index_ldif(of)).items():
        if dn == REINDEX_TASK_DN:
            continue
        read = {a: v[0] for a, v in entry.items() if a in VLV_ATTRIBUTES}
        if "vlvSort" in read:
            read["vlvEnabled"] = "1"
        entries.append(search_entry(dn, **read))
    return entries


def warning(detail: str) -> list[Step]:
    return [Step("VLV indexes", WARNING, detail + SORTING)]


EVERY_INDEX = [Step("VLV indexes", OK, "every list without a filter reads its index")]


def test_every_index_there_and_built_is_one_ok_line():
    assert vlv_index_report(settings(), built(settings())) == EVERY_INDEX


def test_the_entries_may_come_as_a_search_streams_them():
    assert vlv_index_report(settings(), iter(built(settings()))) == EVERY_INDEX


def test_a_missing_index_is_a_warning_naming_it_and_its_base():
    entries = [e for e in built(settings()) if "by nsUniqueId" not in e["dn"]]
    assert vlv_index_report(settings(), entries) == warning(
        f"missing: scim users by nsUniqueId ({PEOPLE})"
    )


def test_an_index_not_built_yet_is_a_warning_naming_it():
    entries = built(settings())
    for entry in entries:
        if entry["dn"].startswith("cn=scim groups by cn,"):
            entry["attributes"]["vlvEnabled"] = ["0"]
        if entry["dn"].startswith("cn=scim users by uid,"):
            del entry["attributes"]["vlvEnabled"]
    assert vlv_index_report(settings(), entries) == warning(
        f"not built: scim users by uid ({PEOPLE}), scim groups by cn ({TEAMS})"
    )


def test_missing_and_unbuilt_indexes_are_both_named():
    entries = [e for e in built(settings()) if not e["dn"].startswith("cn=scim users by uid,")]
    for entry in entries:
        if entry["dn"].startswith("cn=scim groups by cn,"):
            entry["attributes"]["vlvEnabled"] = ["0"]
    assert vlv_index_report(settings(), entries) == warning(
        f"missing: scim users by uid ({PEOPLE}); not built: scim groups by cn ({TEAMS})"
    )


def test_nothing_readable_is_every_index_missing():
    assert vlv_index_report(settings(), []) == warning(
        f"missing: scim users by uid ({PEOPLE}), scim users by nsUniqueId ({PEOPLE}), "
        f"scim groups by cn ({TEAMS})"
    )


@pytest.mark.parametrize("dialect", ["openldap", "ad"])
def test_other_directories_have_no_line(dialect):
    assert vlv_index_report(settings(SCIM_LDAP_DIALECT=dialect), built(settings())) == []
    assert vlv_index_report(settings(SCIM_LDAP_DIALECT=dialect), []) == []


def test_base_filter_sort_and_names_are_compared_case_aside_as_389ds_does():
    entries = [
        search_entry(
            "CN=Scim Users,CN=UserRoot,CN=LDBM Database,CN=Plugins,CN=Config",
            vlvBase="OU=People,DC=Example,DC=Org",
            vlvScope=" 1 ",
            vlvFilter=USERS_FILTER.upper(),
        ),
        search_entry(
            "cn=SCIM users by UID,cn=Scim Users,cn=userroot,cn=ldbm database,cn=plugins,cn=config",
            vlvSort="UID",
            vlvEnabled="1 ",
        ),
        search_entry(f"cn=by id,cn=scim users,{ROOT}", vlvSort="NSUNIQUEID", vlvEnabled="1"),
        *(e for e in built(settings()) if "groups" in e["dn"]),
    ]
    assert vlv_index_report(settings(), entries) == EVERY_INDEX


def test_the_index_must_be_under_the_search_serving_that_base_scope_and_filter():
    searches = {
        "another base": {
            "vlvBase": "ou=staff,dc=example,dc=org",
            "vlvScope": "1",
            "vlvFilter": USERS_FILTER,
        },
        "another scope": {"vlvBase": PEOPLE, "vlvScope": "2", "vlvFilter": USERS_FILTER},
        "another filter": {
            "vlvBase": PEOPLE,
            "vlvScope": "1",
            "vlvFilter": "(&(|(objectClass=nsPerson)(objectClass=inetOrgPerson)))",
        },
    }
    for why, search in searches.items():
        entries = [
            search_entry(f"cn=scim users,{ROOT}", **search),
            search_entry(
                f"cn=scim users by uid,cn=scim users,{ROOT}", vlvSort="uid", vlvEnabled="1"
            ),
            *(e for e in built(settings()) if "groups" in e["dn"]),
        ]
        assert vlv_index_report(settings(), entries) == warning(
            f"missing: scim users by uid ({PEOPLE}), scim users by nsUniqueId ({PEOPLE})"
        ), why


def test_an_index_sorting_by_another_attribute_or_under_another_search_is_not_it():
    entries = [
        *built(settings()),
        search_entry(f"cn=elsewhere,{ROOT}", vlvBase=TEAMS, vlvScope="1", vlvFilter="(cn=x)"),
    ]
    for entry in entries:
        if entry["dn"].startswith("cn=scim users by uid,"):
            entry["attributes"]["vlvSort"] = ["cn"]
        if entry["dn"].startswith("cn=scim groups by cn,"):
            entry["dn"] = f"cn=scim groups by cn,cn=elsewhere,{ROOT}"
    assert vlv_index_report(settings(), entries) == warning(
        f"missing: scim users by uid ({PEOPLE}), scim groups by cn ({TEAMS})"
    )


def test_a_subtree_scope_is_389ds_scope_two_and_one_level_is_one():
    subtree = settings(SCIM_LDAP_USERS_SCOPE="sub", SCIM_LDAP_GROUPS_SCOPE="one")
    entries = built(subtree)
    scopes = {
        e["dn"]: e["attributes"]["vlvScope"] for e in entries if "vlvScope" in e["attributes"]
    }
    assert scopes == {f"cn=scim users,{ROOT}": ["2"], f"cn=scim groups,{ROOT}": ["1"]}
    assert vlv_index_report(subtree, entries) == EVERY_INDEX
    assert vlv_index_report(settings(), entries) == warning(
        f"missing: scim users by uid ({PEOPLE}), scim users by nsUniqueId ({PEOPLE})"
    )


def test_each_of_several_bases_needs_its_own_indexes():
    several = settings(SCIM_LDAP_USERS_BASE=f"{PEOPLE};ou=Zürich,dc=example,dc=org")
    entries = [e for e in built(several) if "scim users 2" not in e["dn"]]
    assert vlv_index_report(several, entries) == warning(
        "missing: scim users 2 by uid (ou=Zürich,dc=example,dc=org), "
        "scim users 2 by nsUniqueId (ou=Zürich,dc=example,dc=org)"
    )
    assert vlv_index_report(several, built(several)) == EVERY_INDEX
