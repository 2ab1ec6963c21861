"""What the running server says about itself: speculative settings, model, memory, version.

Which paths, and how their JSON reads, is each engine's (its profile's ``Endpoints``): SGLang's
``/server_info`` (older ``/get_server_info``) is the authoritative place for the speculative
settings in effect and the lifetime ``avg_spec_accept_length``; vLLM's ``/v1/models`` gives the
served model name. The engine is not known before an answer, so every registered engine's paths
are asked in turn. The endpoint that works is remembered, and the info is re-read every
``interval`` seconds because ``avg_spec_accept_length`` and memory usage change (``/v1/models``,
all vLLM has, only every ``models_interval``: a model name does not change while it serves).

Endpoints that answered 404 are remembered too and not asked again: on vLLM, asking
``/server_info`` and ``/get_server_info`` every retry put two 404 lines in its log each time.
They are asked again once the server stops answering (a restart may be another engine or
version) or after ``forget_after`` seconds. Every request carries eagle-tui's mark
(``?eagle-tui``), which the log view folds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace

import httpx

from eagle_tui.model.bench.windows import own_path
from eagle_tui.model.boundary.loaders import LoadError
from eagle_tui.model.engines import profiles
from eagle_tui.model.engines.sglang.server_info import (
    parse_server_info as parse_sglang_server_info,
)
from eagle_tui.model.events import Event, ServerInfo
from eagle_tui.sources.http_budget import (
    INFO_MAX_BYTES,
    BodyTooLarge,
    DeadlineExceeded,
    get_bounded,
)
from eagle_tui.transport.base import Transport

DEFAULT_INTERVAL_S = 10.0
DEFAULT_TIMEOUT_S = 5.0
MODELS_INTERVAL_S = 60.0
FORGET_404_S = 300.0
MAX_TEXT = 512
InfoReader = Callable[[object, float], ServerInfo]


def _paths() -> tuple[dict[str, InfoReader], tuple[str, ...]]:
    """Every registered engine's endpoints: the paths of what a server says about itself
    (each with the reader of its JSON), then the model lists, in the order they are asked."""
    info: dict[str, InfoReader] = {}
    for p in profiles():
        e = p.endpoints
        if e.server_info is not None and e.read_server_info is not None:
            for path in (e.server_info, *e.server_info_aliases):
                info.setdefault(path, e.read_server_info)
    models = tuple(dict.fromkeys(p.endpoints.models for p in profiles()
                                 if p.endpoints.models not in info))
    return info, models


def parse_openai_models(data: object, t: float) -> ServerInfo:
    """``/v1/models`` JSON → ``ServerInfo`` with the first served model's id."""
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError("/v1/models did not return an OpenAI model list")
    models = [m for m in data["data"] if isinstance(m, dict)]
    first = models[0].get("id") if models else None
    name = first[:MAX_TEXT] if isinstance(first, str) and first else None
    return ServerInfo(t=t, model_name=name)


class ServerInfoSource:
    """Source of ``ServerInfo`` events; quiet while the server is not answering yet."""

    def __init__(
        self,
        transport: Transport,
        base_url: str,
        *,
        interval: float = DEFAULT_INTERVAL_S,
        retry_interval: float = 1.0,
        timeout: float = DEFAULT_TIMEOUT_S,
        name: str = "server_info",
        max_polls: int | None = None,
        clock: Callable[[], float] = time.time,
        models_interval: float = MODELS_INTERVAL_S,
        forget_after: float = FORGET_404_S,
    ) -> None:
        self.name = name
        self.models_interval = max(interval, models_interval)
        self.forget_after = forget_after
        self.missing: dict[str, float] = {}  # path → when it answered 404 (monotonic)
        self._answered = False
        self.transport = transport
        self.base_url = base_url
        self.interval = interval
        self.retry_interval = retry_interval
        self.timeout = timeout
        self.max_polls = max_polls
        self._clock = clock
        self.path: str | None = None  # the endpoint that answered, once known
        self.models_path = False  # whether it is a model list (re-read less often)
        self.polls = 0
        self._said: ServerInfo | None = None  # the last answer given, its time left out

    async def _get_json(self, client: httpx.AsyncClient, path: str) -> object | None:
        """JSON body, ``None`` for 404; raises httpx errors for "not up yet".

        The answer must be complete within ``timeout`` and :data:`INFO_MAX_BYTES`: a server
        that drips or floods it is "not answering" (the deadline) or refused (the cap).
        """
        try:
            resp = await get_bounded(client, own_path(path), deadline_s=self.timeout,
                                     max_bytes=INFO_MAX_BYTES)
        except DeadlineExceeded as exc:
            if exc.status_code is not None:
                self._answered = True
            raise httpx.ReadTimeout(str(exc)) from None
        except BodyTooLarge as exc:
            raise ValueError(str(exc)) from None
        if resp.status_code == 404:
            self.missing[path] = time.monotonic()
            return None
        if resp.status_code == 503:
            self._answered = True  # it answers, only not yet: not a restart
            raise httpx.ConnectError("server starting (503)")
        if resp.status_code != 200:
            raise ValueError(f"{path} answered HTTP {resp.status_code}")
        try:
            data: object = resp.json(f"the {path} answer")
        except LoadError as exc:
            raise ValueError(f"{path} did not answer usable JSON ({exc.reason})") from None
        return data

    async def fetch(self, client: httpx.AsyncClient) -> ServerInfo | None:
        """One attempt; ``None`` when the server is not answering yet."""
        now = time.monotonic()
        self.missing = {p: t for p, t in self.missing.items() if now - t < self.forget_after}
        self._answered = False
        info, models = _paths()
        every = (*info, *models)
        paths = (self.path,) if self.path else tuple(p for p in every if p not in self.missing)
        try:
            for path in paths:
                assert path is not None
                data = await self._get_json(client, path)
                if data is None:
                    continue
                self.path = path
                self.models_path = path not in info
                read = info.get(path, parse_openai_models)
                return read(data, self._clock())
        except (httpx.ConnectError, httpx.TimeoutException, httpx.RemoteProtocolError):
            if not self._answered:
                self.missing.clear()  # not answering: it may come back as another server
            return None
        raise ValueError(f"neither {', '.join(every[:-1])} nor {every[-1]} exist here")

    async def events(self) -> AsyncIterator[Event]:
        async with self.transport.http_client(self.base_url, self.timeout) as client:
            while self.max_polls is None or self.polls < self.max_polls:
                self.polls += 1
                info = await self.fetch(client)
                if info is None:
                    await asyncio.sleep(self.retry_interval)
                    continue
                # an answer that says nothing new is no event: an idle server's every 10 s
                # held the session's ticks at one a second (``views/ticks``)
                if (said := replace(info, t=0.0)) != self._said:
                    self._said = said
                    yield info
                await asyncio.sleep(self.models_interval if self.models_path
                                    else self.interval)


__all__ = ["ServerInfoSource", "parse_openai_models", "parse_sglang_server_info"]
