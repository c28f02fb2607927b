"""What each directory's rootDSE offers, read as the LDAP plugin reads it (attribute names in
the case each server writes them, values as ldap3 returns them)."""

from __future__ import annotations

from scim_core.backends.ldap.capabilities import (
    ASSERTION,
    PASSWORD_MODIFY,
    POST_READ,
    ROOT_DSE_ATTRIBUTES,
    SORT,
    VALUES_RETURN_FILTER,
    VLV,
    WHO_AM_I,
    Capabilities,
)

OPENLDAP = {
    "supportedControl": [ASSERTION, VALUES_RETURN_FILTER, POST_READ, SORT, VLV],
    "supportedExtension": [WHO_AM_I, PASSWORD_MODIFY],
    "namingContexts": ["dc=example,dc=org", "dc=other,dc=test"],
}
ACTIVE_DIRECTORY = {
    "supportedcontrol": ["1.2.840.113556.1.4.319", SORT, VLV],
    "SUPPORTEDEXTENSION": ["1.3.6.1.4.1.1466.20037", WHO_AM_I],
    "namingcontexts": ["DC=example,DC=org", "CN=Configuration,DC=example,DC=org"],
    "defaultNamingContext": ["DC=example,DC=org"],
}


def test_the_rootdse_attributes_asked_for_are_those_read() -> None:
    assert {name.lower() for name in ROOT_DSE_ATTRIBUTES} == {
        "supportedcontrol",
        "supportedextension",
        "namingcontexts",
        "defaultnamingcontext",
    }


def test_a_server_offering_everything() -> None:
    offered = Capabilities.from_root_dse(OPENLDAP)
    assert offered.assertion
    assert offered.values_return_filter
    assert offered.sorted_windows
    assert offered.who_am_i
    assert offered.password_modify
    assert offered.naming_contexts == ("dc=example,dc=org", "dc=other,dc=test")
    assert offered.default_naming_context is None
    assert offered.controls == frozenset(OPENLDAP["supportedControl"])


def test_attribute_names_are_read_in_any_case() -> None:
    offered = Capabilities.from_root_dse(ACTIVE_DIRECTORY)
    assert offered.sorted_windows and offered.who_am_i
    assert not (offered.assertion or offered.values_return_filter or offered.password_modify)
    assert offered.naming_contexts == ("DC=example,DC=org", "CN=Configuration,DC=example,DC=org")
    assert offered.default_naming_context == "DC=example,DC=org"


def test_each_feature_needs_its_own_oid() -> None:
    assert Capabilities.from_root_dse({"supportedControl": [SORT]}).sorted_windows is False
    assert Capabilities.from_root_dse({"supportedControl": [VLV]}).sorted_windows is False
    only_extensions = Capabilities.from_root_dse(
        {"supportedExtension": [ASSERTION, VALUES_RETURN_FILTER, SORT, VLV]}
    )
    assert not (
        only_extensions.assertion
        or only_extensions.values_return_filter
        or only_extensions.sorted_windows
    )
    only_controls = Capabilities.from_root_dse({"supportedControl": [WHO_AM_I, PASSWORD_MODIFY]})
    assert not (only_controls.who_am_i or only_controls.password_modify)


def test_a_rootdse_offering_nothing() -> None:
    for attributes in ({}, {"supportedControl": [], "namingContexts": None}):
        bare = Capabilities.from_root_dse(attributes)
        assert bare.controls == frozenset() and bare.extensions == frozenset()
        assert bare.naming_contexts == ()
        assert bare.default_naming_context is None
        assert not (bare.assertion or bare.sorted_windows or bare.who_am_i)


def test_values_are_read_as_text() -> None:
    class Value:
        def __str__(self) -> str:
            return "dc=example,dc=org"

    read = Capabilities.from_root_dse({"namingContexts": [Value()]})
    assert read.naming_contexts == ("dc=example,dc=org",)
