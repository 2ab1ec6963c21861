"""vLLM's checkpoint size and prefetch progress (the weights step's bytes), and the steps of its
compile phase that print no phase line.

Read from vLLM 0.32: ``model_executor/model_loader/weight_utils.py``
(``safetensors_weights_iterator``, ``_prefetch_all_checkpoints``) and
``model_executor/warmup/`` (``kernel_warmup.py``, ``jit_warmup.py``, ``deep_gemm_warmup.py``),
which runs after the KV cache is sized and before the graphs are captured.
"""

from __future__ import annotations

import re

from eagle_tui.model.engines.facets.startup import SubStepRule, substep
from eagle_tui.model.events import Event, WeightBytes
from eagle_tui.model.numbers import strict_float

# "Filesystem type for checkpoints: %s. Checkpoint size: %.2f GiB. Available RAM: %.2f GiB."
SIZE_TEXT = "Checkpoint size: "
_SIZE = re.compile(r"Checkpoint size: (\d{1,15}(?:\.\d{1,6})?) GiB", re.ASCII)
# "Prefetching checkpoint files: %d%% (%d/%d)", then "Prefetching checkpoint files into page
# cache finished in %.2fs". The percent printed is the next multiple of 10 due, one step per
# file finished (4 files print 10, 20, 30, 40 %): the files' count is the progress.
PREFETCH_TEXT = "Prefetching checkpoint files"
_PERCENT = re.compile(r"Prefetching checkpoint files: (\d{1,3})% \((\d{1,15})/(\d{1,15})\)",
                      re.ASCII)
_FINISHED = "Prefetching checkpoint files into page cache finished"
GATES = (PREFETCH_TEXT, SIZE_TEXT, "DeepGEMM", "FlashInfer", "JIT kernel warmup")

SUBSTEPS = (
    SubStepRule("JIT kernel warmup finished", "JIT kernel warm-up", finished=True),
    SubStepRule("JIT kernel warmup (", "JIT kernel warm-up", bar=True),  # its tqdm bar
    SubStepRule("JIT kernel warmup starting", "JIT kernel warm-up"),
    SubStepRule("DeepGEMM warmup:", "DeepGEMM JIT", bar=True),
    SubStepRule("Running FlashInfer autotune", "FlashInfer autotune"),
    SubStepRule("Using FlashInfer autotune cache file", "FlashInfer autotune"),
    SubStepRule("Warming up FlashInfer attention", "FlashInfer warm-up"),
)


def weight_bytes(msg: str, lineno: int) -> WeightBytes | None:
    """The checkpoint size or prefetch percent a line gives (``None``: neither)."""
    if SIZE_TEXT in msg:
        m = _SIZE.search(msg)
        size = strict_float(m.group(1)) if m is not None else None
        return WeightBytes(lineno, size_gib=size) if size is not None else None
    if _FINISHED in msg:
        return WeightBytes(lineno, percent=100.0)
    m = _PERCENT.search(msg)
    if m is None:
        return None
    done, total = int(m.group(2)), int(m.group(3))
    if total <= 0 or done > total:
        return None
    return WeightBytes(lineno, percent=round(100.0 * done / total, 1))


def startup_events(msg: str, lineno: int, time: str | None) -> list[Event]:
    """What a checkpoint-bytes or compile-step line says (``[]``: neither)."""
    found: Event | None = weight_bytes(msg, lineno) if (
        PREFETCH_TEXT in msg or SIZE_TEXT in msg) else substep(msg, SUBSTEPS, lineno, time)
    return [found] if found is not None else []


__all__ = ["GATES", "SUBSTEPS", "startup_events", "weight_bytes"]
