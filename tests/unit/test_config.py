"""Settings: one clear line naming a bad or missing variable, secrets never echoed."""

import dataclasses
import datetime
import hashlib

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from scim_core.backends.ldap.mapped import SiteMapping
from scim_core.backends.ldap.settings import DEFAULT, LdapSettings
from scim_core.config import ConfigError, ServiceConfig
from scim_flask.settings import AppSettings

LDAP_ENV = {
    "SCIM_LDAP_URL": "ldap://127.0.0.1:3890, ldap://127.0.0.1:3891",
    "SCIM_LDAP_BIND_DN": "cn=scim,dc=example,dc=org",
    "SCIM_LDAP_BIND_PASSWORD": "canary-Secret-123",
    "SCIM_LDAP_USERS_BASE": "ou=people,dc=example,dc=org",
    "SCIM_LDAP_GROUPS_BASE": "ou=groups,dc=example,dc=org",
}


def test_defaults_follow_the_design():
    config = ServiceConfig.from_environ({})
    assert (config.max_results, config.default_count) == (200, 100)
    assert config.max_body_bytes == 1024 * 1024


def test_ldap_settings_read_every_url():
    settings = LdapSettings.from_environ(LDAP_ENV)
    assert settings.urls == ("ldap://127.0.0.1:3890", "ldap://127.0.0.1:3891")
    assert settings.dialect == "openldap"
    assert "canary" not in repr(settings)


def test_new_entries_go_where_the_service_searches():
    settings = LdapSettings.from_environ(LDAP_ENV)
    assert (settings.users_scope, settings.new_users_base) == ("one", settings.users_base)
    below = "ou=staff,ou=people,dc=example,dc=org"
    sub = {**LDAP_ENV, "SCIM_LDAP_USERS_SCOPE": "sub", "SCIM_LDAP_NEW_USERS_BASE": below}
    assert LdapSettings.from_environ(sub).new_users_base == below
    refused = [
        {**LDAP_ENV, "SCIM_LDAP_NEW_USERS_BASE": below},  # one level: only the base itself
        {**sub, "SCIM_LDAP_NEW_USERS_BASE": "ou=elsewhere,dc=example,dc=org"},
        {**LDAP_ENV, "SCIM_LDAP_GROUPS_SCOPE": "sub", "SCIM_LDAP_NEW_GROUPS_BASE": "dc=org"},
    ]
    for env in refused:
        with pytest.raises(ConfigError, match=r"SCIM_LDAP_NEW_(USERS|GROUPS)_BASE must be"):
            LdapSettings.from_environ(env)
    with pytest.raises(ConfigError, match="SCIM_LDAP_USERS_SCOPE"):
        LdapSettings.from_environ({**LDAP_ENV, "SCIM_LDAP_USERS_SCOPE": "subtree"})


