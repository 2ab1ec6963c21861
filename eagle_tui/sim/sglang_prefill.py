"""SGLang's prefill (piecewise) CUDA graphs in the words of each release (``ENGINE_VERSIONS``).

0.5.23 (``model_runner_components/cuda_graph_setup.py``, ``runner/prefill_cuda_graph_runner.py``):
``Capture <role> prefill CUDA graph begin. backend=..., num_tokens=[...], avail mem=...``, a
tqdm bar per shape ``Capturing prefill shape (num_tokens=N avail_mem=X GB)`` (largest first)
and ``Capture <role> prefill CUDA graph end. elapsed=...``; the target's before its decode
graphs, the draft's before its own. CUDA's default backend is ``breakable`` (no torch.compile
pass); ``tc_piecewise`` first runs a ``Compiling num tokens (num_tokens=N)`` bar.
Before 0.5.23 (``piecewise_cuda_graph_runner.py``): after the target's decode graphs,
``Capture piecewise CUDA graph begin. avail mem=...``, ``Capture cuda graph num tokens [...]``,
the compile bar, ``Capturing num tokens (num_tokens=N avail_mem=X GB)`` and ``Capture piecewise
CUDA graph end. Time elapsed: ... s. mem usage=... GB. avail mem=... GB.``
"""

from __future__ import annotations

from collections.abc import Callable

from .steps import Builder
from .textfmt import block_bar

NUM_TOKENS = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
DRAFT_NUM_TOKENS = (4, 8, 16, 32, 64, 128, 256, 512)

Lines = Callable[[Builder, str], list[str]]


def _bar(b: Builder, desc: Callable[[int], str], shapes: tuple[int, ...],
         seconds: float, gib: float) -> float:
    """One tqdm bar over ``shapes`` (largest first), rank 0 only, raw ``\\r`` redraws."""
    order = sorted(shapes, reverse=True)
    elapsed = 0.0
    b.emit("\r" + block_bar(desc(order[0]), 0, len(order), 0.0), mem=True)
    for i, n in enumerate(order):
        dt = seconds / len(order) * (1.0 + b.rng.uniform(-0.2, 0.2))
        b.advance(dt)
        elapsed += dt
        b.use(gib / len(order))
        b.emit("\r" + block_bar(desc(n), i + 1, len(order), elapsed), mem=True)
    return elapsed


def prefill_graphs(b: Builder, lines: Lines, role: str, seconds: float, gib: float) -> float:
    """0.5.23's prefill CUDA graphs of ``role`` (the breakable backend); the seconds taken."""
    shapes = NUM_TOKENS if role == "target" else DRAFT_NUM_TOKENS
    b.emit(*lines(b, f"Capture {role} prefill CUDA graph begin. backend=breakable, "
                     f"num_tokens={list(shapes)}, avail mem={b.avail:.2f} GB"), label="capture")
    before = b.avail
    elapsed = _bar(b, lambda n: f"Capturing prefill shape (num_tokens={n} avail_mem="
                                f"{b.avail:.2f} GB)", shapes, seconds, gib)
    b.emit(*lines(b, f"Capture {role} prefill CUDA graph end. elapsed={elapsed:.2f} s, "
                     f"mem usage={before - b.avail:.2f} GB, avail mem={b.avail:.2f} GB."))
    return elapsed


def piecewise_graphs(b: Builder, lines: Lines, seconds: float, gib: float) -> float:
    """The piecewise graphs of the releases before 0.5.23 (compile, then capture)."""
    b.emit(*lines(b, f"Capture piecewise CUDA graph begin. avail mem={b.avail:.2f} GB"),
           label="capture")
    b.emit(*lines(b, f"Capture cuda graph num tokens {list(NUM_TOKENS)}"))
    before = b.avail
    compiled = _bar(b, lambda n: f"Compiling num tokens (num_tokens={n})", NUM_TOKENS,
                    seconds * 0.6, 0.0)
    captured = _bar(b, lambda n: f"Capturing num tokens (num_tokens={n} avail_mem="
                                 f"{b.avail:.2f} GB)", NUM_TOKENS, seconds * 0.4, gib)
    b.emit(*lines(b, f"Capture piecewise CUDA graph end. Time elapsed: {compiled + captured:.2f} "
                     f"s. mem usage={before - b.avail:.2f} GB. avail mem={b.avail:.2f} GB."))
    return compiled + captured


__all__ = ["DRAFT_NUM_TOKENS", "NUM_TOKENS", "piecewise_graphs", "prefill_graphs"]
