"""``build_timeline``: the one entry point from a launch configuration to its timed steps."""

from __future__ import annotations

from . import sglang_log, vllm_log
from .scenario import ServerConfig
from .steps import Step, Timeline


def build_timeline(cfg: ServerConfig) -> Timeline:
    """The startup (or crash) of ``cfg`` as timed steps; pure and deterministic per seed/t0."""
    if cfg.engine == "sglang":
        return sglang_log.timeline(cfg)
    return vllm_log.timeline(cfg)


__all__ = ["Step", "Timeline", "build_timeline"]
