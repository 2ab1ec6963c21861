"""Engines from outside the package: ``EAGLE_TUI_ENGINES=module[:NAME],...`` registers each
module's profile (``PROFILE`` unless ``NAME`` is given) before the command runs.

An environment variable rather than package entry points: scanning every installed
distribution's metadata would be paid by every command's start, plugin or not.
"""

from __future__ import annotations

import importlib
import re

from eagle_tui.errors import UsageError
from eagle_tui.model.engines import EngineProfile, register

VARIABLE = "EAGLE_TUI_ENGINES"
MAX_PLUGINS = 32
_SPEC = re.compile(r"([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)(?::([A-Za-z_]\w*))?")


def load_engines(value: str | None) -> list[str]:
    """Register the profiles named by ``value`` (the variable's text); their engines' names.

    A spec that is not a module path, a module that does not import, or an attribute that is
    not an :class:`EngineProfile` is refused with one line naming the spec.
    """
    if not value or not value.strip():
        return []
    specs = [s.strip() for s in value.split(",") if s.strip()]
    if len(specs) > MAX_PLUGINS:
        raise UsageError(f"{VARIABLE}: {len(specs)} engines named, at most {MAX_PLUGINS}")
    names: list[str] = []
    for spec in specs:
        m = _SPEC.fullmatch(spec)
        if m is None:
            raise UsageError(f"{VARIABLE}: {spec[:200]!r} is not MODULE or MODULE:NAME")
        try:
            module = importlib.import_module(m.group(1))
        except Exception as exc:  # any failure of someone else's module is the user's input
            raise UsageError(f"{VARIABLE}: cannot import {m.group(1)}: "
                             f"{type(exc).__name__}: {str(exc)[:200]}") from None
        profile = getattr(module, m.group(2) or "PROFILE", None)
        if not isinstance(profile, EngineProfile):
            raise UsageError(f"{VARIABLE}: {spec} is not an engine profile "
                             f"(eagle_tui.model.engines.EngineProfile)")
        register(profile)
        names.append(profile.name)
    return names


__all__ = ["MAX_PLUGINS", "VARIABLE", "load_engines"]
