"""The site mapping file: what it may say, and one clear line for what it may not."""

from pathlib import Path

import pytest

from scim_core.backends.ldap.profiles import PROFILES
from scim_core.backends.ldap.sitemap import default_mapping, load_mapping
from scim_core.backends.ldap.sitemap_entries import MappingProblem, mapped_attribute
from scim_core.config import ConfigError
from scim_core.schemas.attributes import DEFAULT_SCHEMAS, ENTERPRISE_URN, GROUP_URN, USER_URN

ACME = "urn:example:params:scim:schemas:extension:acme:2.0:User"
GROUP_EXTENSION = "urn:example:params:scim:schemas:extension:acme:2.0:Group"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "mapping"
BASE = default_mapping("openldap")


def _acme(more: str) -> str:
    """A file mapping one attribute of the site's User extension, with ``more`` keys."""
    return f'[[user]]\nscim = "{ACME}:n"\nldap = "x"\n{more}\n'


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "site.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_file_adds_core_enterprise_and_extension_attributes(tmp_path):
    path = write(
        tmp_path,
        f'''
[[user]]
scim = "PREFERREDLANGUAGE"
ldap = "preferredLanguage"

[[user]]
scim = "{ENTERPRISE_URN}:costCenter"
ldap = "businessCategory"

[[user]]
scim = "title"
ldap = "description"

[[user]]
scim = "{ACME}:hired"
ldap = "acmeHired"
type = "dateTime"
filter = true
object_class = "acmePerson"
mutability = "immutable"

[schema."{ACME}"]
name = "AcmeUser"
description = "Acme's own"
''',
    )
    mapping = load_mapping(path, BASE)
    names = [(m.schema, m.name, m.type) for m in mapping.users]
    assert names == [
        (USER_URN, "preferredLanguage", "string"),
        (ENTERPRISE_URN, "costCenter", "string"),
        (USER_URN, "title", "string"),
        (ACME, "hired", "dateTime"),
    ]
    hired = mapping.users[-1]
    assert (hired.filter_name, hired.object_class, hired.mutability) == (
        f"{ACME}:hired",
        "acmePerson",
        "immutable",
    )
    schemas = mapping.schema_set(DEFAULT_SCHEMAS)
    user, enterprise, acme = schemas.get("User")
    assert "preferredLanguage" in [a.name for a in user.attributes]
    assert "costCenter" in [a.name for a in enterprise.attributes]
    assert (acme.id, acme.name, acme.description) == (ACME, "AcmeUser", "Acme's own")
    assert DEFAULT_SCHEMAS.get("User")[0].attribute("preferredLanguage") is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[[user]]\nscim = "nickName"\nldap = "x"\ncolour = 1\n', "line 1: unknown key 'colour'"),
        ('\n\n[[user]]\nscim = "nickName"\n', "line 3: 'ldap' must name"),
        ('[[user]]\nscim = "nickName"\nldap = "two words"\n', "'ldap' must name"),
        ('[[user]]\nldap = "x"\n', "'scim' (the SCIM attribute) is missing"),
        ('[[user]]\nscim = "userName"\nldap = "cn"\n', "userName is mapped by the service"),
        ('[[user]]\nscim = "emails"\nldap = "mail"\n', "emails is mapped by the service"),
        ('[[user]]\nscim = "favouriteColour"\nldap = "x"\n', "not an RFC 7643 attribute"),
        ('[[user]]\nscim = "name.middleName"\nldap = "x"\n', "does not name one attribute"),
        ('[[user]]\nscim = "nickName"\nldap = "x"\ntype = "integer"\n', "has the type string"),
        (f'[[user]]\nscim = "{ACME}:n"\nldap = "x"\ntype = "float"\n', "'type' must be one of"),
        (f'[[user]]\nscim = "{ACME}:n"\nldap = "x"\nfilter = "yes"\n', "must be true or false"),
        (f'[[user]]\nscim = "{ACME}:n"\nldap = "x"\nreturned = "x"\n', "'returned' must be"),
        (
            '[[user]]\nscim = "nickName"\nldap = "a"\n\n[[user]]\nscim = "NICKNAME"\nldap = "b"\n',
            "line 5: nickName is mapped twice",
        ),
        (
            '[[user]]\nscim = "nickName"\nldap = "a"\n\n[[user]]\nscim = "locale"\nldap = "A"\n',
            "line 5: the LDAP attribute A holds two attributes",
        ),
        (
            # The line of the clash, with a taken-away attribute before it.
            '[[user]]\nscim = "title"\nldap = "none"\n\n[[user]]\nscim = "nickName"\n'
            'ldap = "displayName"\n',
            "line 5: the LDAP attribute displayName holds displayName already",
        ),
        ('[[users]]\nscim = "nickName"\n', "unknown table 'users'"),
        ('[[user]]\nscim = "nickName"\nldap = \n', "not valid TOML"),
        (f'[schema."{ACME}"]\nnamed = "x"\n', "takes only 'name' and 'description'"),
        # Syntaxes, types and lists.
        (_acme('syntax = "phone"'), "line 1: 'syntax' must be one of directoryString, printable"),
        (_acme('type = "integer"\nsyntax = "ia5String"'), "line 1: 'syntax' applies to strings"),
        (_acme('syntax = "postalAddress"\nfilter = true'), "a postalAddress cannot be filtered"),
        (_acme('type = "binary"\nfilter = true'), "line 1: a binary attribute cannot be filtered"),
        (_acme('type = "reference"\nfilter = true'), "a reference attribute cannot be filtered"),
        (
            '[[user]]\nscim = "nickName"\nldap = "x"\nmulti_valued = true\n',
            "line 1: only an attribute of a site's extension schema may be multi_valued",
        ),
        (_acme('type = "reference"\nmulti_valued = true'), "only an attribute of a site"),
        (
            _acme('syntax = "postalAddress"\nmulti_valued = true'),
            "a postalAddress cannot be multi_valued",
        ),
        (_acme('multi_valued = "yes"'), "line 1: 'multi_valued' must be true or false"),
        # Group tables.
        (
            '\n[[group]]\nscim = "displayName"\nldap = "x"\n',
            "line 2: 'displayName' is not an attribute of a Group extension",
        ),
        (
            f'\n[[group]]\nscim = "{USER_URN}:title"\nldap = "x"\n',
            "is not an attribute of a Group extension",
        ),
        (
            f'\n[[group]]\nscim = "{GROUP_EXTENSION}:o"\nldap = "x"\ntype = "reference"\n'
            "multi_valued = true\n",
            "line 2: only an attribute of a site",
        ),
        (
            f'\n[[group]]\nscim = "{GROUP_EXTENSION}:o"\nldap = "x"\ncolour = 1\n',
            "line 2: unknown key 'colour'",
        ),
    ],
)
def test_a_broken_file_is_one_line_naming_file_line_and_problem(tmp_path, text, problem):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as refused:
        load_mapping(path, BASE)
    message = str(refused.value)
    assert message.startswith(f"SCIM_MAPPING_FILE {path}") and "\n" not in message
    assert problem in message


