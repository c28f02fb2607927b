"""Benchmarks of scim-ldap: ``python -m bench`` (``make bench``) runs issue 7's suite."""
