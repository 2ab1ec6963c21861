"""How SGLang's log is recognised, read and advised about (its :class:`LogFacet`)."""

from __future__ import annotations

import re

from eagle_tui.model.engines.facets.logs import LogFacet, LogPrefix
from eagle_tui.model.engines.sglang.logs import SglangParser

# "[2025-11-06 01:22:10 TP0] msg": no level, rank tags optional, the date too in some builds.
_PREFIX = re.compile(
    r"\[(?:(\d{4}-\d\d-\d\d) )?(\d\d:\d\d:\d\d)((?: [A-Z][A-Z_]*\d+)*)\] ?", re.ASCII
)
_PROCESS = re.compile(r"sglang", re.ASCII | re.IGNORECASE)  # (searched)
_TRACEBACK = re.compile(r"[/\\]sglang[/\\]srt[/\\]|\bsglang\.srt\.")
_DEAD = re.compile(r"scheduler is dead|crashed with exit code"
                   r"|Initialization failed\. Please see the error messages above")
_FATAL_CONTEXT = re.compile(r"hit an exception|Exception in ModelTpServer"
                            r"|Initialization failed\. warmup error")
_TEXT = (
    "server_args=ServerArgs(",
    "server_args={'",  # SGLang 0.5.x logs the dict form
    "The server is fired up and ready to roll",
    "Decode batch",
    "Prefill batch",
    "sglang.launch_server",
    "Scheduler hit an exception",
    "scheduler died during initialization",
    "scheduler is dead. Please check",
)

LOGS = LogFacet(
    text_markers=_TEXT,
    logger_hints=("sglang",),
    traceback_marker="sglang/srt/",
    prefix=LogPrefix(_PREFIX, "[", time=2, date=1, uvicorn_after=True),
    logger_starts=("sgl",),
    process=_PROCESS,
    traceback_path=_TRACEBACK,
    calls_into=("vllm",),  # old builds import vllm/distributed
    bulk_stats=True,  # the Decode batch / Prefill batch lines are its scheduler's
    access_opener="[",  # it logs uvicorn's access lines behind its own stamp
    parser=SglangParser,
    dead=_DEAD,
    record_start=r"\[20\d\d-\d\d-\d\d \d\d:\d\d:\d\d(?: [A-Z][A-Z_]*\d+)*\] ",
    record_glue=r"\[20(?<=[^\n]\[20)\d\d-\d\d-\d\d \d\d:\d\d:\d\d(?: [A-Z][A-Z_]*\d+)*\] ",
    record_markers=(b"[202",),  # (not "[20": torch.Size([2048, ...]) in debug prints)
    fatal_context=_FATAL_CONTEXT,
    default_watchdog_s=300.0,
    watchdog_flag="--watchdog-timeout",
)

__all__ = ["LOGS"]