def test_several_bases_split_on_unescaped_semicolons():
    settings = LdapSettings.from_environ(
        {
            **LDAP_ENV,
            "SCIM_LDAP_USERS_BASE": r" ou=staff\;temps,dc=example,dc=org ; ou=a\3Bb,dc=org",
            "SCIM_LDAP_GROUPS_BASE": "ou=groups,dc=example,dc=org;ou=teams,dc=example,dc=org",
        }
    )
    assert settings.users_bases == (
        r"ou=staff\;temps,dc=example,dc=org",
        r"ou=a\3Bb,dc=org",
    )
    assert settings.users_base == settings.new_users_base == settings.users_bases[0]
    assert settings.groups_bases == ("ou=groups,dc=example,dc=org", "ou=teams,dc=example,dc=org")
    assert settings.groups_base == "ou=groups,dc=example,dc=org"
    spaced = {**LDAP_ENV, "SCIM_LDAP_USERS_BASE": "OU=Staff, DC=example,DC=org; OU=Temps, DC=org"}
    assert LdapSettings.from_environ(spaced).users_bases == (
        "OU=Staff, DC=example,DC=org",
        "OU=Temps, DC=org",
    )
    one = LdapSettings.from_environ(LDAP_ENV)
    assert one.users_bases == (one.users_base,) and one.groups_bases == (one.groups_base,)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("ou=people,dc=example,dc=org;", "empty item"),
        (";ou=people,dc=example,dc=org", "empty item"),
        ("ou=people,dc=example,dc=org; ;ou=staff,dc=example,dc=org", "empty item"),
        ("ou=people,dc=example,dc=org;people", "is not a DN"),
        ("ou=people,dc=example,dc=org;ou=staff,ou=people,dc=example,dc=org", "overlap"),
        ("ou=staff,ou=people,dc=example,dc=org;ou=people,dc=example,dc=org", "overlap"),
        ("ou=people,dc=example,dc=org;OU=People, DC=example,DC=org", "overlap"),
    ],
)
def test_bad_bases_are_refused_in_one_line_naming_the_variable(value, reason):
    for variable in ("SCIM_LDAP_USERS_BASE", "SCIM_LDAP_GROUPS_BASE"):
        with pytest.raises(ConfigError, match=reason) as refused:
            LdapSettings.from_environ({**LDAP_ENV, variable: value})
        message = str(refused.value)
        assert message.startswith(variable + ":") and "\n" not in message


def test_new_entries_go_under_one_of_several_bases():
    bases = "ou=people,dc=example,dc=org;ou=staff,dc=example,dc=org"
    env = {**LDAP_ENV, "SCIM_LDAP_USERS_BASE": bases}
    second = {**env, "SCIM_LDAP_NEW_USERS_BASE": "ou=staff,dc=example,dc=org"}
    assert LdapSettings.from_environ(second).new_users_base == "ou=staff,dc=example,dc=org"
    below = "ou=temps,ou=staff,dc=example,dc=org"
    sub = {**env, "SCIM_LDAP_USERS_SCOPE": "sub", "SCIM_LDAP_NEW_USERS_BASE": below}
    assert LdapSettings.from_environ(sub).new_users_base == below
    for refused in (
        {**env, "SCIM_LDAP_NEW_USERS_BASE": below},  # one level: a base itself only
        {**env, "SCIM_LDAP_NEW_USERS_BASE": "dc=example,dc=org"},  # above the bases
        {**sub, "SCIM_LDAP_NEW_USERS_BASE": "ou=elsewhere,dc=example,dc=org"},
    ):
        with pytest.raises(ConfigError, match="SCIM_LDAP_NEW_USERS_BASE must be"):
            LdapSettings.from_environ(refused)


def test_no_primary_email_flag_is_mapped_by_default_and_can_be_turned_off():
    assert LdapSettings.from_environ(LDAP_ENV).no_primary_email_attribute == "scimNoPrimaryEmail"
    for off in ("none", "None"):
        env = {**LDAP_ENV, "SCIM_LDAP_NO_PRIMARY_EMAIL_ATTRIBUTE": off}
        assert LdapSettings.from_environ(env).no_primary_email_attribute is None
    env = {**LDAP_ENV, "SCIM_LDAP_NO_PRIMARY_EMAIL_ATTRIBUTE": "siteNoPrimaryMail"}
    assert LdapSettings.from_environ(env).no_primary_email_attribute == "siteNoPrimaryMail"


@pytest.mark.parametrize(
    ("variable", "field", "default"),
    [
        ("SCIM_LDAP_PENDING_ATTRIBUTE", "pending_attribute", "scimPendingSince"),
        ("SCIM_LDAP_EXTERNAL_ID_OBJECT_CLASS", "external_id_object_class", "scimPerson"),
        ("SCIM_LDAP_EXTERNAL_ID_ATTRIBUTE", "external_id_attribute", "scimExternalId"),
    ],
)
def test_schema_names_default_and_none_turns_them_off(variable, field, default):
    assert getattr(LdapSettings.from_environ(LDAP_ENV), field) == default
    assert getattr(LdapSettings.from_environ({**LDAP_ENV, variable: ""}), field) == default
    for off in ("none", "NONE"):
        assert getattr(LdapSettings.from_environ({**LDAP_ENV, variable: off}), field) is None
    assert getattr(LdapSettings.from_environ({**LDAP_ENV, variable: "siteName"}), field) == (
        "siteName"
    )


