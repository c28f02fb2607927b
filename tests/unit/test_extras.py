"""The core installed alone (``pip install scim-ldap``: lark and marshmallow only): nothing it
imports needs an extra, and what does need one says which. tests/release/check_dist.py proves
the same on a real bare install of the wheel."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from scim_core import ScimRequest, ScimService
from scim_core.backends.memory import MemoryBackend
from scim_core.config import ConfigError

#: Top-level modules of the extras' distributions.
EXTRA_MODULES = ("flask", "werkzeug", "ldap3", "jwt", "prometheus_client", "apispec", "gunicorn")


def test_the_core_and_its_helpers_import_without_any_extra():
    # A module set to None in sys.modules cannot be imported: as if it were not installed.
    script = textwrap.dedent(
        f"""
        import sys
        for name in {EXTRA_MODULES!r}:
            sys.modules[name] = None
        import scim_core, scim_core.auth, scim_core.oauth, scim_core.backends.memory
        import scim_core.testing.slapd, scim_core.testing.dirsrv, scim_core.testing.samba
        from scim_core import ScimRequest, ScimService, load_backend
        service = ScimService(load_backend("memory")({{}}))
        assert service.handle(ScimRequest("GET", "/ServiceProviderConfig")).status == 200
        try:
            load_backend("ldap")
        except ModuleNotFoundError as error:
            print(error)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "the LDAP backend needs ldap3: pip install 'scim-ldap[ldap]'"


def test_openapi_without_apispec_is_501(monkeypatch):
    monkeypatch.setitem(sys.modules, "scim_core.schemas.openapi", None)
    answer = ScimService(MemoryBackend()).handle(ScimRequest("GET", "/openapi.json"))
    assert answer.status == 501
    assert answer.body is not None and "scim-ldap[openapi]" in answer.body["detail"]


def test_a_jwt_issuer_without_pyjwt_is_a_configuration_error(monkeypatch):
    import scim_core.oauth
    from scim_flask.settings import AppSettings

    monkeypatch.setattr(scim_core.oauth, "_PYJWT_MISSING", ImportError("No module named 'jwt'"))
    environ = {
        "SCIM_JWT_ISSUER": "https://login.example.test/tenant/v2.0",
        "SCIM_JWT_JWKS": "https://login.example.test/keys",
        "SCIM_JWT_AUDIENCE": "api://scim",
    }
    with pytest.raises(ConfigError) as refused:
        AppSettings.from_environ(environ)
    assert str(refused.value) == (
        "SCIM_JWT_ISSUER: JWT bearer tokens need PyJWT: pip install 'scim-ldap[jwt]'"
    )
