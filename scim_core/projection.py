"""``attributes`` / ``excludedAttributes`` (RFC 7644 §3.4.2.5) applied to an outgoing resource."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scim_core.errors import InvalidValue
from scim_core.schemas.attributes import Unreturned

__all__ = ["MAX_PROJECTED_NAMES", "Projection", "parse_projection", "without_unreturned"]

_ALWAYS = frozenset({"id", "schemas", "meta"})
#: Names ``attributes`` or ``excludedAttributes`` may list: every attribute and sub-attribute
#: of a User, with its schema URN, fits several times over; more is an attack, not a request.
MAX_PROJECTED_NAMES = 200
#: The longest name: an extension URN with an attribute and sub-attribute fits.
_MAX_NAME_LENGTH = 256


def _names(raw: str | None, core_urn: str) -> frozenset[str]:
    if not raw:
        return frozenset()
    if raw.count(",") >= MAX_PROJECTED_NAMES:  # counted before anything is split
        raise InvalidValue(
            f"attributes and excludedAttributes list at most {MAX_PROJECTED_NAMES} names."
        )
    names = set()
    for item in raw.split(","):
        if len(item) > _MAX_NAME_LENGTH:
            raise InvalidValue(
                f"An attribute name in attributes or excludedAttributes is longer than "
                f"{_MAX_NAME_LENGTH} characters."
            )
        name = item.strip().lower()
        prefix = core_urn.lower() + ":"
        if name.startswith(prefix):
            name = name[len(prefix) :]
        if name:
            names.add(name)
    return frozenset(names)


@dataclass(frozen=True)
class Projection:
    """Which attributes a response carries; names are lower case, optionally ``parent.sub``."""

    include: frozenset[str] = frozenset()
    exclude: frozenset[str] = frozenset()

    def top_level(self) -> frozenset[str] | None:
        """The top-level attributes a backend must fetch, or ``None`` for all: a core name
        without its sub-attribute; for an extension's ``urn:...:attribute[.sub]``, both
        ``urn:...:attribute`` and the extension's URN (a URN may hold dots: ``2.0``)."""
        if not self.include:
            return None
        names = set(_ALWAYS)
        for name in self.include:
            if not name.startswith("urn:"):
                names.add(name.split(".")[0])
                continue
            urn, _, last = name.rpartition(":")
            names |= {f"{urn}:{last.split('.')[0]}", urn}
        return frozenset(names)

    def wants(self, name: str) -> bool:
        """Whether the top-level attribute ``name`` appears in the response at all."""
        lowered = name.lower()
        if lowered in _ALWAYS:
            return True
        if self.include:
            return any(n == lowered or n.startswith(lowered + ".") for n in self.include) or (
                lowered.startswith("urn:") and any(n.startswith(lowered) for n in self.include)
            )
        return lowered not in self.exclude

    def apply(self, resource: Mapping[str, Any]) -> dict[str, Any]:
        """The resource with only the wanted attributes (and sub-attributes)."""
        if not self.include and not self.exclude:
            return dict(resource)  # nothing asked: every attribute (a list page's usual case)
        result: dict[str, Any] = {}
        for key, value in resource.items():
            if not self.wants(key):
                continue
            inner = {
                n[len(key) + 1 :].split(".")[0]
                for n in self.include
                if n.startswith(key.lower() + ":")
            }
            if inner and isinstance(value, dict) and key.lower() not in self.include:
                value = {k: v for k, v in value.items() if k.lower() in inner}  # an extension's
            # SCIM nests one level: a name's parts past its sub-attribute select nothing more.
            subs = {n.split(".")[1] for n in self.include if n.startswith(key.lower() + ".")}
            if subs and isinstance(value, dict) and key.lower() not in self.include:
                value = {k: v for k, v in value.items() if k.lower() in subs}
            elif subs and isinstance(value, list) and key.lower() not in self.include:
                value = [
                    {k: v for k, v in item.items() if k.lower() in subs}
                    for item in value
                    if isinstance(item, dict)
                ]
            result[key] = value
        return result


def parse_projection(query: Mapping[str, str], core_urn: str) -> Projection:
    """Read ``attributes`` and ``excludedAttributes`` from query parameters (or a .search body)."""
    return Projection(
        include=_names(query.get("attributes"), core_urn),
        exclude=_names(query.get("excludedAttributes"), core_urn),
    )


def without_unreturned(
    resource: Mapping[str, Any],
    unreturned: Sequence[Unreturned],
    asked: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """``resource`` without what its schemas never return, nor what they return only when
    ``attributes`` names it and ``asked`` (its lower-case names) does not (RFC 7643 §7)."""
    shown = dict(resource)
    for rule in unreturned:
        if rule.on_request and rule.asked_as & asked:
            continue
        holder: Any = shown if rule.schema is None else shown.get(rule.schema)
        if not isinstance(holder, dict) or rule.name not in holder:
            continue
        holder = dict(holder)
        if rule.sub is None:
            del holder[rule.name]
        else:
            holder[rule.name] = _without_sub(holder[rule.name], rule.sub)
        if rule.schema is None:
            shown = holder
        elif holder:
            shown[rule.schema] = holder
        else:
            del shown[rule.schema]
    return shown


def _without_sub(value: Any, sub: str) -> Any:
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k.lower() != sub.lower()}
    if isinstance(value, list):
        return [_without_sub(item, sub) for item in value]
    return value
