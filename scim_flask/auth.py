"""Bearer-token authentication of the Flask adapter: :mod:`scim_core.auth`'s, re-exported.

The framework-free part (digests, header parsing, the constant-time comparison) lives in the
core so that other adapters share it; this module keeps the names the adapter has always used.
"""

from scim_core.auth import TokenSet, digest, parse_tokens

__all__ = ["TokenSet", "digest", "parse_tokens"]
