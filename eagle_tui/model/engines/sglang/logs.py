"""SGLang log lines → events, for every format era of its releases.

Messages arrive with the logger prefix already removed (``classify.split_prefix``), so this module
only looks at what SGLang said. It searches for phrases rather than positions: the ``Decode
batch`` line gained fields in almost every release (``accept rate``, ``cuda graph``, SWA/Mamba
token fields, PD fields, a trailing ``", "``, ``Decode batch,`` instead of ``.``), so fields are
read by splitting ``key: value`` pairs and looked up by name.

Roles: SGLang captures the target's CUDA graphs *before* it loads the EAGLE draft, and the draft
worker then repeats weight loading, KV allocation and graph capture. Lines after the target's
first capture (or its memory pool, when graphs are disabled), and lines that name the draft
(``Capture draft ...``, ``type=LlamaForCausalLMEagle3``), carry ``role="draft"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from eagle_tui.model.engines.sglang.startup import TIMINGS_TEXT, startup_events
from eagle_tui.model.engines.sglang.tierlog import ADAPTIVE_TEXT, adaptive_tier
from eagle_tui.model.events import (
    DecodeStats,
    Event,
    LineKind,
    ModelInfo,
    Phase,
    PhaseEvent,
    PrefillStats,
    Progress,
)
from eagle_tui.model.ingest.classify import ACC_S, GEN_S, number, small_int
from eagle_tui.model.ingest.msgfields import MAX_MODELS, SpecFields, fields
from eagle_tui.model.ingest.tqdmbar import Bar, last_bar
from eagle_tui.model.numbers import strict_float

_DECODE_HEAD = re.compile(r"Decode batch(?: \[\d+\])?[.,] ?")
# The rest of a ``Decode batch`` line after its head in every common shape of the releases
# (dense or full-token usage, accept len/rate optional, cuda/cpu/npu graph optional, trailing
# ", " or not); groups: running, tokens, usage, accept len, accept rate, graph, gen tps, queued.
# Each key appears once and no value holds ", " or ": ", so ``fields`` would split it into
# exactly these values. Integers have at most 15 digits, so ``int(s) == int(float(s))``; the
# integer part of a float too, so ``float(s)`` is finite as ``_num`` requires. Accept len and
# gen tps are plain decimals (what ``number`` accepts) followed by ",": their ``[\d.]+`` token is
# exactly the group. No "]" and no "_states" occur: a line of this shape is a Decode line to
# ``classify.classify`` whatever its stamp (see ``bulk``).
# (Optional parts are written ``(?:X|)``: ``re`` runs a branch several times faster than a
# ``(?:X)?`` repeat.)
_I = r"(\d{1,15})"
_F = r"(\d{1,15}\.\d+|\d{1,15})"
_D = r"((?:0|[1-9]\d*)(?:\.\d+|))"
DECODE_FIELDS_SRC = (
    rf"#running-req: {_I}, #(?:full |)token: {_I}, (?:full |)token usage: {_F}, "
    r"(?:mamba num: \d+, mamba usage: [\d.]+, |)"  # a hybrid model's state pool (2026)
    rf"(?:accept len: {_D}, |)(?:accept rate: {_F}, |)"
    r"(?:cap len: [\d.]+, |)(?:block accept len: [\d.]+, |)"  # DSpark's (0.5.23), where > 0
    r"(?:(?:cuda|cpu|npu) graph: (True|False), |)"
    rf"gen throughput \(token/s\): {_D}, #queue-req: {_I}(?:, |,|)"
)
DECODE_FIELDS = re.compile(DECODE_FIELDS_SRC, re.ASCII)
# The same for ``Prefill batch`` (2025-01 ... 2026 shapes); groups: new seq, new tokens, cached
# tokens, running, queued, input tps. Fields not read are plain numbers (cannot hide a key).
PREFILL_FIELDS_SRC = (
    rf"#new-seq: {_I}, #new-token: {_I}, #cached-token: {_I}, (?:cache hit rate: [\d.]+%, |)"
    r"(?:#(?:full |)token: \d+, |)(?:full |)token usage: [\d.]+, "
    rf"#running-req: {_I}, #queue-req: {_I}(?:, #pending-token: \d+|)"
    rf"(?:, (?:cuda|cpu|npu) graph: (?:True|False)|)(?:, input throughput \(token/s\): {_F}|)"
    r"(?:, |,|)"
)
PREFILL_FIELDS = re.compile(PREFILL_FIELDS_SRC, re.ASCII)
_PREFILL_HEAD = re.compile(r"Prefill batch(?: \[\d+\])?[.,] ?")
# --- tqdm bars (``ingest.tqdmbar`` reads them; their descriptions say what they count)
# Every weight loader's bar says "load" (0.5.23 ``model_loader/weight_utils.py``: safetensors,
# pt, np_cache, multi-thread, InstantTensor, Fastsafetensor, Run:ai streamer; transformers'
# ``Loading checkpoint shards``); the streaming ones count tensors, not shards.
LOADER_DESC = re.compile(r"\b[Ll]oad(?:ing)?\b")
TENSOR_DESC = re.compile(r"Runai Model Streamer|InstantTensor")
# Piecewise (prefill) CUDA graphs, by stage: 0.5.23's ``runner_backend/
# tc_piecewise_cuda_graph_backend.py`` "Compiling num tokens ({num_tokens=})" and
# ``runner/prefill_cuda_graph_runner.py`` "Capturing prefill shape ({num_tokens=} {avail_mem=:.2f}
# GB)"; the ``piecewise_cuda_graph_runner.py`` of the releases before (and ``cuda_graph_runner/
# prefill_runner.py`` at commit 0dcf687) "Capturing num tokens ({num_tokens=} {avail_mem=:.2f} GB)".
PIECEWISE_STAGES = (("Compiling num tokens", "compile"), ("Capturing prefill shape", "capture"),
                    ("Capturing num tokens", "capture"))
# Bounded repeats, and a number starts only after a non-digit: ``(\d+)%`` retried at every digit
# of a long digit run made this quadratic in the line's length.
_TQDM = re.compile(r"(?<!\d)(\d{1,15})%\|[^|]{0,512}\| (\d{1,15})/(\d{1,15})(?!\d)")
_BS = re.compile(r"\((bs=\d+)")
_CAPTURE = re.compile(
    r"Capture (?:(target|draft) )?(?:(?:decode|prefill|verify|extend) )?(?:(draft) )?"
    r"(?:extend )?(?:piecewise )?(?:cuda|CUDA|npu|NPU|cpu|CPU) graph (begin|end|bs\b)"
)
_TYPE = re.compile(r"\btype=([\w.]+)")
_DRAFT_ARCH = re.compile(r"Eagle|EAGLE|MTP|NextN|Nextn|Draft|Medusa|Speculator", re.ASCII)
# Both ``server_args`` forms: ``ServerArgs(speculative_algorithm='EAGLE', ...)`` (older) and
# 0.5.x's dict ``{'speculative_algorithm': 'EAGLE', ...}`` (one very long line). Only these keys are
# read, each by one linear search (never an eval): the key, ``=`` or ``': ``, then a quoted string
# of at most 4096 characters without quotes or backslashes (else left unread), an int, or None.
_ARG_SEP = r"(?:=|': )"
_ARG_STR = _ARG_SEP + r"(?:'([^'\\]{0,4096})'|\"([^\"\\]{0,4096})\"|None\b)"
_ARG_INT = _ARG_SEP + r"(\d{1,15}|None)\b"
_SPEC_ARGS = {
    "algorithm": re.compile(r"\bspeculative_algorithm" + _ARG_STR),
    "draft_model": re.compile(r"\bspeculative_draft_model_path" + _ARG_STR),
}
_SPEC_INTS = {
    "num_steps": re.compile(r"\bspeculative_num_steps" + _ARG_INT),
    "eagle_topk": re.compile(r"\bspeculative_eagle_topk" + _ARG_INT),
    "num_draft_tokens": re.compile(r"\bspeculative_num_draft_tokens" + _ARG_INT),
}
_ARGS_CLOSE = (")", "}")  # the last character of a complete server_args dump, either form
_CLI_FLAG = re.compile(
    r"--speculative-(algorithm|algo|draft-model-path|draft-model|draft|num-steps|eagle-topk"
    r"|num-draft-tokens)(?:=|\s+)(['\"]?)([^\s'\"]+)\2"
)
_CLI_KEYS = {
    "algorithm": "algorithm", "algo": "algorithm", "draft-model-path": "draft_model",
    "draft-model": "draft_model", "draft": "draft_model", "num-steps": "num_steps",
    "eagle-topk": "eagle_topk", "num-draft-tokens": "num_draft_tokens",
}
SERVER_ARGS = "server args"  # the detail of the launcher's ``server_args=`` line's INIT
_INIT_TEXT = (  # "Init parallel" is 0.5.x's name for "Init torch distributed"
    "server_args=", "Init torch distributed", "Init parallel", "Max running requests is reset",
    "Mixed chunked prefill is disabled", "speculative_num_draft_tokens is adjusted",
    "Setting Triton cache manager",
)
# KV sizing: the pool's own lines, the profiled budget's warning (kv_cache_configurator.py), and
# the token budget line printed once the pools exist (2024's "Rank N: max_total_num_token=...")
_KV_TEXT = ("KV Cache is allocated", "Memory pool end", "Using KV cache dtype",
            "Mamba Cache is allocated", "is larger than the profiled value",
            "max_total_num_tokens=", "max_total_num_token=")


def _num(value: str | None) -> float | None:
    if value is None:
        return None
    return strict_float(value.strip().removesuffix("%"))  # whole and finite, or not a number


def _int(value: str | None) -> int | None:
    x = _num(value)
    return int(x) if x is not None else None


def _bool(value: str | None) -> bool | None:
    if value is None:
        return None
    return {"True": True, "False": False}.get(value.strip())


def decode_stats(text: str, lineno: int, time: str | None, values_from: str) -> DecodeStats:
    """A ``Decode batch`` line. ``values_from`` is the text accept len / tok/s are read from.

    Bulk lines pass their raw text there (the chunk fast path reads exactly that), others pass
    the normalized text. The common shapes are read by one :data:`DECODE_FIELDS` match (cheaper
    than splitting); any other rest of the line by :func:`decode_stats_generic`.
    """
    m = _DECODE_HEAD.search(text)
    f = DECODE_FIELDS.fullmatch(text, m.end()) if m else None
    if f is None:
        return decode_stats_generic(text, lineno, time, values_from)
    running, tokens, usage, _, rate, graph, _, queued = f.groups()
    return DecodeStats(
        lineno=lineno,
        time=time,
        gen_tps=number(GEN_S, values_from),
        accept_len=number(ACC_S, values_from),
        accept_rate=float(rate) if rate else None,
        running=int(running),
        queued=int(queued),
        kv_usage=float(usage),
        num_tokens=int(tokens),
        cuda_graph=(graph == "True") if graph else None,
    )


def decode_stats_generic(text: str, lineno: int, time: str | None,
                         values_from: str) -> DecodeStats:
    """:func:`decode_stats` by ``key: value`` splitting: any field order, any extra field.

    The reference that the fast shapes (:data:`DECODE_FIELDS`) are tested against.
    """
    m = _DECODE_HEAD.search(text)
    f = fields(text[m.end() :]) if m else {}
    graph = f.get("cuda graph") or f.get("cpu graph") or f.get("npu graph")
    tokens = f.get("#token") or f.get("#full token")
    usage = f.get("token usage") or f.get("full token usage")
    return DecodeStats(
        lineno=lineno,
        time=time,
        gen_tps=number(GEN_S, values_from),
        accept_len=number(ACC_S, values_from),
        accept_rate=_num(f.get("accept rate")),
        running=_int(f.get("#running-req")),
        queued=_int(f.get("#queue-req")),
        kv_usage=_num(usage),
        num_tokens=_int(tokens),
        cuda_graph=_bool(graph),
    )


def prefill_stats(text: str, lineno: int, time: str | None) -> PrefillStats:
    """A ``Prefill batch`` line: :data:`PREFILL_FIELDS` shapes by one match, others by splitting."""
    m = _PREFILL_HEAD.search(text)
    f = PREFILL_FIELDS.fullmatch(text, m.end()) if m else None
    if f is None:
        return prefill_stats_generic(text, lineno, time)
    seqs, new, cached, running, queued, tps = f.groups()
    return PrefillStats(lineno=lineno, time=time, new_seq=int(seqs), new_tokens=int(new),
                        cached_tokens=int(cached), running=int(running), queued=int(queued),
                        input_tps=float(tps) if tps else None)


def prefill_stats_generic(text: str, lineno: int, time: str | None) -> PrefillStats:
    """:func:`prefill_stats` by ``key: value`` splitting (the reference of the fast shapes)."""
    m = _PREFILL_HEAD.search(text)
    f = fields(text[m.end() :]) if m else {}
    return PrefillStats(
        lineno=lineno,
        time=time,
        new_seq=_int(f.get("#new-seq")),
        new_tokens=_int(f.get("#new-token")),
        cached_tokens=_int(f.get("#cached-token")),
        running=_int(f.get("#running-req")),
        queued=_int(f.get("#queue-req")),
        input_tps=_num(f.get("input throughput (token/s)")),
    )


def server_args_spec(text: str) -> dict[str, object]:
    """The speculative settings of a ``server_args`` line, either form (see :data:`_ARG_SEP`)."""
    found: dict[str, object] = {}
    for key, pattern in _SPEC_ARGS.items():
        m = pattern.search(text)
        if m is not None:
            found[key] = m.group(1) if m.group(1) is not None else m.group(2)
    for key, pattern in _SPEC_INTS.items():
        m = pattern.search(text)
        if m is not None and m.group(1) != "None" and (n := small_int(m.group(1))) is not None:
            found[key] = n
    return found


def cli_spec(text: str) -> dict[str, object]:
    """``--speculative-algo EAGLE3 --speculative-draft x`` (argparse prefixes included)."""
    found: dict[str, object] = {}
    for m in _CLI_FLAG.finditer(text):
        key = _CLI_KEYS[m.group(1)]
        value = m.group(3)
        if key in ("num_steps", "eagle_topk", "num_draft_tokens"):
            if value.isdigit() and (n := small_int(value)) is not None:
                found[key] = n
        else:
            found[key] = value
    return found


def weighted_accept_len(stats: Iterable[DecodeStats]) -> float | None:
    """Mean acceptance length over ``Decode batch`` lines, each weighed by its verify work.

    A line's ``accept len`` is accepted tokens / verify count since the line before, that count
    being the batch size summed over ``--decode-log-interval`` steps. The line does not print it;
    the step count is constant, so the best weight it gives is ``#running-req`` (1 if missing).
    SGLang's own ``avg_spec_accept_length`` sums the same intervals, so the two agree up to two
    decimals and batch changes inside an interval; a plain mean would not.
    """
    total = weight = 0.0
    for ev in stats:
        if ev.accept_len is None:
            continue
        w = float(ev.running) if ev.running else 1.0
        total += w * ev.accept_len
        weight += w
    return total / weight if weight else None


class SglangParser:
    """Stateful SGLang message parser (roles, merged spec settings, wrapped server_args)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.spec = SpecFields()
        self._target_done = False  # the target is up: what loads now is the draft
        self._pool_done = False  # a memory pool exists (the target's, at first)
        self._archs: set[str] = set()
        self._args_open = False  # a terminal-wrapped server_args dump is still going
        self._draft_loaded = False  # the draft's weights are in: graphs now are the draft's

    def line_cut(self) -> None:
        """The line just parsed was read in part (over ``framing.PARSE_CHARS``): a
        ``server_args`` dump that long is not continued on the next lines."""
        self._args_open = False

    def _role(self, msg: str) -> str:
        return "draft" if self._target_done or "draft" in msg else "target"

    def parse(self, msg: str, lineno: int, time: str | None,
              prefixed: bool) -> tuple[list[Event], LineKind | None]:
        """Events and a line kind for one message (``None``: nothing SGLang-specific)."""
        if self._args_open:
            if prefixed:
                self._args_open = False
            else:
                self._args_open = not msg.rstrip().endswith(_ARGS_CLOSE)
                spec = self.spec.merge(server_args_spec(msg))
                return ([spec] if spec else []), LineKind.MILESTONE
        if "Decode batch" in msg and _DECODE_HEAD.search(msg):
            return [decode_stats(msg, lineno, time, msg)], LineKind.STATS
        if "Prefill batch" in msg and _PREFILL_HEAD.search(msg):
            return [prefill_stats(msg, lineno, time)], LineKind.STATS
        if "server_args=" in msg:
            self._args_open = not msg.rstrip().endswith(_ARGS_CLOSE)
            events: list[Event] = [PhaseEvent(Phase.INIT, lineno, time, SERVER_ARGS)]
            spec = self.spec.merge(server_args_spec(msg))
            if spec:
                events.append(spec)
            return events, LineKind.MILESTONE
        if "--speculative-" in msg and ("sglang" in msg or "launch_server" in msg):
            spec = self.spec.merge(cli_spec(msg))
            return ([spec] if spec else []), LineKind.MILESTONE
        if ADAPTIVE_TEXT in msg:  # an adaptive server's new tier
            return adaptive_tier(msg, lineno, time), LineKind.MILESTONE
        return self._milestone(msg, lineno, time)

    def _milestone(self, msg: str, lineno: int,
                   time: str | None) -> tuple[list[Event], LineKind | None]:
        detail = msg.strip()[:120]
        for text in _INIT_TEXT:
            if text in msg:
                return [PhaseEvent(Phase.INIT, lineno, time, detail)], LineKind.MILESTONE
        bar = last_bar(msg)  # (``None`` at once for a line without "%")
        if bar is not None and (events := self._bar(bar, lineno, time)):
            return events, LineKind.MILESTONE
        if "Load weight begin" in msg:
            # graphs disabled: the draft's weights start after the target's memory pool
            self._target_done = self._target_done or self._pool_done
            return [PhaseEvent(Phase.LOADING_WEIGHTS, lineno, time, detail,
                               self._role(msg))], LineKind.MILESTONE
        if "Load weight end" in msg or "load weight end" in msg:  # (2024: "Rank 0: load ...")
            return self._weights_end(msg, lineno, time, detail), LineKind.MILESTONE
        for text in _KV_TEXT:
            if text in msg:
                role = self._role(msg)
                if text == "Memory pool end":
                    self._pool_done = True
                return [PhaseEvent(Phase.KV_CACHE, lineno, time, detail, role)], LineKind.MILESTONE
        c = _CAPTURE.search(msg)
        if c is not None:
            role = "draft" if (c.group(1) == "draft" or c.group(2)) else "target"
            # the target's prefill (piecewise) graphs come before its decode graphs in 0.5.23
            if c.group(3) == "end" and role == "target" and " prefill " not in msg:
                self._target_done = True
            return [PhaseEvent(Phase.CUDA_GRAPH, lineno, time, detail, role)], LineKind.MILESTONE
        if "Capturing batches" in msg:
            return self._graph_progress(msg, lineno, time, detail), LineKind.MILESTONE
        if "The server is fired up and ready to roll" in msg:
            return [PhaseEvent(Phase.READY, lineno, time, detail)], LineKind.MILESTONE
        if "DeepGEMM" in msg or "FlashInfer autotune" in msg or TIMINGS_TEXT in msg:
            found = startup_events(msg, lineno, time)
            return found, (LineKind.MILESTONE if found else None)
        return [], None

    def _bar(self, bar: Bar, lineno: int, time: str | None) -> list[Event]:
        """A loader's or the piecewise graphs' bar (``[]``: another bar)."""
        detail = bar.desc[:120]
        if LOADER_DESC.search(bar.desc):
            role = self._role(bar.desc)
            unit = "tensors" if TENSOR_DESC.search(bar.desc) else ""
            return [PhaseEvent(Phase.LOADING_WEIGHTS, lineno, time, detail, role),
                    Progress("shards", bar.done, bar.total, lineno, role, unit, bar.left_s)]
        for head, stage in PIECEWISE_STAGES:
            if bar.desc.startswith(head):
                # captured by the model runner that just loaded: the draft's once it has
                role = "draft" if self._draft_loaded else "target"
                return [PhaseEvent(Phase.CUDA_GRAPH, lineno, time, detail, role),
                        Progress("piecewise", bar.done, bar.total, lineno, role, stage,
                                 bar.left_s)]
        return []

    def _weights_end(self, msg: str, lineno: int, time: str | None, detail: str) -> list[Event]:
        t = _TYPE.search(msg)
        arch = t.group(1) if t else None
        draft = bool(arch and _DRAFT_ARCH.search(arch)) or self._target_done
        role = "draft" if draft else "target"
        self._draft_loaded = self._draft_loaded or draft
        events: list[Event] = [PhaseEvent(Phase.WEIGHTS_LOADED, lineno, time, detail, role)]
        if arch and arch not in self._archs and len(self._archs) < MAX_MODELS:
            self._archs.add(arch)
            events.append(ModelInfo(role, arch, lineno))
        return events

    def _graph_progress(self, msg: str, lineno: int, time: str | None,
                        detail: str) -> list[Event]:
        role = "draft" if self._target_done else "target"
        events: list[Event] = [PhaseEvent(Phase.CUDA_GRAPH, lineno, time, detail, role)]
        m = _TQDM.search(msg)
        done, total = (small_int(m.group(2)), small_int(m.group(3))) if m else (None, None)
        if done is not None and total is not None:
            bs = _BS.search(msg)
            events.append(Progress("graphs", done, total, lineno, role, bs.group(1) if bs else ""))
        return events


__all__ = [
    "DECODE_FIELDS",
    "DECODE_FIELDS_SRC",
    "PREFILL_FIELDS",
    "PREFILL_FIELDS_SRC",
    "SERVER_ARGS",
    "SglangParser",
    "cli_spec",
    "decode_stats",
    "decode_stats_generic",
    "fields",
    "prefill_stats",
    "prefill_stats_generic",
    "server_args_spec",
    "weighted_accept_len",
]
