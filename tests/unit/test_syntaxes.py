import pytest

from scim_core.backends.ldap.mapping import UserMapping
from scim_core.backends.ldap.profiles import ACTIVE_DIRECTORY, OPENLDAP
from scim_core.backends.ldap.syntaxes import from_ldap, to_ldap
from scim_core.errors import InvalidValue

WORK_PHONE = 'phoneNumbers[type eq "work"].value'


@pytest.mark.parametrize(
    ("formatted", "stored"),
    [
        ("1 Main St\nSeattle, WA 98101", "1 Main St$Seattle, WA 98101"),
        ("Suite $5\r\nC:\\Mail", "Suite \\245$C:\\5CMail"),
        ("Building 4", "Building 4"),
        (" first \n\n  second\n", " first $  second"),
    ],
)
def test_a_postal_address_is_lines_joined_with_dollar_signs(formatted, stored):
    assert to_ldap("postalAddress", "formatted", formatted) == stored
    lines = formatted.replace("\r\n", "\n").split("\n")
    assert from_ldap("postalAddress", stored) == "\n".join(line for line in lines if line)


def test_a_stored_postal_address_escape_is_read_in_either_case():
    # RFC 4517 §3.3.28 escapes are hex pairs: another writer may spell them in lower case.
    assert from_ldap("postalAddress", "C:\\5cMail \\245$Town") == "C:\\Mail $5\nTown"


def test_a_postal_address_of_empty_lines_only_is_refused():
    with pytest.raises(InvalidValue, match="at least one line"):
        to_ldap("postalAddress", "formatted", "\n\r\n")


@pytest.mark.parametrize("number", ["+1 (425) 555-0100", "044 123 45 67", "+41/44=1?2:3,4'5."])
def test_a_printable_telephone_number_is_kept(number):
    assert to_ldap("telephoneNumber", WORK_PHONE, number) == number


@pytest.mark.parametrize("number", ["+1 425 555 0100 #2", "555-0100 ext. 5 ✆", "1;2", "$1"])
def test_a_telephone_number_outside_printable_string_is_refused_without_its_value(number):
    with pytest.raises(InvalidValue) as refused:
        to_ldap("telephoneNumber", WORK_PHONE, number)
    assert WORK_PHONE in refused.value.detail and number not in refused.value.detail


def test_country_and_ia5_strings():
    assert to_ldap("countryString", "country", "CH") == "CH"
    for wrong in ("CHE", "Switzerland", "C"):
        with pytest.raises(InvalidValue, match="two-letter"):
            to_ldap("countryString", "country", wrong)
    with pytest.raises(InvalidValue, match="ASCII"):
        to_ldap("ia5String", "x", "é")
    assert from_ldap("facsimileTelephoneNumber", "+41 44 123$twoDimensional") == "+41 44 123"


def test_the_openldap_defaults_check_and_convert_before_any_write():
    mapping = UserMapping(profile=OPENLDAP)
    user = {
        "userName": "a",
        "name": {"givenName": "A", "familyName": "B"},
        "phoneNumbers": [{"type": "work", "value": "+41 44 1"}],
        "addresses": [{"type": "work", "formatted": "Road 1\nTown"}],
    }
    values = mapping.to_attributes(user, None)
    assert values["telephoneNumber"] == ["+41 44 1"]
    assert values["postalAddress"] == ["Road 1$Town"]
    read = mapping.to_resource({"entryUUID": ["u"], "uid": ["a"], **values}, None)
    assert read["addresses"] == [{"type": "work", "formatted": "Road 1\nTown"}]
    user["phoneNumbers"][0]["value"] = "+41 44 1 #9"
    with pytest.raises(InvalidValue, match=r'phoneNumbers\[type eq "work"\]\.value'):
        mapping.to_attributes(user, None)


def test_ad_keeps_telephone_numbers_and_addresses_as_written():
    mapping = UserMapping(profile=ACTIVE_DIRECTORY)
    user = {
        "userName": "a",
        "phoneNumbers": [{"type": "work", "value": "+41 44 1 #9"}],
        "addresses": [{"type": "work", "formatted": "Road $1\nTown", "country": "Schweiz"}],
    }
    values = mapping.to_attributes(user, None)
    assert values["telephoneNumber"] == ["+41 44 1 #9"]
    assert values["postalAddress"] == ["Road $1\nTown"] and values["co"] == ["Schweiz"]
