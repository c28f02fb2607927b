"""The 389-DS VLV index LDIF for the service's settings (pure; it is loaded into a real 389-DS
and used there in tests/integration/test_vlv_indexes_389ds.py)."""

import base64

import pytest

from scim_core.backends.ldap.settings import LdapSettings
from scim_core.backends.ldap.vlv_indexes import REINDEX_TASK_DN, vlv_index_ldif

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
