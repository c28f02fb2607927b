"""Benchmarks of scim-ldap: ``python -m bench`` (``make bench``) runs the suite."""
