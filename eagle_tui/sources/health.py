"""Poll the server's readiness and classify every answer, including the non-answers.

The blind ``until curl -sf /health; do sleep 10; done`` loop this replaces cannot tell a server
that is still loading from one that died: both are "not 200". Here each poll becomes one
``HealthSample`` with a state the user can act on (listed in the notes).

The path is the engine's that does no work (SGLang's ``/ready``: its ``/health`` generates),
found once per server (:class:`~eagle_tui.model.engines.readiness.ReadinessChoice`). More in
docs/architecture.md, "Module notes", ``sources/health``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Callable

import httpx

from eagle_tui.model.engines.readiness import ReadinessChoice
from eagle_tui.model.events import Event, HealthSample, HealthState
from eagle_tui.sources.base import paced, under_limit
from eagle_tui.sources.hold import HoldWatch
from eagle_tui.sources.http_budget import (
    HEALTH_MAX_BYTES,
    BodyTooLarge,
    DeadlineExceeded,
    get_bounded,
)
from eagle_tui.sources.tls import PLAIN_TO_TLS, speaks_tls, tls_reason
from eagle_tui.transport.base import ConnectionLost, Transport, TransportError

DEFAULT_INTERVAL_S = 1.0
DEFAULT_TIMEOUT_S = 2.0
READY_INTERVAL_S = 5.0  # once ready; any other answer goes back to ``interval``


def classify(status_code: int) -> HealthState:
    if status_code == 200:
        return "ready"
    if status_code == 503:
        return "starting"
    return "error"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


async def probe(client: httpx.AsyncClient, path: str, clock: Callable[[], float],
                deadline_s: float | None = None) -> HealthSample:
    """One request → one sample. Every httpx failure maps to a state; nothing escapes.

    The whole answer must come within ``deadline_s`` (the client's timeout by default): a
    server that sends "200" and then drips its body is ``timeout``, never "ready".
    """
    t0 = time.perf_counter()
    deadline = deadline_s if deadline_s is not None else (client.timeout.read or DEFAULT_TIMEOUT_S)
    try:
        resp = await get_bounded(client, path, deadline_s=deadline, max_bytes=HEALTH_MAX_BYTES)
    except DeadlineExceeded as exc:
        got = f" (HTTP {exc.status_code} came, its body did not)" if exc.status_code else ""
        return HealthSample("timeout", clock(), None, time.perf_counter() - t0,
                            f"no complete answer within {deadline:g} s{got}")
    except BodyTooLarge:
        return HealthSample("error", clock(), None, time.perf_counter() - t0,
                            f"an answer larger than {HEALTH_MAX_BYTES >> 10} KB")
    except httpx.ConnectError as exc:
        if tls := tls_reason(exc):  # something listens: it failed the handshake
            return HealthSample("error", clock(), None, time.perf_counter() - t0, tls)
        return HealthSample("no_listener", clock(), None, None, _first_line(exc))
    except httpx.TimeoutException:
        return HealthSample("timeout", clock(), None, time.perf_counter() - t0,
                            f"no answer within {client.timeout.read or 0:g} s")
    except (httpx.RemoteProtocolError, httpx.DecodingError) as exc:
        return HealthSample("error", clock(), None, time.perf_counter() - t0,
                            tls_reason(exc) or f"not an HTTP answer: {_first_line(exc)}")
    except (httpx.TransportError, TransportError) as exc:
        # (a ConnectionLost of the SSH link is the transport's: the session retries the source)
        if isinstance(exc, ConnectionLost):
            raise
        return HealthSample("error", clock(), None, time.perf_counter() - t0, _first_line(exc))
    latency = time.perf_counter() - t0
    state = classify(resp.status_code)
    error = "" if state in ("ready", "starting") else f"HTTP {resp.status_code}"
    return HealthSample(state, clock(), resp.status_code, latency, error)


def _link_down(transport: Transport) -> str:
    """Why the transport's own link is down (SSH reconnecting or failed), ``""`` when it is up
    or has no link (local): a request that ran out of time then says nothing of the server."""
    state = getattr(transport, "state", None)
    what = getattr(state, "state", "connected")
    if not isinstance(what, str) or what == "connected":
        return ""
    return f"the SSH connection to {transport.host} is {what}"


def listening_urls(pid: int) -> list[str]:
    """``http://`` URLs of the TCP ports that ``pid`` or its descendants listen on.

    Used when only ``--pid`` is given: the server's HTTP port is one of these (vLLM also listens
    on internal ZMQ ports, which the probe in :class:`HealthPoller` tells apart by their answer).
    Wildcard and public addresses come first, then loopback; lower ports first within each.
    """
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return []
    found: set[tuple[bool, int, str]] = set()
    for proc in procs:
        try:
            conns = proc.net_connections(kind="tcp")
        except psutil.Error:
            continue
        for c in conns:
            if c.status != psutil.CONN_LISTEN or not c.laddr:
                continue
            ip, port = c.laddr.ip, c.laddr.port
            loopback = ip.startswith("127.") or ip == "::1"
            host = "127.0.0.1" if ip in ("0.0.0.0", "::", "") or loopback else ip
            if ":" in host:
                host = f"[{host}]"
            found.add((loopback, port, f"http://{host}:{port}"))
    return [url for _, _, url in sorted(found)]


class HealthPoller:
    """Source of ``HealthSample`` events, one per ``interval`` seconds.

    With ``base_url=None`` and a ``discover`` callable (returning candidate base URLs, e.g.
    :func:`listening_urls` of a pid), the first candidate that answers ``/health`` with any
    HTTP status is adopted; until then nothing is emitted.

    With a ``choice``, the path is the engine's no-work readiness path it finds (``path`` is
    then the one asked last), each asked as ``mark`` makes it (eagle-tui's own mark). With a
    ``hold``, each sample may be followed by the hold samples it asks for (:mod:`.hold`).
    """

    def __init__(
        self,
        transport: Transport,
        base_url: str | None,
        *,
        discover: Callable[[], list[str]] | None = None,
        path: str = "/health",
        interval: float = DEFAULT_INTERVAL_S,
        ready_interval: float | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        name: str = "health",
        max_polls: int | None = None,
        clock: Callable[[], float] = time.time,
        choice: ReadinessChoice | None = None,
        mark: Callable[[str], str] = str,
        hold: HoldWatch | None = None,
    ) -> None:
        if interval <= 0 or timeout <= 0:
            raise ValueError("interval and timeout must be positive")
        if base_url is None and discover is None:
            raise ValueError("HealthPoller needs a base_url or a discover callable")
        self.name = name
        self.transport = transport
        self.base_url = base_url
        self.discover = discover
        self.choice = choice
        self.mark = mark
        self.hold = hold  # asks whether the server sleeps or is paused, after a sample
        self.path = choice.path() if choice is not None else path
        self.interval = interval
        self.ready_interval = interval if ready_interval is None else max(interval,
                                                                          ready_interval)
        self.timeout = timeout
        self.max_polls = max_polls
        self._clock = clock
        self.polls = 0
        self._every = self.interval  # the wait before the next poll (longer once ready)
        # whether the port was asked if it speaks TLS since the last HTTP answer (once: the
        # question costs a second request)
        self._tls_asked: bool | None = None

    async def _discover(self) -> str:
        assert self.discover is not None
        probe_timeout = min(self.timeout, 0.5)
        while True:
            for url in await asyncio.to_thread(self.discover):
                async with self.transport.http_client(url, probe_timeout) as client:
                    sample = await probe(client, self.mark(self.path), self._clock)
                if sample.status_code is not None:  # it speaks HTTP: this is the server
                    return url
            await asyncio.sleep(self.interval)

    async def _name_tls(self, sample: HealthSample) -> HealthSample:
        """An ``http://`` poll that got no HTTP answer (reset, hung up): when the port completes
        a TLS handshake, say so instead of a bare reset."""
        if sample.status_code is not None or sample.state == "ready":
            self._tls_asked = None
            return sample
        if sample.state != "error" or sample.error.startswith("tls:") or self.base_url is None:
            return sample
        if self._tls_asked is None:
            self._tls_asked = await speaks_tls(self.transport, self.base_url,
                                               self.mark(self.path), self.timeout)
        return dataclasses.replace(sample, error=PLAIN_TO_TLS) if self._tls_asked else sample

    async def _ask(self, client: httpx.AsyncClient) -> HealthSample:
        """One poll: with a ``choice``, a candidate that is not there (404/405) hands over to
        the next at once, and no listener forgets the paths found."""
        while True:
            if self.choice is not None:
                self.path = self.choice.path()
            sample = dataclasses.replace(await probe(client, self.mark(self.path), self._clock),
                                         path=self.path.partition("?")[0])
            if self.choice is None:
                return sample
            if sample.state == "no_listener":
                self.choice.forget()
                return sample
            if not self.choice.answered(self.path, sample.status_code):
                return sample

    async def events(self) -> AsyncIterator[Event]:
        if self.base_url is None:
            self.base_url = await self._discover()
        self._every = self.interval
        async with self.transport.http_client(self.base_url, self.timeout) as client:
            async for _ in paced(lambda: self._every, under_limit(self)):
                sample = await self._ask(client)
                if sample.state == "timeout" and sample.status_code is None and (
                        down := _link_down(self.transport)):
                    raise ConnectionLost(down)  # not the server's state: the source is retried
                sample = await self._name_tls(sample)
                self.polls += 1
                yield sample
                if self.hold is not None:
                    for held in await self.hold.ask(client, sample):
                        yield held
                self._every = self.ready_interval if sample.state == "ready" else self.interval


__all__ = ["HealthPoller", "classify", "listening_urls", "probe"]
