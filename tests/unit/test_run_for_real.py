"""The README's "Run it for real" says only what the product accepts.

Every ``scim-ldap`` command line in its shell blocks parses with the real command's parser,
every ``SCIM_*`` variable it names is a declared setting, and the extra it installs exists.
What each command does is proven by the integration tests the section names.
"""

from __future__ import annotations

import configparser
import re
import shlex
from pathlib import Path

import pytest

from scim_core.backends.ldap.settings import LDAP_SETTINGS
from scim_core.config import SERVICE_SETTINGS
from scim_flask import cli
from scim_flask.settings import HTTP_SETTINGS, SERVER_SETTINGS

ROOT = Path(__file__).resolve().parents[2]
SECTION = re.search(
    r"^## Run it for real\n(.*?)^## ", (ROOT / "README.md").read_text(), re.S | re.M
)


def _section() -> str:
    assert SECTION is not None, "README.md has no section 'Run it for real'"
    return SECTION.group(1)


def _shell_lines() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", _section(), re.S)
    return [line for block in blocks for line in block.replace("\\\n", " ").splitlines()]


def _commands(program: str) -> list[list[str]]:
    found = []
    for line in _shell_lines():
        words = shlex.split(line, comments=True)
        if words and words[0].endswith("/" + program):
            found.append(words[1:])
    return found


def test_the_section_runs_scim_ldap_serve_and_check() -> None:
    commands = _commands("scim-ldap")
    assert {words[0] for words in commands} >= {"serve", "check"}, commands


@pytest.mark.parametrize("words", _commands("scim-ldap"), ids=" ".join)
def test_each_scim_ldap_command_parses(words: list[str]) -> None:
    cli._parser().parse_args(words)


def test_every_variable_named_is_a_setting() -> None:
    settings = [*SERVICE_SETTINGS, *HTTP_SETTINGS, *SERVER_SETTINGS, *LDAP_SETTINGS]
    known = {s.name for s in settings} | {s.name + "_FILE" for s in settings if s.secret}
    named = set(re.findall(r"\bSCIM_[A-Z0-9_]*[A-Z0-9]\b", _section()))
    assert named and named <= known, sorted(named - known)


def test_the_install_names_an_extra_the_package_has() -> None:
    extras = re.findall(r"pip install 'scim-ldap\[(\w+)\]'", _section())
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    declared = set(config["options.extras_require"])
    assert extras and set(extras) <= declared, (extras, declared)
