"""userName -> directory-safe uid: the default rule, replaceable by configuration.

The rule: strip, NFKC, case-fold, accents to ASCII where a plain decomposition exists, keep
``a-z 0-9 . _ - @``, every other run becomes ``-``, trim ``.`` and ``-`` from the ends. An
empty result or one over 64 characters is 400 ``invalidValue``. Two userNames that normalize
to the same uid are the same user.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from scim_core.errors import InvalidValue

__all__ = ["MAX_UID_LENGTH", "Normalizer", "normalize_username"]

Normalizer = Callable[[str], str]
"""A function from a client's userName to the uid stored in the directory."""

MAX_UID_LENGTH = 64
_DISALLOWED_RUN = re.compile(r"[^a-z0-9._@-]+")


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def normalize_username(user_name: str) -> str:
    """Normalize a SCIM ``userName`` to the uid used as the RDN.

    :raises InvalidValue: when nothing usable remains or the result exceeds 64 characters.
    """
    text = unicodedata.normalize("NFKC", user_name.strip()).casefold()
    text = _strip_accents(text)
    # pragma below: mutmut's "XX.-XX" also trims X, which no case-folded text holds.
    text = _DISALLOWED_RUN.sub("-", text).strip(".-")  # pragma: no mutate
    if not text:
        raise InvalidValue("userName has no letters or digits a directory uid can hold.")
    if len(text) > MAX_UID_LENGTH:
        raise InvalidValue(f"userName is longer than {MAX_UID_LENGTH} characters once normalized.")
    return text
