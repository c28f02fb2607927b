"""Sphinx helpers for the scim-ldap docs: generated settings tables and tolerant toctrees.

``.. scim-settings:: dotted.path.TO_SETTINGS`` renders a tuple of
:class:`scim_core.config.Setting` as a table (variable, default, meaning), so the
configuration reference is generated from the same declarations that validate the
environment at start-up.

``.. scim-toctree::`` is a ``toctree`` that lists only the documents that exist, and with
``:markdown:`` appends every other Markdown page of the folder: pages other people write
(``compatibility.md``, ``reliability.md``, ...) appear once they are there, and the build
stays free of warnings before.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.directives.other import TocTree
from sphinx.util.docutils import SphinxDirective

_LITERAL = re.compile(r"(``?)(.+?)\1")
_ENV_NAME = re.compile(r"\b(SCIM_[A-Z0-9_]+)\b")


def _text(doc: str) -> str:
    """A setting's doc as reST: `x` and SCIM_* names become literals, the rest is escaped."""
    parts: list[str] = []
    position = 0
    for match in _LITERAL.finditer(doc):
        parts.append(_escaped(doc[position : match.start()]))
        parts.append(f"``{match.group(2)}``")
        position = match.end()
    parts.append(_escaped(doc[position:]))
    return "".join(parts)


def _escaped(text: str) -> str:
    pieces = _ENV_NAME.split(text)
    out = []
    for index, piece in enumerate(pieces):
        if index % 2:
            out.append(f"``{piece}``")
        else:
            out.append(re.sub(r"([\\*_|`])", r"\\\1", piece))
    return "".join(out)


def _default(setting: Any) -> str:
    if setting.required:
        return "(required)"
    value = setting.default
    if value is None or (isinstance(value, (str, tuple, list, dict)) and not value):
        return ""
    if isinstance(value, bool):
        return "``true``" if value else "``false``"
    if isinstance(value, (tuple, list)):
        return "``" + ",".join(str(v) for v in value) + "``"
    return f"``{value}``"


class SettingsTable(SphinxDirective):
    """``.. scim-settings:: module.SETTINGS``: a table generated from ``Setting`` values."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        module_name, _, attribute = self.arguments[0].rpartition(".")
        settings = getattr(importlib.import_module(module_name), attribute)
        lines = [
            ".. list-table::",
            "   :header-rows: 1",
            "   :widths: 32 14 54",
            "",
            "   * - Variable",
            "     - Default",
            "     - Meaning",
        ]
        for setting in settings:
            meaning = _text(setting.doc)
            if setting.secret:
                meaning += " Secret: never printed."
                if f"{setting.name}_FILE" not in setting.doc:
                    meaning += f" ``{setting.name}_FILE`` may name a file holding it."
            lines += [
                f"   * - ``{setting.name}``",
                f"     - {_default(setting)}".rstrip(),
                f"     - {meaning}",
            ]
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=self.arguments[0]), 0, container)
        return container.children


class ExistingTocTree(TocTree):
    """A toctree of the listed documents that exist; ``:markdown:`` adds the other .md pages.

    The Markdown pages already listed by an earlier ``scim-toctree`` of the same document are
    not repeated.
    """

    option_spec = {**TocTree.option_spec, "markdown": directives.flag}

    def run(self) -> list[nodes.Node]:
        found = self.env.found_docs
        seen: set[str] = self.env.temp_data.setdefault("scim_toctree_listed", set())
        listed = [line.strip() for line in self.content if line.strip() in found]
        if "markdown" in self.options:
            listed += sorted(
                name
                for name in found
                if "/" not in name
                and name not in seen
                and name not in listed
                and name != self.env.docname
                and self.env.doc2path(name).suffix == ".md"
            )
        seen.update(listed)
        source = self.content.source(0) if self.content else self.env.docname
        self.content = StringList(listed, source=source)
        return super().run()


def _reread_index(
    app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    # A page added or removed changes what the :markdown: toctree of the index lists.
    return [app.config.root_doc] if added or removed else []


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directives."""
    app.add_directive("scim-settings", SettingsTable)
    app.add_directive("scim-toctree", ExistingTocTree)
    app.connect("env-get-outdated", _reread_index)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