def test_elements_of_phone_numbers_and_addresses_map_by_type(tmp_path):
    path = write(
        tmp_path,
        """
[[user]]
scim = 'phoneNumbers[type eq "work"].value'
ldap = "telephoneNumber"

[[user]]
scim = 'PHONENUMBERS[TYPE EQ "mobile"].VALUE'
ldap = "mobile"

[[user]]
scim = 'addresses[type eq "work"].postalCode'
ldap = "postalCode"
""",
    )
    mapping = load_mapping(path, BASE)
    assert [(m.name, m.element_type, m.sub) for m in mapping.users] == [
        ("phoneNumbers", "work", "value"),
        ("phoneNumbers", "mobile", "value"),
        ("addresses", "work", "postalCode"),
    ]
    assert mapping.users[1].filter_name == 'phoneNumbers[type eq "mobile"].value'
    user = mapping.schema_set(DEFAULT_SCHEMAS).get("User")[0]
    phones = user.attribute("phoneNumbers")
    assert phones is not None and phones.multi_valued
    assert [s.name for s in phones.sub_attributes] == ["value", "type"]
    assert phones.sub_attributes[1].canonical_values == ("work", "mobile")
    addresses = user.attribute("addresses")
    assert addresses is not None
    assert [s.name for s in addresses.sub_attributes] == ["postalCode", "type"]


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("scim = 'ims[type eq \"work\"].value'", "only phoneNumbers and addresses"),
        ("scim = 'addresses[type eq \"work\"].street'", "not 'street'"),
        ("scim = 'phoneNumbers[type eq \"work\"].value'\nfilter = true", "cannot be filtered"),
    ],
)
def test_a_wrong_element_is_named(tmp_path, entry, problem):
    path = write(tmp_path, f'[[user]]\n{entry}\nldap = "x"\n')
    with pytest.raises(ConfigError, match="line 1: .*" + problem):
        load_mapping(path, BASE)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"SCIM_MAPPING_FILE .*missing\.toml: cannot be read"):
        load_mapping(tmp_path / "missing.toml")


