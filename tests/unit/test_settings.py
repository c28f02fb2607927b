"""The setting declarations: parsers, reading one variable (or its file) and the service's."""

from __future__ import annotations

import pytest

from scim_core.config import (
    ConfigError,
    ServiceConfig,
    Setting,
    parse_bool,
    parse_int,
    parse_list,
    read_settings,
)
from scim_core.secret import Secret


@pytest.mark.parametrize("text", ["1", "true", " TRUE ", "yes", "On"])
def test_true_is_read_in_every_spelling(text):
    assert parse_bool(text) is True


@pytest.mark.parametrize("text", ["0", "false", "No", " off\n"])
def test_false_is_read_in_every_spelling(text):
    assert parse_bool(text) is False


@pytest.mark.parametrize("text", ["", "maybe", "2", "y"])
def test_anything_else_is_no_boolean(text):
    with pytest.raises(ValueError, match="expected true or false"):
        parse_bool(text)


def test_a_whole_number_is_held_to_its_minimum():
    assert parse_int()(" 0 ") == 0
    assert parse_int(3)("3") == 3
    with pytest.raises(ValueError, match="must be at least 3"):
        parse_int(3)("2")
    with pytest.raises(ValueError, match="must be at least 0"):
        parse_int()("-1")
    with pytest.raises(ValueError):
        parse_int(1)("1.5")


def test_a_list_drops_blanks_and_space():
    assert parse_list(" a, b ,,  ,c ") == ("a", "b", "c")
    assert parse_list("") == ()


LIMIT = Setting("SCIM_LIMIT", parse_int(1), 7, "How many.")
NEEDED = Setting("SCIM_NEEDED", parse_list, None, "What is needed.", required=True)
KEY = Setting("SCIM_KEY", parse_int(1), None, "The key.", secret=True)


def test_a_setting_unset_or_empty_takes_its_default():
    assert LIMIT.read({}) == 7
    assert LIMIT.read({"SCIM_LIMIT": ""}) == 7
    assert LIMIT.read({"SCIM_LIMIT": "9"}) == 9
    assert KEY.read({}) is None
    assert read_settings([LIMIT, KEY], {"SCIM_LIMIT": "2"}) == {"SCIM_LIMIT": 2, "SCIM_KEY": None}


def test_a_required_setting_unset_is_named_with_its_documentation():
    with pytest.raises(ConfigError) as caught:
        NEEDED.read({"SCIM_NEEDED": ""})
    assert str(caught.value) == "SCIM_NEEDED is required: What is needed."
    assert NEEDED.read({"SCIM_NEEDED": "a,b"}) == ("a", "b")


def test_a_bad_value_is_named_and_quoted_unless_secret():
    with pytest.raises(ConfigError) as caught:
        LIMIT.read({"SCIM_LIMIT": "0"})
    assert str(caught.value) == "SCIM_LIMIT: '0' is not valid (must be at least 1)"
    with pytest.raises(ConfigError) as caught:
        KEY.read({"SCIM_KEY": "-5"})
    assert str(caught.value) == "SCIM_KEY: is not valid (must be at least 1)"


def test_a_secret_may_come_from_the_file_its_file_variable_names(tmp_path):
    held = tmp_path / "key"
    held.write_text(" 42\n", encoding="utf-8")
    assert KEY.read({"SCIM_KEY_FILE": str(held)}) == 42
    assert KEY.read({"SCIM_KEY": "5", "SCIM_KEY_FILE": str(held)}) == 5
    assert KEY.read({"SCIM_KEY_FILE": ""}) is None
    assert LIMIT.read({"SCIM_LIMIT_FILE": str(held)}) == 7  # not a secret: no file is read
    held.write_text("ünïcode-0", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        KEY.read({"SCIM_KEY_FILE": str(held)})
    assert str(caught.value) == (
        "SCIM_KEY: is not valid (invalid literal for int() with base 10: 'ünïcode-0')"
    )


def test_an_unreadable_file_is_named_with_the_reason(tmp_path):
    missing = tmp_path / "absent"
    with pytest.raises(ConfigError) as caught:
        KEY.read({"SCIM_KEY_FILE": str(missing)})
    assert str(caught.value) == f"SCIM_KEY_FILE: cannot read {missing}: No such file or directory"


def test_a_file_that_is_not_utf8_is_named_without_its_content(tmp_path):
    held = tmp_path / "key"
    held.write_bytes(b"s3cr\xff\xfet")
    with pytest.raises(ConfigError) as caught:
        KEY.read({"SCIM_KEY_FILE": str(held)})
    assert str(caught.value) == f"SCIM_KEY_FILE: {held} is not UTF-8 text"


def test_the_service_reads_every_one_of_its_settings():
    assert ServiceConfig.from_environ({}) == ServiceConfig()
    config = ServiceConfig.from_environ(
        {
            "SCIM_MAX_RESULTS": "50",
            "SCIM_DEFAULT_COUNT": "0",
            "SCIM_MAX_BODY_BYTES": "2048",
            "SCIM_MAX_FILTER_LENGTH": "512",
            "SCIM_CURSOR_SECRET": " " + "k" * 32 + " ",
            "SCIM_CURSOR_TIMEOUT": "60",
        }
    )
    assert config == ServiceConfig(
        50, 0, 2048, 512, cursor_secret=Secret("k" * 32), cursor_timeout=60
    )


def test_a_cursor_secret_needs_32_characters_without_surrounding_space():
    with pytest.raises(ConfigError) as caught:
        ServiceConfig.from_environ({"SCIM_CURSOR_SECRET": " " + "k" * 31 + " "})
    assert str(caught.value) == "SCIM_CURSOR_SECRET: is not valid (must be at least 32 characters)"
