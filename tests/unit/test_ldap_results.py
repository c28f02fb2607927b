"""LDAP result codes -> SCIM errors: whose fault a refusal is decides the status (pure)."""

import logging

import pytest
from ldap3.core.exceptions import LDAPOperationResult

from scim_core.backends.ldap.capabilities import Capabilities
from scim_core.backends.ldap.results import scim_error


def refusal(code: int, description: str = "refused") -> LDAPOperationResult:
    return LDAPOperationResult(result=code, description=description, message="")


@pytest.mark.parametrize(
    ("code", "status", "scim_type"),
    [
        (19, 400, "invalidValue"),  # constraintViolation: the site's policy rejects the value
        (21, 400, "invalidValue"),  # invalidAttributeSyntax
        (64, 400, "invalidValue"),  # namingViolation
        (32, 404, None),
        (68, 409, "uniqueness"),
        (51, 503, None),  # busy
        (52, 503, None),  # unavailable
        (80, 503, None),  # other
        (1, 502, None),  # operationsError (389-DS's sort with an unknown ordering rule)
        (12, 502, None),  # unavailableCriticalExtension
        (13, 502, None),  # confidentialityRequired: passwords need TLS
        (17, 502, None),  # undefinedAttributeType: the site's schema lacks a mapped attribute
        (50, 502, None),  # insufficientAccessRights: the service account's rights
        (53, 502, None),  # unwillingToPerform
        (65, 502, None),  # objectClassViolation: the mapping does not fit the schema
    ],
)
def test_status_by_result_code(code, status, scim_type):
    error = scim_error(refusal(code), "the change")
    assert error.status == status
    assert error.scim_type == scim_type


def test_a_directory_side_refusal_is_logged_for_the_operator(caplog):
    with caplog.at_level(logging.ERROR, logger="scim.ldap"):
        error = scim_error(refusal(12, "unavailableCriticalExtension"), "the change")
    assert "result 12" in caplog.text and "unavailableCriticalExtension" in caplog.text
    assert "unavailableCriticalExtension" not in error.detail  # internals stay in the log
    assert error.detail.startswith("The directory refused the change")


def test_capabilities_from_a_root_dse():
    caps = Capabilities.from_root_dse(
        {
            "supportedControl": ["1.3.6.1.1.12", "1.2.840.113556.1.4.473"],
            "supportedextension": ["1.3.6.1.4.1.4203.1.11.3"],
            "defaultNamingContext": ["DC=example,DC=org"],
        }
    )
    assert caps.assertion and caps.who_am_i and not caps.values_return_filter
    assert not caps.sorted_windows  # sort without VLV is not enough
    assert not caps.password_modify
    assert caps.default_naming_context == "DC=example,DC=org"
    empty = Capabilities.from_root_dse({})
    assert not (empty.assertion or empty.sorted_windows) and empty.default_naming_context is None


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (16, "an attribute to change is not there"),
        (19, "a value breaks the directory's rules (a password policy, a value's size or form)"),
        (20, "a value is there already"),
        (21, "a value does not have the form its attribute needs"),
        (34, "a name does not have the form the directory needs"),
        (64, "the directory cannot hold this name"),
    ],
)
def test_a_client_side_refusal_says_what_in_scim_terms(code, reason, caplog):
    with caplog.at_level(logging.INFO, logger="scim.ldap"):
        error = scim_error(refusal(code, "ldapName"), "the change")
    assert error.detail == f"The directory refused the change: {reason}."
    assert [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "scim.ldap"] == [
        (logging.INFO, f"directory refused the change with result {code} (ldapName)")
    ]


def test_a_directory_side_refusal_tells_the_client_where_to_look(caplog):
    with caplog.at_level(logging.INFO, logger="scim.ldap"):
        error = scim_error(refusal(50, "insufficientAccessRights"), "the group")
    assert error.detail == (
        "The directory refused the group for a reason on its side (a feature it lacks, its "
        "configuration or the service account's rights); the service log has the details."
    )
    assert [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "scim.ldap"] == [
        (logging.ERROR, "directory refused the group with result 50 (insufficientAccessRights)")
    ]