@pytest.mark.parametrize("dialect", sorted(PROFILES))
def test_the_shipped_example_of_each_directory_loads(dialect):
    mapping = load_mapping(EXAMPLES / f"{dialect}.toml", default_mapping(dialect))
    assert mapping.users and len({m.ldap.lower() for m in mapping.users}) == len(mapping.users)


def test_scim_server_stops_with_the_one_line_before_any_worker(tmp_path, monkeypatch, capsys):
    from scim_flask import cli

    path = write(tmp_path, '[[user]]\nscim = "nickName"\nldap = "nick"\nfilter = 1\n')
    environment = {
        "SCIM_LDAP_URL": "ldap://127.0.0.1:1",
        "SCIM_LDAP_BIND_DN": "cn=scim,dc=example,dc=org",
        "SCIM_LDAP_BIND_PASSWORD": "not-used",
        "SCIM_LDAP_USERS_BASE": "ou=people,dc=example,dc=org",
        "SCIM_LDAP_GROUPS_BASE": "ou=groups,dc=example,dc=org",
        "SCIM_TOKENS_SHA256": "idp=" + "0" * 64,
        "SCIM_MAPPING_FILE": str(path),
    }
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert cli.main(["serve"]) == 2
    error = capsys.readouterr().err
    assert error == (
        f"scim-ldap: configuration error: SCIM_MAPPING_FILE {path}, line 1: "
        "'filter' must be true or false.\n"
    )


@pytest.mark.parametrize("dialect", sorted(PROFILES))
def test_each_profile_ships_its_own_mapping_file(dialect):
    mapping = default_mapping(dialect)
    held = {m.filter_name: m.ldap for m in mapping.users}
    assert held["name.givenName"] == "givenName" and held["name.familyName"] == "sn"
    assert held[f"{ENTERPRISE_URN}:employeeNumber"] == "employeeNumber"
    # AD names users by their cn: a modify cannot change it, so name.formatted is not kept.
    assert ("name.formatted" in held) is (dialect != "ad")


def test_a_site_file_replaces_a_profile_entry_and_may_not_reuse_its_attribute(tmp_path):
    moved = write(tmp_path, '[[user]]\nscim = "name.givenName"\nldap = "gn"\n')
    merged = BASE.extended_by(load_mapping(moved, BASE))
    held = {m.filter_name: m.ldap for m in merged.users}
    assert held["name.givenName"] == "gn" and held["name.familyName"] == "sn"
    clash = write(tmp_path, '\n[[user]]\nscim = "nickName"\nldap = "SN"\n')
    with pytest.raises(ConfigError, match=r"line 2: the LDAP attribute SN holds name.familyName"):
        load_mapping(clash, BASE)


def test_a_site_file_takes_a_profile_attribute_away_with_none(tmp_path):
    path = write(
        tmp_path,
        '[[user]]\nscim = "title"\nldap = "none"\n\n'
        '[[user]]\nscim = "name.formatted"\nldap = "none"\n',
    )
    merged = BASE.extended_by(load_mapping(path, BASE))
    held = {m.filter_name for m in merged.users}
    assert "title" not in held and "name.formatted" not in held and "displayName" in held
    user = merged.schema_set(DEFAULT_SCHEMAS).get("User")[0]
    assert user.attribute("title") is None and user.attribute("displayName") is not None
    name = user.attribute("name")
    assert name is not None and [s.name for s in name.sub_attributes] == [
        "givenName",
        "familyName",
    ]
    required = write(tmp_path, '[[user]]\nscim = "name.familyName"\nldap = "none"\n')
    with pytest.raises(ConfigError, match=r"line 1: name\.familyName is required"):
        load_mapping(required, BASE)


