"""Read the draft checkpoint's ``config.json`` so the EAGLE-vs-EAGLE3 mistake can be caught.

An EAGLE-3 draft launched with ``--speculative-algorithm EAGLE`` fails silently
(``tests/fixtures/sglang-cpu/misconf.log`` is such a run): the only way to see it is to compare
what the draft *is* (its config) with how it was launched.
 The draft path comes from ``--draft-config`` or, once the log's ``server_args`` line
(or ``/server_info``) has been parsed, from the state's ``SpecConfig``; it is re-read when that
path changes (a relaunch with another draft).

EAGLE-3 markers (any one suffices; ``lint``'s own predicate, ``is_eagle3_config``): an
architecture name containing ``Eagle3`` (``LlamaForCausalLMEagle3``, ``Qwen3Eagle3Model``...),
``eagle_config.eagle_aux_hidden_state_layer_ids`` / ``use_aux_hidden_state``, a
``draft_vocab_size`` (community EAGLE-3 drafts often ship as a plain ``LlamaForCausalLM``), or a
speculators config whose ``speculators_model_type`` is ``eagle3``.
"""

from __future__ import annotations

import asyncio
import posixpath
import re
import shlex
from collections.abc import AsyncIterator, Callable
from typing import Any

from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.events import DraftConfig, Event, SpecConfig
from eagle_tui.model.launching.checks import is_eagle3_config
from eagle_tui.transport.base import Transport, TransportError

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class DraftConfigError(TransportError):
    """The draft's config.json is missing or unreadable; the message says where it looked."""


def _ints(v: object) -> tuple[int, ...]:
    if not isinstance(v, list):
        return ()
    return tuple(x for x in v if isinstance(x, int) and not isinstance(x, bool))


def _opt_int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def parse_draft_config(path: str, data: object) -> DraftConfig:
    """A decoded ``config.json`` → :class:`DraftConfig`; ``ValueError`` if it is not an object."""
    if not isinstance(data, dict):
        raise ValueError(f"{path}: config.json is not a JSON object")
    archs_raw = data.get("architectures")
    archs = tuple(a for a in archs_raw if isinstance(a, str)) if isinstance(archs_raw, list) else ()
    eagle_cfg: dict[str, Any] = data.get("eagle_config") or {}
    if not isinstance(eagle_cfg, dict):
        eagle_cfg = {}
    aux = _ints(eagle_cfg.get("eagle_aux_hidden_state_layer_ids"))
    hidden = _opt_int(data.get("hidden_size"))
    target_hidden = _opt_int(data.get("target_hidden_size"))
    # speculators format (RedHatAI *-speculator.eagle3): the layer config is nested
    layer_cfg = data.get("transformer_layer_config")
    if hidden is None and isinstance(layer_cfg, dict):
        hidden = _opt_int(layer_cfg.get("hidden_size"))
    return DraftConfig(
        path=path,
        architectures=archs,
        is_eagle3=is_eagle3_config(data),
        hidden_size=hidden,
        target_hidden_size=target_hidden,
        aux_layer_ids=aux,
    )


SETTLED_POLLS = 60  # polls with the same wanted path before the poll slows down
SETTLED_POLL_S = 5.0


class DraftConfigSource:
    """Source of one ``DraftConfig`` per distinct draft path.

    ``path`` is a checkpoint directory, a ``config.json`` file or a hub id (looked up in the
    Hugging Face cache on the server's host). ``spec_provider`` returns the current
    ``SpecConfig`` (the session's state) and is polled every ``poll_interval`` seconds while no
    path is known.
    """

    def __init__(
        self,
        transport: Transport,
        path: str | None = None,
        *,
        spec_provider: Callable[[], SpecConfig | None] | None = None,
        poll_interval: float = 0.5,
        name: str = "draft_config",
    ) -> None:
        if path is None and spec_provider is None:
            raise ValueError("DraftConfigSource needs a path or a spec_provider")
        self.name = name
        self.transport = transport
        self.fixed_path = path
        self.spec_provider = spec_provider
        self.poll_interval = poll_interval
        self.loaded: str | None = None  # the path last emitted

    def _wanted(self) -> str | None:
        if self.fixed_path:
            return self.fixed_path
        spec = self.spec_provider() if self.spec_provider else None
        return spec.draft_model if spec is not None and spec.draft_model else None

    async def _candidates(self, path: str) -> list[str]:
        if path.endswith(".json"):
            return [path]
        cands = [posixpath.join(path, "config.json")]
        if _HUB_ID.match(path) and not path.startswith(("/", ".")):
            org, repo = path.split("/", 1)
            pattern = (
                '"${HF_HOME:-$HOME/.cache/huggingface}"/hub/'
                f"models--{shlex.quote(org)}--{shlex.quote(repo)}/snapshots/*/config.json"
            )
            res = await self.transport.run(["sh", "-c", f"ls -1 {pattern} 2>/dev/null"], 5.0)
            cands += [ln for ln in res.stdout.decode("utf-8", "replace").splitlines() if ln]
        return cands

    async def load(self, path: str) -> DraftConfig:
        tried: list[str] = []
        for cand in await self._candidates(path):
            try:
                raw = await self.transport.read_file(cand, 4 << 20)
            except TransportError as exc:
                tried.append(str(exc))
                continue
            try:
                data = load_json(raw, f"draft config.json at {cand}")
            except LoadError as exc:
                raise DraftConfigError(str(exc)) from None
            try:
                return parse_draft_config(path, data)
            except ValueError as exc:
                raise DraftConfigError(str(exc)) from None
        raise DraftConfigError(f"draft config.json for {path!r} not found ({'; '.join(tried)})")

    async def events(self) -> AsyncIterator[Event]:
        same = 0  # polls since the wanted path last changed
        while True:
            wanted = self._wanted()
            if wanted is not None and wanted != self.loaded:
                cfg = await self.load(wanted)
                self.loaded = wanted
                same = 0
                yield cfg
            if self.fixed_path and self.loaded == self.fixed_path:
                return  # a fixed path is read once
            same += 1
            # the spec comes with the server's first lines; a relaunch's new draft can wait
            await asyncio.sleep(self.poll_interval if same < SETTLED_POLLS
                                else max(self.poll_interval, SETTLED_POLL_S))


__all__ = ["DraftConfigError", "DraftConfigSource", "parse_draft_config"]