def test_password_file(tmp_path):
    secret = tmp_path / "password"
    secret.write_text("from-a-file\n")
    env = {k: v for k, v in LDAP_ENV.items() if k != "SCIM_LDAP_BIND_PASSWORD"}
    env["SCIM_LDAP_BIND_PASSWORD_FILE"] = str(secret)
    assert LdapSettings.from_environ(env).bind_password == "from-a-file"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"SCIM_LDAP_URL": "http://x"}, "SCIM_LDAP_URL"),
        ({"SCIM_LDAP_USERS_BASE": ""}, "SCIM_LDAP_USERS_BASE"),
        ({"SCIM_LDAP_DIALECT": "novell"}, "SCIM_LDAP_DIALECT"),
        ({"SCIM_LDAP_TIMEOUT": "soon"}, "SCIM_LDAP_TIMEOUT"),
        ({"SCIM_LDAP_START_TLS": "maybe"}, "SCIM_LDAP_START_TLS"),
        ({"SCIM_LDAP_FAST_PATH": "sometimes"}, "SCIM_LDAP_FAST_PATH"),
    ],
)
def test_a_bad_setting_is_named_in_one_line(change, named):
    with pytest.raises(ConfigError) as caught:
        LdapSettings.from_environ({**LDAP_ENV, **change})
    message = str(caught.value)
    assert message.startswith(named)
    assert "\n" not in message


def test_the_fast_path_is_on_unless_turned_off():
    assert LdapSettings.from_environ(LDAP_ENV).fast_path is True
    assert LdapSettings.from_environ({**LDAP_ENV, "SCIM_LDAP_FAST_PATH": "off"}).fast_path is False


def test_the_session_log_is_asked_and_the_change_log_found_unless_turned_off():
    """By default the directory is asked whether it keeps a session log, and its change
    log is the one its naming context names; `off` and `none` turn each off, a DN names it."""
    default = LdapSettings.from_environ(LDAP_ENV)
    assert default.session_log is True and default.change_log == DEFAULT
    off = LdapSettings.from_environ(
        {**LDAP_ENV, "SCIM_LDAP_SESSION_LOG": "off", "SCIM_LDAP_CHANGE_LOG": "None"}
    )
    assert off.session_log is False and off.change_log is None
    named = LdapSettings.from_environ({**LDAP_ENV, "SCIM_LDAP_CHANGE_LOG": "cn=log"})
    assert named.change_log == "cn=log"


def test_tokens_are_required_and_never_plaintext():
    with pytest.raises(ConfigError, match="SCIM_TOKENS_SHA256 is required"):
        AppSettings.from_environ({})
    with pytest.raises(ConfigError, match="SCIM_TOKENS_SHA256"):
        AppSettings.from_environ({"SCIM_TOKENS_SHA256": "plain-token"})
    digest = hashlib.sha256(b"t").hexdigest()
    assert AppSettings.from_environ({"SCIM_TOKENS_SHA256": digest}).backend == "ldap"


def test_secret_value_is_not_echoed_when_invalid():
    with pytest.raises(ConfigError) as caught:
        LdapSettings.from_environ(
            {**LDAP_ENV, "SCIM_LDAP_BIND_PASSWORD_FILE": "/nonexistent"}
            | {"SCIM_LDAP_BIND_PASSWORD": ""}
        )
    assert "canary" not in str(caught.value)


def test_bases_given_in_code_are_checked_as_from_the_environment():
    settings = LdapSettings.from_environ(LDAP_ENV)
    people = settings.users_base
    with pytest.raises(ConfigError, match=r"^SCIM_LDAP_USERS_BASE: .* overlap"):
        dataclasses.replace(settings, users_bases=(people, "ou=staff," + people))
    with pytest.raises(ConfigError, match=r"^SCIM_LDAP_GROUPS_BASE: groups_base must be the first"):
        dataclasses.replace(settings, groups_bases=("ou=teams,dc=example,dc=org",))


