"""LDAP result codes (RFC 4511 §4.1.9) -> the SCIM error a client is told, as one table.

Whose fault a refusal is decides the status: the client's request (a taken name, a value the
directory's syntax or policy rejects) is 4xx; the directory or the service's configuration (a
control or operation it lacks, the service account's rights, a schema without a mapped
attribute, TLS missing for passwords) is 502, which an identity provider retries rather than
treating as a permanent verdict on the user; an outage is 503 with ``Retry-After``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Final

from ldap3.core.exceptions import LDAPOperationResult

from scim_core.errors import (
    DirectoryRefused,
    DirectoryUnavailable,
    InvalidValue,
    NotFound,
    ScimError,
    Uniqueness,
)

__all__ = [
    "ALREADY_EXISTS",
    "ASSERTION_FAILED",
    "CONSTRAINT_VIOLATION",
    "NO_SUCH_ATTRIBUTE",
    "NO_SUCH_OBJECT",
    "OBJECT_CLASS_VIOLATION",
    "OTHER",
    "VALUE_EXISTS",
    "scim_error",
]

log = logging.getLogger("scim.ldap")

NO_SUCH_ATTRIBUTE: Final = 16
CONSTRAINT_VIOLATION: Final = 19
VALUE_EXISTS: Final = 20
NO_SUCH_OBJECT: Final = 32
OBJECT_CLASS_VIOLATION: Final = 65
ALREADY_EXISTS: Final = 68
OTHER: Final = 80
ASSERTION_FAILED: Final = 122

_Outcome = Callable[[str, int], ScimError]


#: What a client-side refusal means, in SCIM terms (the LDAP result name stays in the log).
_CLIENT_REASONS: Mapping[int, str] = {
    16: "an attribute to change is not there",
    19: "a value breaks the directory's rules (a password policy, a value's size or form)",
    20: "a value is there already",
    21: "a value does not have the form its attribute needs",
    34: "a name does not have the form the directory needs",
    64: "the directory cannot hold this name",
}


def _client(what: str, code: int) -> ScimError:
    return InvalidValue(f"The directory refused {what}: {_CLIENT_REASONS[code]}.")


def _directory(what: str, code: int) -> ScimError:
    # The LDAP result goes to the service log, not to the client: it names internals.
    return DirectoryRefused(
        f"The directory refused {what} for a reason on its side (a feature it lacks, its "
        "configuration or the service account's rights); the service log has the details."
    )


def _unavailable(what: str, code: int) -> ScimError:
    return DirectoryUnavailable()


#: result code -> what the client is told. Codes not listed are the directory's side (502).
OUTCOMES: Mapping[int, _Outcome] = {
    3: _unavailable,  # timeLimitExceeded
    11: _unavailable,  # adminLimitExceeded
    16: _client,  # noSuchAttribute
    19: _client,  # constraintViolation: a value or password the site's policy rejects
    20: _client,  # attributeOrValueExists
    21: _client,  # invalidAttributeSyntax
    32: lambda what, _: NotFound(f"{what} not found."),
    34: _client,  # invalidDNSyntax
    51: _unavailable,  # busy
    52: _unavailable,  # unavailable
    64: _client,  # namingViolation: a name the directory cannot hold
    68: lambda what, _: Uniqueness(f"{what} exists already."),
    80: _unavailable,  # other: OpenLDAP's answer when a backend is failing
}


def scim_error(error: LDAPOperationResult, what: str) -> ScimError:
    """Translate a directory refusal of ``what`` into the error the client is told.

    Refusals on the directory's side are logged with their result code, so the operator sees
    which control, right or schema element is missing; the client gets no LDAP internals.
    """
    code = error.result
    description = str(error.description)
    outcome = OUTCOMES.get(code, _directory)
    if outcome is _directory:
        log.error("directory refused %s with result %s (%s)", what, code, description)
    else:
        log.info("directory refused %s with result %s (%s)", what, code, description)
    return outcome(what, code)
