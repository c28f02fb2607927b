"""Secret and InFlightSecretFilter: a password never shows in reprs or filtered log records."""

from __future__ import annotations

import logging
import pickle

import pytest

from scim_core.secret import InFlightSecretFilter, Secret

MASK = "********"


def _filtered(message: str, *args: object) -> str:
    record = logging.LogRecord("ldap3", logging.DEBUG, __file__, 1, message, args or None, None)
    assert InFlightSecretFilter().filter(record) is True
    return record.getMessage()


def test_a_secret_shows_only_its_mask():
    secret = Secret("hunter2-päss")
    assert repr(secret) == str(secret) == f"Secret('{MASK}')"
    assert f"{secret!r} {secret}" == f"Secret('{MASK}') Secret('{MASK}')"
    assert secret.reveal() == "hunter2-päss"


def test_secrets_compare_and_hash_by_their_value():
    assert Secret("a") == Secret("a")
    assert Secret("a") != Secret("b")
    assert Secret("a") != "a"
    assert hash(Secret("a")) == hash(Secret("a")) == hash("a")
    assert len({Secret("a"), Secret("a"), Secret("b")}) == 2


def test_a_secret_cannot_be_pickled():
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(Secret("hunter2"))


def test_a_record_passes_unchanged_when_nothing_is_in_flight():
    record = logging.LogRecord("ldap3", logging.DEBUG, __file__, 1, "bind %s", ("hunter2",), None)
    assert InFlightSecretFilter().filter(record) is True
    assert (record.msg, record.args) == ("bind %s", ("hunter2",))


def test_an_in_flight_password_is_masked_in_every_form_a_dump_shows():
    secret = Secret("pässwörd-1")
    with secret.exposed() as value:
        assert value == "pässwörd-1"
        assert _filtered("bind %s done", value) == f"bind {MASK} done"
        assert _filtered("payload %r", value.encode()) == f"payload b'{MASK}'"
        assert _filtered("unicodePwd %r", value.encode("utf-16-le")) == f"unicodePwd b'{MASK}'"
        assert _filtered("nothing secret here") == "nothing secret here"
    assert _filtered("bind %s done", "pässwörd-1") == "bind pässwörd-1 done"


def test_a_filtered_record_keeps_its_text_without_arguments():
    with Secret("hunter2").exposed():
        record = logging.LogRecord(
            "ldap3", logging.DEBUG, __file__, 1, "a %s b %s", ("hunter2", 3), None
        )
        InFlightSecretFilter().filter(record)
    assert (record.msg, record.args) == (f"a {MASK} b 3", None)


def test_a_password_stays_in_flight_until_its_last_use_ends():
    secret = Secret("hunter2")
    with secret.exposed():
        with Secret("hunter2").exposed():
            assert _filtered("hunter2") == MASK
        assert _filtered("hunter2") == MASK
        with secret.exposed():
            pass
        assert _filtered("hunter2") == MASK
    assert _filtered("hunter2") == "hunter2"


def test_a_password_leaves_flight_even_when_its_use_fails():
    with pytest.raises(RuntimeError), Secret("hunter2").exposed():
        raise RuntimeError("bind failed")
    assert _filtered("hunter2") == "hunter2"


def test_every_password_in_flight_is_masked():
    with Secret("first-pw").exposed(), Secret("second-pw").exposed():
        assert _filtered("first-pw and second-pw") == f"{MASK} and {MASK}"