def test_a_syntax_is_named_for_strings_only(tmp_path):
    path = write(
        tmp_path,
        f'[[user]]\nscim = "{ACME}:pager"\nldap = "pager"\nsyntax = "telephoneNumber"\n',
    )
    assert load_mapping(path, BASE).users[0].syntax == "telephoneNumber"


def test_a_binary_attribute_is_base64_octets_and_never_filtered(tmp_path):
    from scim_core.backends.ldap.mapping import UserMapping
    from scim_core.backends.ldap.profiles import OPENLDAP

    path = write(tmp_path, f'[[user]]\nscim = "{ACME}:photo"\nldap = "audio"\ntype = "binary"\n')
    (photo,) = load_mapping(path, BASE).users
    assert (photo.type, photo.definition().case_exact) == ("binary", True)
    mapping = UserMapping(OPENLDAP, mapped=(photo,))
    values = mapping.to_attributes({"userName": "a", ACME: {"photo": "AP8Q"}}, None)
    assert values["audio"] == [b"\x00\xff\x10"]
    read = mapping.to_resource({"entryUUID": ["u"], "uid": ["a"], "audio": [b"\x00\xff\x10"]}, None)
    assert read[ACME] == {"photo": "AP8Q"}


def test_a_reference_names_another_user_by_id_as_the_manager_does(tmp_path):
    from scim_core.backends.ldap.mapping import UserMapping
    from scim_core.backends.ldap.profiles import OPENLDAP

    path = write(
        tmp_path, f'[[user]]\nscim = "{ACME}:sponsor"\nldap = "seeAlso"\ntype = "reference"\n'
    )
    (sponsor,) = load_mapping(path, BASE).users
    definition = sponsor.definition()
    assert (sponsor.points_to, definition.type) == ("User", "complex")
    assert [s.name for s in definition.sub_attributes] == ["value", "$ref"]
    assert definition.sub_attributes[1].reference_types == ("User",)
    mapping = UserMapping(OPENLDAP, mapped=(sponsor,))
    user = {"userName": "a", ACME: {"sponsor": {"value": "id-b"}}}
    assert mapping.reference_ids(user) == {"seeAlso": "id-b"}
    dn = "uid=b,ou=people,dc=example,dc=org"
    assert mapping.to_attributes(user, None, {"seeAlso": dn})["seeAlso"] == [dn]
    entry = {"entryUUID": ["u"], "uid": ["a"], "seeAlso": [dn.upper()]}
    assert mapping.to_resource(entry, None, {dn: "id-b"})[ACME] == {"sponsor": {"value": "id-b"}}
    assert ACME not in mapping.to_resource(entry, None, {})  # a user since deleted


def test_group_tables_map_a_group_extension_only(tmp_path):
    path = write(
        tmp_path,
        f'[[user]]\nscim = "{ACME}:badge"\nldap = "carLicense"\n\n'
        f'[[group]]\nscim = "{GROUP_EXTENSION}:costCenter"\nldap = "businessCategory"\n'
        "filter = true\n",
    )
    mapping = load_mapping(path, BASE)
    (cost,) = mapping.groups
    assert (cost.resource_type, cost.filter_name, cost.filterable) == (
        "Group",
        f"{GROUP_EXTENSION}:costCenter",
        True,
    )
    owner = write(
        tmp_path,
        f'[[group]]\nscim = "{GROUP_EXTENSION}:owner"\nldap = "owner"\ntype = "reference"\n',
    )
    (reference,) = load_mapping(owner, BASE).groups
    assert (reference.points_to, reference.definition().type) == ("User", "complex")
    group = BASE.extended_by(mapping).schema_set(DEFAULT_SCHEMAS).get("Group")
    assert [s.id for s in group] == ["urn:ietf:params:scim:schemas:core:2.0:Group", GROUP_EXTENSION]


