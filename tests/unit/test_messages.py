"""ScimResponse: one body, whether given whole or in chunks."""

from __future__ import annotations

from scim_core.messages import ScimRequest, ScimResponse


def test_a_body_is_compact_utf8_json():
    response = ScimResponse(200, {"userName": "jösé", "emails": [{"value": "j@x"}]})
    expected = '{"userName":"jösé","emails":[{"value":"j@x"}]}'.encode()
    assert response.body_bytes() == expected
    assert list(response.iter_bytes()) == [expected]
    assert response.json() == {"userName": "jösé", "emails": [{"value": "j@x"}]}


def test_no_body_is_empty():
    response = ScimResponse(204)
    assert response.body_bytes() == b""
    assert list(response.iter_bytes()) == [b""]
    assert response.json() is None
    assert response.headers == {}


def test_chunks_are_sent_as_made_and_joined_on_demand():
    chunks = (b'{"members":[', '{"value":"ä"}'.encode(), b"]}")
    response = ScimResponse(200, chunks=chunks)
    assert response.iter_bytes() is chunks
    assert response.body_bytes() == b'{"members":[{"value":"\xc3\xa4"}]}'
    assert response.json() == {"members": [{"value": "ä"}]}


def test_a_request_defaults_to_no_body_and_no_headers():
    request = ScimRequest("GET", "/Users")
    assert (request.query, request.body, request.content_type, request.if_match) == (
        {},
        b"",
        None,
        None,
    )
    assert (request.base_url, request.principal) == ("", None)
