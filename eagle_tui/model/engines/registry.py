"""The engines eagle-tui knows: the built-in profiles and any registered later (a plugin, a
test's toy engine). Lookups by name answer ``None`` for a name nobody registered."""

from __future__ import annotations

from collections.abc import Iterator

from eagle_tui.model.engines import sglang, vllm
from eagle_tui.model.engines.profile import EngineProfile

_PROFILES: dict[str, EngineProfile] = {}
_generation = 0  # bumped by every change: what a consumer caching a table of profiles checks


def register(profile: EngineProfile) -> EngineProfile:
    """Add (or replace) an engine; its name is what records, history and ``--engine`` carry."""
    global _generation
    _PROFILES[profile.name] = profile
    _generation += 1
    return profile


def unregister(name: str) -> None:
    """Forget an engine (a test's toy engine, after the test)."""
    global _generation
    _PROFILES.pop(name, None)
    _generation += 1


def profile_of(name: str | None) -> EngineProfile | None:
    """The profile of an engine's name, ``None`` for "unknown" or a name nobody registered."""
    return _PROFILES.get(name) if name else None


def profiles() -> Iterator[EngineProfile]:
    """Every registered engine, built-in ones first, in registration order."""
    return iter(tuple(_PROFILES.values()))


def run_first(name: str | None) -> tuple[str, ...]:
    """The details of the INIT events of the line an engine prints once, first, at each start
    (``LogFacet.run_first``); every engine's while the engine is unknown."""
    profile = profile_of(name)
    if profile is not None:
        return profile.logs.run_first
    return tuple(t for p in _PROFILES.values() for t in p.logs.run_first)


def generation() -> int:
    """A number that changes whenever an engine is registered or forgotten (a cache's key)."""
    return _generation


def names() -> tuple[str, ...]:
    return tuple(_PROFILES)


register(sglang.PROFILE)
register(vllm.PROFILE)

__all__ = ["generation", "names", "profile_of", "profiles", "register", "run_first",
           "unregister"]
