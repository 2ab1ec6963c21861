"""Which path says whether a server is ready, without making it work: each engine's ``Endpoints``
(``ready``, ``health``, ``health_works``, ``alive``), or every engine's when it is not known yet.

:class:`ReadinessChoice` is the health poller's memory of one server: the readiness path found
once (the first answer that is not 404/405), and after a working ``/health`` said 200, the
no-work path asked instead while the server stays up. The rule is in docs/architecture.md,
"Module notes", ``sources/health``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from eagle_tui.model.engines.facets import Endpoints
from eagle_tui.model.engines.registry import profile_of, profiles

MISSING = (404, 405)  # "no such endpoint here": the next candidate is asked at once


def _unique(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(paths))


def _endpoints(engine: str | None) -> list[Endpoints]:
    """The engine's endpoints, or every registered engine's while it is not known."""
    p = profile_of(engine)
    return [p.endpoints] if p is not None else [q.endpoints for q in profiles()]


def readiness_paths(engine: str | None) -> tuple[str, ...]:
    """No-work readiness paths first, then ``/health`` (each engine's, in registration order)."""
    eps = _endpoints(engine)
    return _unique([*(p for e in eps for p in e.ready), *(e.health for e in eps)])


def health_works(engine: str | None, path: str) -> bool:
    """Whether asking ``path`` may make the server work; an unknown engine's ``/health`` is
    taken to, if any engine's does."""
    return any(e.health_works and e.health == path for e in _endpoints(engine))


def alive_paths(engine: str | None) -> tuple[str, ...]:
    return _unique(p for e in _endpoints(engine) for p in e.alive)


def quiet_paths(engine: str | None = None) -> tuple[str, ...]:
    """Paths that do no work, best first: the readiness paths, a ``/health`` that does no
    work, the liveness paths; ``/health`` itself last (where nothing else answers)."""
    eps = _endpoints(engine)
    cheap = [e.health for e in eps if not e.health_works]
    return _unique([*(p for e in eps for p in e.ready), *cheap,
                    *(p for e in eps for p in e.alive), *(e.health for e in eps)])


class ReadinessChoice:
    """The paths one server is asked, found once and kept until :meth:`forget`.

    ``engine`` says the engine's name when known (``None``/"unknown" before). The poller asks
    :meth:`path`, tells :meth:`answered` each HTTP status (``None``: no HTTP answer) and asks
    again at once while that returns True (a 404/405 on a candidate: the next one).
    """

    def __init__(self, engine: Callable[[], str | None] = lambda: None) -> None:
        self._engine = engine
        self.ready_path: str | None = None  # the readiness path, once it answered
        self.alive_path: str | None = None  # asked instead of it while the server is up
        self.alive_missing = False  # every liveness path answered 404: only ``ready_path``
        self.up = False  # the readiness path said 200 and it makes the server work
        self._tried: list[str] = []  # candidates that answered 404/405 (this round)

    def forget(self) -> None:
        """Nothing listens any more: the next server there may be another engine or version."""
        self.ready_path = self.alive_path = None
        self.alive_missing = self.up = False
        self._tried.clear()

    def _candidates(self, paths: tuple[str, ...]) -> list[str]:
        return [p for p in paths if p not in self._tried]

    def _others(self, paths: tuple[str, ...], path: str) -> bool:
        """Whether a candidate other than ``path`` is left to ask."""
        return any(p != path for p in self._candidates(paths))

    def path(self) -> str:
        engine = self._engine()
        if self.ready_path is None:
            left = self._candidates(readiness_paths(engine))
            return left[0] if left else readiness_paths(engine)[-1]
        if self.up and not self.alive_missing:
            if self.alive_path is not None:
                return self.alive_path
            left = self._candidates(alive_paths(engine))
            if left:
                return left[0]
            self.alive_missing = True
        return self.ready_path

    def answered(self, path: str, status: int | None) -> bool:
        """Record the answer to ``path``; True when the next candidate should be asked now."""
        engine = self._engine()
        if status in MISSING:
            # (the engine may have become known since ``path`` was chosen: what is left counts)
            if self.ready_path is None and self._others(readiness_paths(engine), path):
                self._tried.append(path)
                return True
            if self.up and self.alive_path is None and path in alive_paths(engine):
                self._tried.append(path)
                return True
        if status is None:  # no answer from a liveness path: the readiness path says next
            self.up = self.up and path == self.ready_path
            return False
        if self.ready_path is None:
            self.ready_path = path
            self._tried.clear()
        if path == self.alive_path or (self.up and path in alive_paths(engine)):
            self.alive_path = path
            self.up = status == 200  # anything else: the readiness path says what it is
            return False
        self.up = status == 200 and health_works(engine, path)
        return False


__all__ = ["MISSING", "ReadinessChoice", "alive_paths", "health_works", "quiet_paths",
           "readiness_paths"]
