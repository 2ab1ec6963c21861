"""Every test runs with its own data, config, state and cache directories.

The user's own eagle-tui directories (resolved before anything is redirected) are fingerprinted at
the start and checked after every test: a test that writes into them fails, naming the folder.
Child processes (servers, `eagle-tui` runs, tmux) inherit the redirected environment because the
session-wide values are set in ``os.environ`` before any test starts.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs
import pytest

if TYPE_CHECKING:
    from tests.support.containers import ContainerEngine

APP = "eagle-tui"
KINDS = ("data", "config", "state", "cache")
XDG = {"data": "XDG_DATA_HOME", "config": "XDG_CONFIG_HOME", "state": "XDG_STATE_HOME",
       "cache": "XDG_CACHE_HOME"}


def user_dirs() -> dict[str, Path]:
    """The user's eagle-tui folders as the app would resolve them with the current environment."""
    dirs = {kind: Path(getattr(platformdirs, f"user_{kind}_dir")(APP, appauthor=False))
            for kind in KINDS}
    if os.environ.get("EAGLE_TUI_DATA_DIR"):
        dirs["data_env"] = Path(os.environ["EAGLE_TUI_DATA_DIR"])
    return dirs


def fingerprint(folder: Path, limit: int = 2000) -> tuple[tuple[str, int, int], ...] | None:
    """What is in ``folder`` (names, sizes, mtimes; at most ``limit`` entries), None if absent."""
    if not folder.exists():
        return None
    seen: list[tuple[str, int, int]] = []
    for root, _dirs, files in os.walk(folder):
        for name in [".", *files]:
            path = Path(root) / name
            try:
                st = path.stat()
            except OSError:
                continue
            seen.append((str(path.relative_to(folder)), st.st_size, st.st_mtime_ns))
            if len(seen) >= limit:
                return tuple(sorted(seen))
    return tuple(sorted(seen))


# Resolved at import, before pytest_configure redirects anything: these are the user's own.
USER_DIRS = user_dirs()
_BASE = Path(tempfile.mkdtemp(prefix="eagle-tui-tests-"))
_SERIAL = count()
_BEFORE = pytest.StashKey[dict[str, object]]()


def _point_at(base: Path, env: os._Environ[str] | pytest.MonkeyPatch) -> None:
    values = {XDG[kind]: str(base / kind) for kind in KINDS}
    values["EAGLE_TUI_DATA_DIR"] = str(base / "data" / APP)
    for key, value in values.items():
        Path(value).mkdir(parents=True, exist_ok=True)
        if isinstance(env, pytest.MonkeyPatch):
            env.setenv(key, value)
        else:
            env[key] = value


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_BEFORE] = {kind: fingerprint(path) for kind, path in USER_DIRS.items()}
    # Session-wide: session-scoped servers and anything started outside a test see these too.
    _point_at(_BASE / "session", os.environ)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_BASE, ignore_errors=True)


def touched(before: dict[str, object]) -> list[str]:
    """The user folders whose content differs from ``before``."""
    return [f"{kind}: {USER_DIRS[kind]}" for kind in USER_DIRS
            if fingerprint(USER_DIRS[kind]) != before.get(kind)]


@pytest.fixture(autouse=True)
def _own_directories(request: pytest.FixtureRequest,
                     monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    _point_at(_BASE / f"t{next(_SERIAL)}", monkeypatch)
    yield
    changed = touched(request.config.stash[_BEFORE])
    if changed:
        # Re-baseline so one offender does not fail every later test.
        request.config.stash[_BEFORE] = {k: fingerprint(p) for k, p in USER_DIRS.items()}
        pytest.fail("this test wrote into the user's own eagle-tui folders: " + "; ".join(changed))


class Guard:
    """What tests/unit/structure/test_isolation.py checks the guard with (conftest is not
    importable)."""

    user_dirs = USER_DIRS
    fingerprint = staticmethod(fingerprint)
    touched = staticmethod(touched)


@pytest.fixture
def isolation_guard() -> type[Guard]:
    return Guard


@pytest.fixture(scope="session")
def containers() -> Iterator[ContainerEngine]:
    """The real container engine (tests/support/containers.py): skipped with the reason where
    podman or the docker CLI is missing, failed instead when EAGLE_TUI_REQUIRE_CONTAINERS is set
    (tests/run.sh); every container it started is removed at the end of the session."""
    from tests.support import containers as engine

    why = engine.missing()
    if why:
        if os.environ.get("EAGLE_TUI_REQUIRE_CONTAINERS"):
            pytest.fail(f"EAGLE_TUI_REQUIRE_CONTAINERS is set but {why}")
        pytest.skip(why)
    started = engine.start()
    try:
        yield started
    finally:
        started.close()