def _ca_certificate() -> bytes:
    """A self-signed CA certificate, PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Example CA")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM)


def test_a_ca_file_is_read_at_start_up(tmp_path):
    assert LdapSettings.from_environ(LDAP_ENV).ca_file is None
    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(_ca_certificate())
    settings = LdapSettings.from_environ({**LDAP_ENV, "SCIM_LDAP_CA_FILE": str(bundle)})
    assert settings.ca_file == str(bundle)


def test_a_ca_file_that_cannot_serve_is_named_with_the_reason(tmp_path):
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n", encoding="utf-8")
    missing = tmp_path / "missing.pem"
    expected = {
        junk: "no CA certificate could be read from it (NO_CERTIFICATE_OR_CRL_FOUND)",
        missing: "No such file or directory",
        tmp_path: "Is a directory",
    }
    for path, reason in expected.items():
        with pytest.raises(ConfigError) as caught:
            LdapSettings.from_environ({**LDAP_ENV, "SCIM_LDAP_CA_FILE": str(path)})
        assert str(caught.value) == f"SCIM_LDAP_CA_FILE: {str(path)!r} is not valid ({reason})"


def test_a_dialect_is_named_in_any_case_and_an_unknown_one_lists_the_known():
    assert LdapSettings.from_environ({**LDAP_ENV, "SCIM_LDAP_DIALECT": "AD"}).dialect == "ad"
    with pytest.raises(ConfigError) as caught:
        LdapSettings.from_environ({**LDAP_ENV, "SCIM_LDAP_DIALECT": "novell"})
    assert str(caught.value) == (
        "SCIM_LDAP_DIALECT: 'novell' is not valid (expected one of 389ds, ad, openldap)"
    )


@pytest.mark.parametrize(("text", "scope"), [(" One ", "one"), ("SUB", "sub"), ("one", "one")])
def test_a_scope_is_read_in_any_case(text, scope):
    env = {**LDAP_ENV, "SCIM_LDAP_USERS_SCOPE": text, "SCIM_LDAP_GROUPS_SCOPE": text}
    settings = LdapSettings.from_environ(env)
    assert (settings.users_scope, settings.groups_scope) == (scope, scope)


def test_without_a_mapping_file_the_site_maps_nothing_of_its_own():
    assert LdapSettings.from_environ(LDAP_ENV).mapping == SiteMapping()


def test_a_mapping_file_extends_the_mapping_of_the_dialect_named(tmp_path):
    """``company`` is free on OpenLDAP; Active Directory's profile maps organization to it."""
    site = tmp_path / "site.toml"
    site.write_text('\n[[user]]\nscim = "title"\nldap = "company"\n', encoding="utf-8")
    env = {**LDAP_ENV, "SCIM_MAPPING_FILE": str(site)}
    (title,) = LdapSettings.from_environ(env).mapping.users
    assert (title.filter_name, title.ldap) == ("title", "company")
    with pytest.raises(ConfigError) as caught:
        LdapSettings.from_environ({**env, "SCIM_LDAP_DIALECT": "ad"})
    message = str(caught.value)
    assert message.startswith(f"SCIM_MAPPING_FILE {site}, line 2: the LDAP attribute company")
    assert "\n" not in message


def test_overlapping_bases_are_both_quoted_in_the_one_line():
    people, staff = "ou=people,dc=example,dc=org", "OU=Staff, OU=People,DC=example,DC=org"
    with pytest.raises(ConfigError) as caught:
        LdapSettings.from_environ({**LDAP_ENV, "SCIM_LDAP_GROUPS_BASE": f"{people};{staff}"})
    assert str(caught.value) == (
        f"SCIM_LDAP_GROUPS_BASE: {people!r} and {staff!r} overlap (one is inside the other): "
        "its entries would be found twice."
    )
