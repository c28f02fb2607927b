"""scim_core is framework-free: importing it loads no flask, werkzeug or ldap3."""

import subprocess
import sys


def test_core_imports_no_framework_and_no_ldap():
    code = (
        "import sys, scim_core, scim_core.service, scim_core.backends.memory;"
        "bad = sorted(m for m in ('flask', 'werkzeug', 'ldap3') if m in sys.modules);"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_ldap_plugin_is_reached_through_its_entry_point():
    from scim_core.backend import load_backend

    assert load_backend("memory")({}).__class__.__name__ == "MemoryBackend"
    assert load_backend("ldap").__module__ == "scim_core.backends.ldap"