def test_an_extension_attribute_may_hold_a_list(tmp_path):
    from scim_core.backends.ldap.mapping import UserMapping
    from scim_core.backends.ldap.profiles import OPENLDAP

    path = write(
        tmp_path,
        f'[[user]]\nscim = "{ACME}:skills"\nldap = "businessCategory"\nmulti_valued = true\n',
    )
    (skills,) = load_mapping(path, BASE).users
    assert skills.multi_valued and skills.definition().multi_valued
    mapping = UserMapping(OPENLDAP, mapped=(skills,))
    user = {"userName": "a", ACME: {"skills": ["LDAP", "SCIM", "LDAP", ""]}}
    assert mapping.to_attributes(user, None)["businessCategory"] == ["LDAP", "SCIM"]
    entry = {"entryUUID": ["u"], "uid": ["a"], "businessCategory": ["SCIM", "LDAP"]}
    read = mapping.to_resource(entry, None)
    assert read[ACME] == {"skills": ["SCIM", "LDAP"]}
    # The same values in another order are no change.
    assert "businessCategory" not in mapping.changes(read, user, None, None, entry)


def test_a_file_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "site.toml"
    path.write_bytes(b'[[user]]\nscim = "nickName"\nldap = "n\xe9"\n')
    with pytest.raises(ConfigError) as refused:
        load_mapping(path, BASE)
    assert str(refused.value) == f"SCIM_MAPPING_FILE {path}: not UTF-8 text."


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[colours]\n", "unknown table 'colours'; expected [[user]], [[group]] or [schema.…]."),
        ("user = 1\n", "'user' must be written as [[user]] tables, one per attribute."),
        ("group = 1\n", "'group' must be written as [[group]] tables, one per attribute."),
        ("schema = 1\n", "'schema' must be written as [schema.\"<URN>\"] tables."),
        # an inline array has no [[user]] header line to name
        (
            'user = [{scim = "nickName"}]\n',
            "'ldap' must name an LDAP attribute (letters, digits, '-').",
        ),
    ],
)
def test_a_problem_of_no_one_table_names_no_line(tmp_path, text, problem):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as refused:
        load_mapping(path, BASE)
    assert str(refused.value) == f"SCIM_MAPPING_FILE {path}: {problem}"


def test_a_group_attribute_mapped_twice_names_its_line(tmp_path):
    table = f'[[group]]\nscim = "{GROUP_EXTENSION}:o"\nldap = "x"\n'
    path = write(tmp_path, table + "\n" + table)
    with pytest.raises(ConfigError) as refused:
        load_mapping(path, BASE)
    assert str(refused.value) == (
        f"SCIM_MAPPING_FILE {path}, line 5: {GROUP_EXTENSION}:o is mapped twice."
    )


def test_a_schema_table_may_leave_out_its_name_and_description(tmp_path):
    path = write(tmp_path, f'[schema."{ACME}"]\n\n' + _acme(""))
    assert load_mapping(path, BASE).schema_names == {ACME: ("", "")}


# One table read by mapped_attribute: what each kind of attribute keeps of its keys.

WORK_PHONE = 'phoneNumbers[type eq "work"].value'


def _problem(entry: object, resource_type: str = "User") -> str:
    with pytest.raises(MappingProblem) as refused:
        mapped_attribute(entry, resource_type)
    return str(refused.value)


@pytest.mark.parametrize(
    ("scim", "sub"), [("name.givenName", "givenName"), ("NAME.formatted", "formatted")]
)
def test_a_name_part_keeps_its_object_class_and_syntax(scim, sub):
    entry = {"scim": scim, "ldap": "gn", "object_class": "acmePerson", "syntax": "printableString"}
    part = mapped_attribute(entry)
    assert (part.schema, part.name, part.sub, part.ldap) == (USER_URN, "name", sub, "gn")
    assert (part.object_class, part.syntax) == ("acmePerson", "printableString")
    plain = mapped_attribute({"scim": scim, "ldap": "gn"})
    assert (plain.object_class, plain.syntax) == (None, "directoryString")


@pytest.mark.parametrize("more", [{"filter": True}, {"type": "integer"}])
def test_a_name_part_is_a_string_never_filtered(more):
    problem = _problem({"scim": "name.familyName", "ldap": "sn", **more})
    assert problem == "name.familyName is a string and cannot be filtered here."


