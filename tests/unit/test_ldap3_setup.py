"""Importing the LDAP plugin leaves ldap3 as it was; the first connection factory fits it."""

import subprocess
import sys

PROBE = """
import logging
from ldap3.core import results
import scim_core.backends.ldap  # noqa: F401
from scim_core.secret import InFlightSecretFilter

def fitted():
    masked = any(isinstance(f, InFlightSecretFilter) for f in logging.getLogger("ldap3").filters)
    return masked, 76 in results.RESULT_CODES

print(fitted())
from scim_core.backends.ldap.connection import prepare_ldap3
prepare_ldap3()
prepare_ldap3()
print(fitted(), len(logging.getLogger("ldap3").filters))
"""


def test_import_changes_nothing_and_set_up_happens_once() -> None:
    # A fresh interpreter: this test run has built connection factories already.
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["(False, False)", "(True, True) 1"]
