"""What the running server says about itself: speculative settings, model, memory, version.

SGLang's ``/server_info`` (older ``/get_server_info``) is the authoritative place for the
speculative settings actually in effect (the log's ``server_args`` line may be cut by a wrapper)
and for the lifetime ``avg_spec_accept_length``. vLLM has no such endpoint; ``/v1/models`` gives
the served model name. The endpoint that works is remembered, and the info is re-read every
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
from typing import Any

import httpx

from eagle_tui.model.bench.windows import own_path
from eagle_tui.model.boundary.loaders import LoadError
from eagle_tui.model.events import Event, ServerInfo, SpecConfig
from eagle_tui.model.numbers import finite
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
_SGLANG_PATHS = ("/server_info", "/get_server_info")
_VLLM_PATH = "/v1/models"


MAX_STEPS = 1 << 16  # draft steps, top-k, draft tokens: larger is not a setting, it is junk
MAX_ACCEPT_LEN = 1 << 16  # tokens per verify step (≤ 1 + draft tokens)
MAX_MEMORY_GB = 1 << 24  # 16 PB: past any GPU's memory
MAX_TEXT = 512


def _opt_int(v: object, limit: int = MAX_STEPS) -> int | None:
    """An int setting within ``0..limit``; anything else (a bool, 10**400, -1) is unknown."""
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= limit:
        return None
    return v


def _opt_float(v: object, limit: float = MAX_ACCEPT_LEN) -> float | None:
    """A finite, non-negative number within ``limit``: 1e308 is not a reading."""
    value = finite(v, limit)
    return value if value is not None and value >= 0 else None


def _opt_str(v: object) -> str | None:
    """A non-empty string, cut to :data:`MAX_TEXT` characters (a name, not a megabyte)."""
    return v[:MAX_TEXT] if isinstance(v, str) and v else None


def parse_sglang_server_info(data: object, t: float) -> ServerInfo:
    """``/server_info`` JSON → ``ServerInfo`` (with ``spec`` from ``server_args``)."""
    if not isinstance(data, dict):
        raise ValueError("server_info is not a JSON object")
    spec: SpecConfig | None = None
    algo = _opt_str(data.get("speculative_algorithm"))
    if algo is not None:
        spec = SpecConfig(
            algorithm=algo.upper(),
            draft_model=_opt_str(data.get("speculative_draft_model_path")),
            num_steps=_opt_int(data.get("speculative_num_steps")),
            eagle_topk=_opt_int(data.get("speculative_eagle_topk")),
            num_draft_tokens=_opt_int(data.get("speculative_num_draft_tokens")),
            source="server_info",
        )
    states: list[Any] = []
    raw_states = data.get("internal_states")
    if isinstance(raw_states, list):
        states = [s for s in raw_states if isinstance(s, dict)]
    first: dict[str, Any] = states[0] if states else data
    accept = _opt_float(first.get("avg_spec_accept_length"))
    if accept is None:
        accept = _opt_float(data.get("avg_spec_accept_length"))
    memory: list[tuple[str, float]] = []
    mem = first.get("memory_usage")
    if isinstance(mem, dict):
        for key, val in mem.items():
            fval = _opt_float(val, MAX_MEMORY_GB)
            if fval is not None and key != "token_capacity":
                memory.append((str(key), fval))
    model = _opt_str(data.get("served_model_name")) or _opt_str(data.get("model_path"))
    return ServerInfo(
        t=t,
        spec=spec,
        avg_accept_len=accept,
        model_name=model,
        memory_gb=tuple(memory),
        version=_opt_str(data.get("version")),
    )


def parse_openai_models(data: object, t: float) -> ServerInfo:
    """``/v1/models`` JSON → ``ServerInfo`` with the first served model's id."""
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError("/v1/models did not return an OpenAI model list")
    models = [m for m in data["data"] if isinstance(m, dict)]
    name = _opt_str(models[0].get("id")) if models else None
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
        self.polls = 0

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
        paths = (self.path,) if self.path else tuple(
            p for p in (*_SGLANG_PATHS, _VLLM_PATH) if p not in self.missing)
        try:
            for path in paths:
                assert path is not None
                data = await self._get_json(client, path)
                if data is None:
                    continue
                self.path = path
                if path == _VLLM_PATH:
                    return parse_openai_models(data, self._clock())
                return parse_sglang_server_info(data, self._clock())
        except (httpx.ConnectError, httpx.TimeoutException, httpx.RemoteProtocolError):
            if not self._answered:
                self.missing.clear()  # not answering: it may come back as another server
            return None
        raise ValueError("neither /server_info, /get_server_info nor /v1/models exist here")

    async def events(self) -> AsyncIterator[Event]:
        async with self.transport.http_client(self.base_url, self.timeout) as client:
            while self.max_polls is None or self.polls < self.max_polls:
                self.polls += 1
                info = await self.fetch(client)
                if info is None:
                    await asyncio.sleep(self.retry_interval)
                    continue
                yield info
                await asyncio.sleep(self.models_interval if self.path == _VLLM_PATH
                                    else self.interval)


__all__ = ["ServerInfoSource", "parse_openai_models", "parse_sglang_server_info"]