@pytest.mark.parametrize(
    "scim", ["name.givenName", WORK_PHONE, "title", f"{ENTERPRISE_URN}:department"]
)
def test_only_a_site_extension_attribute_may_be_multi_valued(scim):
    problem = _problem({"scim": scim, "ldap": "x", "multi_valued": True})
    assert problem == "only an attribute of a site's extension schema may be multi_valued."


def test_an_element_keeps_its_type_object_class_and_syntax():
    entry = {
        "scim": WORK_PHONE,
        "ldap": "tel",
        "object_class": "acmePerson",
        "syntax": "telephoneNumber",
    }
    element = mapped_attribute(entry)
    assert (element.name, element.element_type, element.sub) == ("phoneNumbers", "work", "value")
    assert (element.object_class, element.syntax) == ("acmePerson", "telephoneNumber")
    plain = mapped_attribute({"scim": WORK_PHONE, "ldap": "tel"})
    assert (plain.object_class, plain.syntax) == (None, "directoryString")


@pytest.mark.parametrize("more", [{"filter": True}, {"type": "integer"}])
def test_an_element_is_a_string_never_filtered(more):
    problem = _problem({"scim": WORK_PHONE, "ldap": "tel", **more})
    assert problem == "an element of phoneNumbers is a string and cannot be filtered."


def test_a_description_is_the_rfc_one_unless_the_file_gives_its_own():
    assert mapped_attribute({"scim": "nickName", "ldap": "x"}).description == (
        "The casual way to address the user."
    )
    assert mapped_attribute({"scim": "title", "ldap": "x"}).description == ""
    given = {"scim": "nickName", "ldap": "x", "description": "What friends say."}
    assert mapped_attribute(given).description == "What friends say."
    assert mapped_attribute({"scim": f"{ACME}:n", "ldap": "x"}).description == ""
    assert (
        mapped_attribute({"scim": f"{GROUP_EXTENSION}:o", "ldap": "x"}, "Group").description == ""
    )


def test_a_standard_attribute_keeps_its_rfc_type_and_schema_in_any_case():
    url = mapped_attribute({"scim": f"{USER_URN.upper()}:PROFILEURL", "ldap": "labeledURI"})
    assert (url.schema, url.name, url.type, url.points_to) == (
        USER_URN,
        "profileUrl",
        "reference",
        None,
    )


def test_a_reference_of_an_extension_points_to_a_user():
    for entry, resource_type in (
        ({"scim": f"{ACME}:buddy", "ldap": "seeAlso", "type": "reference"}, "User"),
        ({"scim": f"{GROUP_EXTENSION}:owner", "ldap": "owner", "type": "reference"}, "Group"),
    ):
        reference = mapped_attribute(entry, resource_type)
        assert (reference.type, reference.points_to) == ("complex", "User")
    text = mapped_attribute({"scim": f"{GROUP_EXTENSION}:code", "ldap": "x"}, "Group")
    assert (text.type, text.points_to, text.resource_type) == ("string", None, "Group")


def test_a_table_names_the_kind_it_was_read_as():
    with pytest.raises(MappingProblem, match=r"^a \[\[user\]\] entry must be a table\.$"):
        mapped_attribute(1)  # a [[user]] table unless told otherwise
    assert _problem([], "Group") == "a [[group]] entry must be a table."


@pytest.mark.parametrize(
    ("scim", "problem"),
    [
        (f"{GROUP_URN}:x", f"{GROUP_URN!r} is not a User extension schema URN."),
        ("acme:x", "'acme' is not a User extension schema URN."),
    ],
)
def test_a_user_attribute_needs_a_user_extension_schema(scim, problem):
    assert _problem({"scim": scim, "ldap": "x"}) == problem


def test_a_group_attribute_is_one_attribute():
    scim = f"{GROUP_EXTENSION}:a.b"
    assert (
        _problem({"scim": scim, "ldap": "x"}, "Group") == f"{scim!r} does not name one attribute."
    )


@pytest.mark.parametrize("object_class", [5, "not a class!"])
def test_an_object_class_is_an_ldap_name(object_class):
    problem = _problem({"scim": f"{ACME}:n", "ldap": "x", "object_class": object_class})
    assert problem == "'object_class' must name an LDAP object class."
