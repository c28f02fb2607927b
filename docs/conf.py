"""Sphinx configuration for the scim-ldap documentation (built by ``tox -e docs``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

import scim_core  # noqa: E402

project = "scim-ldap"
author = "scim-ldap maintainers"
copyright = "the scim-ldap maintainers"
version = release = scim_core.__version__

extensions = ["sphinx.ext.autodoc", "scim_docs"]
source_suffix = {".rst": "restructuredtext"}
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]

# Markdown pages (the changelog, the mapping tables from the README, and the pages other
# engineers write, such as compatibility.md and reliability.md) need myst-parser; without it
# they are left out and the rest still builds.
if importlib.util.find_spec("myst_parser") is not None:
    extensions.append("myst_parser")
    source_suffix[".md"] = "markdown"
    myst_heading_anchors = 3
    # Markdown written for the repository links to files outside docs/ and may skip heading
    # levels; neither is an error for this site.
    suppress_warnings = ["myst.xref_missing", "myst.header"]
else:
    exclude_patterns.append("*.md")

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "signature"
autoclass_content = "class"

html_theme = "alabaster"
html_title = f"scim-ldap {release}"
html_theme_options = {"description": "SCIM 2.0 provisioning over LDAP", "fixed_sidebar": True}
