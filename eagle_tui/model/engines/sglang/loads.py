"""SGLang's ``/v1/loads``: each data-parallel rank's load, answered without ``--enable-metrics``.

Read from SGLang 0.5.23 (``srt/entrypoints/v1_loads.py``, ``srt/managers/load_snapshot.py``):
``{"timestamp", "version", "accelerator", "num_accelerators", "loads": [{"dp_rank": 0,
"num_running_reqs": 3, ..., "speculative": {"accept_length": 3.1, "accept_rate": 0.7}}]}``.
A rank's ``speculative`` section is there once it verified a draft; its ``accept_length`` is
the rank's accepted tokens over its verify steps since start (a lifetime average, updated at
each decode stats line). ``?include=spec`` leaves out the other sections (core is always
there). Pure: the caller fetches the JSON (bounded) and hands it here.
"""

from __future__ import annotations

from eagle_tui.model.events import RankLoads
from eagle_tui.model.numbers import finite

PATH = "/v1/loads"
QUERY = "include=spec"  # the core figures and the speculative section only
MAX_RANKS = 1024  # data-parallel ranks read; past this an answer is not a server's
MAX_ACCEPT_LEN = 1 << 16  # tokens per verify step
MAX_RUNNING = 1 << 31


def _rank(v: object) -> int | None:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 1 << 20:
        return None
    return v


def parse_loads(data: object, t: float) -> RankLoads:
    """``/v1/loads`` JSON → each rank's accept length and running requests (a rank without a
    usable ``speculative.accept_length`` has none; a repeated rank counts once)."""
    if not isinstance(data, dict) or not isinstance(data.get("loads"), list):
        raise ValueError("/v1/loads did not answer a list of loads")
    accept: dict[int, float] = {}
    running: dict[int, int] = {}
    for load in data["loads"][:MAX_RANKS]:
        if not isinstance(load, dict):
            continue
        rank = _rank(load.get("dp_rank"))
        if rank is None or rank in running or rank in accept:
            continue
        reqs = finite(load.get("num_running_reqs"), MAX_RUNNING)
        if reqs is not None and reqs >= 0:
            running[rank] = int(reqs)
        spec = load.get("speculative")
        value = finite(spec.get("accept_length"), MAX_ACCEPT_LEN) if isinstance(spec, dict) \
            else None
        if value is not None and value >= 1.0:  # under 1 no verify step can give
            accept[rank] = value
    return RankLoads(t=t, accept=tuple(sorted(accept.items())),
                     running=tuple(sorted(running.items())))


__all__ = ["PATH", "QUERY", "parse_loads"]
