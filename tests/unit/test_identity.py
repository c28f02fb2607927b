"""Naming a directory from its rootDSE: the edges of what it reads (pure, no directory)."""

from __future__ import annotations

import pytest

from scim_core.backends.ldap.identity import IDENTITY_ATTRIBUTES, identify, root_values

AD_CAPABILITY = "1.2.840.113556.1.4.800"


def test_values_are_read_in_any_case_as_text() -> None:
    entry = {"VENDORname": ["Example", 7], "empty": None}
    assert root_values(entry, "vendorName") == ["Example", "7"]
    assert root_values(entry, "empty") == [] and root_values(entry, "absent") == []
    assert identify({"OBJECTCLASS": ["openLDAProotDSE"]}).profile == "openldap"
    assert "supportedCapabilities" in IDENTITY_ATTRIBUTES and "vendorName" in IDENTITY_ATTRIBUTES


@pytest.mark.parametrize(
    ("versions", "expected"),
    [
        (["release 7", "389-Directory/2.3.1 B2023"], "2.3.1"),  # a number alone is no version
        (["389-Directory"], None),
        ([], None),
    ],
)
def test_the_version_is_the_first_dotted_number(versions, expected) -> None:
    identity = identify({"vendorName": ["389 Project"], "vendorVersion": versions})
    assert (identity.name, identity.version) == ("389-DS", expected)


def test_389_is_recognised_by_its_version_alone() -> None:
    assert identify({"vendorVersion": ["389-Directory/3.0.4"]}).profile == "389ds"
    assert identify({"vendorName": ["Project 38 9"]}).profile is None


@pytest.mark.parametrize(
    ("level", "version"),
    [
        ("0", "functional level Windows Server 2000"),
        ("10", "functional level Windows Server 2025"),
        ("8", None),  # a level this table does not know yet
        (None, None),
    ],
)
def test_active_directory_tells_its_functional_level(level, version) -> None:
    root_dse = {"supportedCapabilities": ["1.2.3", AD_CAPABILITY]}
    if level is not None:
        root_dse["domainControllerFunctionality"] = [level, "7"]
    identity = identify(root_dse)
    assert (identity.name, identity.profile, identity.version) == (
        "Active Directory",
        "ad",
        version,
    )


def test_samba_says_its_own_version_first() -> None:
    root_dse = {
        "supportedCapabilities": [AD_CAPABILITY],
        "domainControllerFunctionality": ["4"],
        "vendorName": ["The", "SAMBA Team"],
        "vendorVersion": ["4.19.5-Ubuntu"],
    }
    identity = identify(root_dse)
    assert (identity.name, identity.version) == ("Active Directory (Samba)", "4.19.5")
    assert str(identity) == "Active Directory (Samba) 4.19.5"


def test_active_directory_is_tried_before_the_vendor_s_name() -> None:
    # A server that says 389 and has the AD capability is an AD domain controller.
    root_dse = {"supportedCapabilities": [AD_CAPABILITY], "vendorName": ["389 Project"]}
    assert identify(root_dse).profile == "ad"
    openldap_too = {"objectClass": ["OpenLDAProotDSE"], "vendorName": ["389 Project"]}
    assert identify(openldap_too).profile == "389ds"


def test_openldap_s_version_comes_from_the_monitor_only() -> None:
    root_dse = {"objectClass": ["top", "OpenLDAProotDSE"], "vendorVersion": ["9.9.9"]}
    assert identify(root_dse).version is None
    assert identify(root_dse, "slapd 2.6.7 (Jan 1 2024)").version == "2.6.7"
    assert identify(root_dse, "").version is None


def test_an_unknown_directory_is_named_by_its_vendor() -> None:
    identity = identify({"vendorName": ["Example", "Corp"], "vendorVersion": ["v 1.2"]})
    assert (identity.name, identity.profile, identity.version) == ("Example Corp", None, "1.2")
    assert str(identify({})) == "unknown (version unknown)"
