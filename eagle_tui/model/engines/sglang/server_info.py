"""SGLang's ``/server_info`` (older ``/get_server_info``): the speculative settings actually in
effect (the log's ``server_args`` line may be cut by a wrapper), the lifetime
``avg_spec_accept_length``, memory, version and the startup durations it measured. Pure:
the caller fetches the JSON.
"""

from __future__ import annotations

from typing import Any

from eagle_tui.model.engines.sglang.startup import from_server_info
from eagle_tui.model.events import ServerInfo, SpecConfig
from eagle_tui.model.numbers import finite

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


def parse_server_info(data: object, t: float) -> ServerInfo:
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
        decode_log_interval=_opt_int(data.get("decode_log_interval")) or None,
        startup=from_server_info(data),
    )


__all__ = ["parse_server_info"]
