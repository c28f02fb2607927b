"""What responses leave out by ``returned`` (RFC 7643 §7), in one place for every level."""

from scim_core.projection import without_unreturned
from scim_core.schemas.attributes import DEFAULT_SCHEMAS, Unreturned

ACME = "urn:example:params:scim:schemas:extension:acme:2.0:User"


def test_the_default_schemas_name_the_password_and_a_members_display():
    user = DEFAULT_SCHEMAS.unreturned["User"]
    group = DEFAULT_SCHEMAS.unreturned["Group"]
    assert Unreturned(None, "password", None, False) in user
    assert Unreturned(None, "members", "display", True) in group


def test_never_always_goes_and_request_stays_only_when_asked_for():
    rules = (
        Unreturned(None, "password", None, False),
        Unreturned(None, "members", "display", True),
        Unreturned(ACME, "badge", None, True),
        Unreturned(ACME, "card", "pin", False),
    )
    resource = {
        "id": "1",
        "password": "canary-never-shown",
        "members": [{"value": "a", "display": "alice"}],
        ACME: {"badge": "42", "card": {"number": "7", "pin": "0000"}},
    }
    assert without_unreturned(resource, rules) == {
        "id": "1",
        "members": [{"value": "a"}],
        ACME: {"card": {"number": "7"}},
    }
    asked = frozenset({"members.display", f"{ACME}:badge".lower(), "password"})
    assert without_unreturned(resource, rules, asked) == {
        "id": "1",
        "members": [{"value": "a", "display": "alice"}],
        ACME: {"badge": "42", "card": {"number": "7"}},
    }
    only = {"id": "2", ACME: {"badge": "9"}}
    assert without_unreturned(only, rules) == {"id": "2"}  # an emptied extension goes too
    assert resource[ACME]["card"]["pin"] == "0000"  # the input is left as it was
