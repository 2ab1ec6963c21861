"""Crash hints: by the phase the crash happened in, in the engine's own flags, and every number
in them one the log printed (templates whose placeholders are all filled, or none given).

Messages are the engines' real wordings (SGLang 0.5.23, vLLM 0.32 and the corpus excerpts of
tests/fixtures/corpus, whose labels a reader wrote without seeing the parser's output).
"""

from __future__ import annotations

import io
import itertools
import json
import re

import pytest

from eagle_tui.model.engines import profile_of, profiles
from eagle_tui.model.engines.facets.logs import (
    PLACEHOLDER,
    HintTemplate,
    memory_stage,
    render_first,
)
from eagle_tui.model.events import Phase
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.ingest import crashhints
from eagle_tui.model.ingest.crash import hint_for
from eagle_tui.model.state import DashboardState
from eagle_tui.probe.tables import load_tables
from eagle_tui.report import build_report, close
from tests.support.parsing import parse
from tests.support.paths import TESTS

CORPUS = TESTS / "fixtures" / "corpus"
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")
_NUMBER = re.compile(r"(?<![A-Za-z_])\d+(?:\.\d+)?")


def _templates() -> list[tuple[str, HintTemplate]]:
    found = [("generic", t) for t in crashhints.TEMPLATES]
    for p in profiles():
        found += [(p.name, t) for t in p.logs.hint_templates]
    return found


def test_every_template_fills_all_its_placeholders_or_gives_the_sentence_without_them() -> None:
    """Generated matches: each template's fields given all, some or none of their values."""
    checked = 0
    for owner, t in _templates():
        assert not PLACEHOLDER.search(t.bare), (owner, t.bare)
        names = sorted(t.fields)
        if names:
            assert t.pattern is not None and set(names) <= set(t.pattern.groupindex), owner
            assert t.bare, (owner, t.text)
            # the numbers of a hint are the log's: the sentence says none of its own
            assert not _NUMBER.search(PLACEHOLDER.sub("", t.text)), (owner, t.text)
            assert not _NUMBER.search(t.bare), (owner, t.bare)
        for n in range(len(names) + 1):
            for given in itertools.combinations(names, n):
                values: dict[str, str | None] = {k: f"{i + 7}1{i}" for i, k in enumerate(given)}
                values.update({k: None for k in names if k not in given})
                out = t.fill(values)
                assert not PLACEHOLDER.search(out) and "<" not in out, (owner, out)
                if len(given) == len(names):
                    assert all(str(values[k]) in out for k in names), (owner, out)
                else:
                    assert out == t.bare
                checked += 1
    assert checked > 30


def test_a_template_renders_from_its_match_or_bare() -> None:
    t = HintTemplate(re.compile(r"port (?P<port>\d+)"), "Port {port}; again {port}.", "A port.")
    assert t.render("bind port 8000 failed") == "Port 8000; again 8000."
    assert t.render("bind failed") == "A port."
    assert HintTemplate(None, 'Use \'{"method": "eagle3"}\'.').render("x") == \
        'Use \'{"method": "eagle3"}\'.'  # JSON braces are not placeholders
    opt = HintTemplate(re.compile(r"a(?P<n>\d+)?"), "n={n}", "no n")
    assert opt.render("a") == "no n" and not opt.fills("a") and opt.fills("a5")
    assert render_first((opt, HintTemplate(None, "fallback")), "a") == "fallback"


@pytest.mark.parametrize("message", [
    "OSError: [Errno 98] Address already in use",
    "[2024-12-10 15:50:02] ERROR:    [Errno 98] error while attempting",
    "ERROR 08:32:29 [Errno 98] Address already in use",  # a clock is not a port
    "RuntimeError: The server socket has failed to listen on any local network address. "
    "useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use",
])
def test_a_port_hint_without_the_port_names_none(message: str) -> None:
    hint = hint_for("port_in_use", "unknown", Phase.NONE, message)
    assert "<port>" not in hint and "{port}" not in hint and "--port" in hint
    assert not _NUMBER.search(hint.replace("-ltnp", "")), hint


@pytest.mark.parametrize(("message", "port"), [
    ("ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): "
     "address already in use", "30000"),
    ("Port 30001 is not available in 10 seconds", "30001"),
    ("bind 127.0.0.1:8000 failed", "8000"),
    ("[::]:8001 already in use", "8001"),
    ("TCPStore: port: 29500, EADDRINUSE", "29500"),
])
def test_a_port_hint_names_the_logs_port(message: str, port: str) -> None:
    for engine in ("unknown", *(p.name for p in profiles())):
        hint = hint_for("port_in_use", engine, Phase.INIT, message)
        assert f"Port {port} is taken" in hint and f"grep {port}" in hint


OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a " \
      "total capacity of 79.15 GiB of which 1.2 GiB is free. Of the allocated memory 70 GiB " \
      "is allocated by PyTorch, with 81.88 MiB allocated in private pools (e.g., CUDA Graphs)"


@pytest.mark.parametrize(("engine", "phase", "words"), [
    ("sglang", Phase.LOADING_WEIGHTS, ("weights do not fit", "--tp-size", "--quantization")),
    ("sglang", Phase.WEIGHTS_LOADED, ("weights do not fit", "--dtype")),
    ("sglang", Phase.KV_CACHE, ("--mem-fraction-static", "--cuda-graph-max-bs",
                                "--max-running-requests")),
    ("sglang", Phase.CUDA_GRAPH, ("--mem-fraction-static", "--cuda-graph-max-bs")),
    ("sglang", Phase.HTTP_SERVER, ("warming up", "--mem-fraction-static")),
    ("sglang", Phase.SERVING, ("while serving", "--max-running-requests", "--context-length",
                               "--chunked-prefill-size")),
    ("vllm", Phase.LOADING_WEIGHTS, ("weights do not fit", "--tensor-parallel-size", "--dtype")),
    ("vllm", Phase.KV_CACHE, ("--gpu-memory-utilization", "--max-num-seqs",
                              "--max-cudagraph-capture-size")),
    ("vllm", Phase.CUDA_GRAPH, ("--gpu-memory-utilization", "--max-num-seqs")),
    ("vllm", Phase.READY, ("while serving", "--max-num-seqs", "--max-model-len")),
    ("vllm", Phase.SERVING, ("while serving", "--max-num-batched-tokens")),
    ("unknown", Phase.LOADING_WEIGHTS, ("weights do not fit",)),
    ("unknown", Phase.CUDA_GRAPH, ("--mem-fraction-static / --gpu-memory-utilization",)),
    ("unknown", Phase.SERVING, ("while serving",)),
])
def test_an_oom_hint_follows_the_phase_in_the_engines_flags(engine: str, phase: Phase,
                                                            words: tuple[str, ...]) -> None:
    hint = hint_for("cuda_oom", engine, phase, OOM)
    for w in words:
        assert w in hint, (w, hint)
    assert "2.00 GiB more was asked for" in hint  # the log's own number
    other = {"sglang": "--gpu-memory-utilization", "vllm": "--mem-fraction-static"}.get(engine)
    assert other is None or other not in hint  # not the other engine's spelling
    if memory_stage(phase) != "weights":
        assert "weights do not fit" not in hint
    # PyTorch's every OOM names "CUDA Graphs" (private pools): that is not a capture failure
    assert "weights do not fit" in hint_for("cuda_oom", engine, Phase.LOADING_WEIGHTS, OOM)


def test_an_oom_whose_phase_is_not_in_view_says_both() -> None:
    for engine in ("sglang", "vllm", "unknown"):
        hint = hint_for("cuda_oom", engine, Phase.NONE, "CUDA out of memory.")
        assert "does not show" in hint and "loading weights" in hint and "later" in hint
        assert not _NUMBER.search(hint), hint


def test_a_worker_step_named_in_the_message_is_the_phase() -> None:
    """V0 workers name the step: the profiling OOM is not "the weights do not fit"."""
    msg = ("Exception in worker VllmWorkerProcess while processing method "
           "determine_num_available_blocks: CUDA out of memory. Tried to allocate 19.63 GiB.")
    hint = hint_for("cuda_oom", "unknown", Phase.NONE, msg)
    assert "--gpu-memory-utilization" in hint and "19.63 GiB" in hint
    assert "weights do not fit" not in hint
    load = msg.replace("determine_num_available_blocks", "load_model")
    assert "weights do not fit" in hint_for("cuda_oom", "vllm", Phase.NONE, load)
    sampler = ("RuntimeError: CUDA out of memory occurred when warming up sampler with 256 "
               "dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization`")
    assert "--max-num-seqs" in hint_for("cuda_oom", "unknown", Phase.NONE, sampler)


def test_sglang_kv_sizing_errors_get_their_numbers() -> None:
    """SGLang 0.5.23's wordings (model_executor/pool_configurator.py, scheduler)."""
    nem = ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
           "Current value: mem_fraction_static=0.3")
    for engine in ("sglang", "unknown"):
        hint = hint_for("not_enough_memory", engine, Phase.KV_CACHE, nem)
        assert "--mem-fraction-static 0.3" in hint and "raise it" in hint
    old = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
    hint = hint_for("not_enough_memory", "sglang", Phase.KV_CACHE, old)
    assert "raise --mem-fraction-static" in hint and not _NUMBER.search(hint)
    swa = ("RuntimeError: SWA pool cap (65536 tokens, 3.50 GiB) leaves no room for the full KV "
           "pool within the available 2.25 GiB. Reduce --max-running-requests, lower "
           "SGLANG_SWA_EVICTION_INTERVAL, or increase --mem-fraction-static.")
    hint = hint_for("other_traceback", "sglang", Phase.KV_CACHE, swa)
    assert all(n in hint for n in ("65536 tokens", "3.50 GiB", "2.25 GiB"))
    dsv4 = ("RuntimeError: The DSV4 SWA pool cap (4096 tokens, 1.25 GB) leaves no room for the "
            "full KV pool within the available 0.75 GB. Reduce --max-running-requests")
    hint = hint_for("other_traceback", "unknown", Phase.NONE, dsv4)
    assert all(n in hint for n in ("4096 tokens", "1.25 GB", "0.75 GB"))
    floor = ("ValueError: SWA pool (2048 tokens) cannot hold even one request: the prefill "
             "admission floor is sliding_window_size (4096) + page_size (64). Increase "
             "--swa-full-tokens-ratio or the total KV budget.")
    hint = hint_for("other_traceback", "sglang", Phase.KV_CACHE, floor)
    assert all(n in hint for n in ("2048 tokens", "window 4096", "page 64"))
    slots = (CORPUS / "sglang" / "sglang-10408-alloc-req-slots-inline.log").read_text()
    line = next(x for x in slots.splitlines() if "alloc_req_slots" in x)
    hint = hint_for("not_enough_memory", "sglang", Phase.SERVING, line)
    assert "(1 free for 2 requests)" in hint and "--max-running-requests" in hint


# SGLang 0.5.23 mem_cache/kv_cache_configurator.py:3051, its f-string with the numbers filled
NO_KV_ROOM = ("ValueError: Loaded weights leave no GPU memory for the KV cache under "
              "--mem-fraction-static={x}. Raise --mem-fraction-static above {y:.3f} (minimum "
              "viable = 1 - available/pre = {z:.4f}). If using speculative decoding, draft "
              "weights are now counted.")


def test_sglang_no_kv_room_error_gets_its_numbers() -> None:
    msg = NO_KV_ROOM.format(x=0.3, y=0.32, z=0.3198)
    for engine in ("sglang", "unknown"):
        hint = hint_for("not_enough_memory", engine, Phase.WEIGHTS_LOADED, msg)
        assert "--mem-fraction-static 0.3:" in hint and "above 0.320" in hint, hint
        assert "draft weights" in hint
    log = [f"[2026-08-28 01:41:17] {line}" for line in (
        "Load weight end. elapsed=0.60 s", "Scheduler hit an exception: Traceback (most recent "
        "call last):")] + ['  File "/sgl-workspace/sglang/python/sglang/srt/managers/'
                           'scheduler.py", line 4325', "    raise ValueError(", msg]
    state = reduce(DashboardState(), parse(log))
    crash = state.startup.crash
    assert crash is not None and crash.kind == "not_enough_memory" and "0.320" in crash.hint
    assert state.startup.phase is Phase.KV_CACHE  # (a KV sizing error, whatever was last seen)
    cut = msg[:msg.index("Raise")]  # (a message cut before its figures: no number)
    hint = hint_for("not_enough_memory", "sglang", Phase.KV_CACHE, cut)
    assert "raise --mem-fraction-static" in hint and not _NUMBER.search(hint)


def test_vllm_kv_sizing_errors_get_their_numbers() -> None:
    """vLLM 0.32's ``_check_enough_kv_cache_memory`` and the V0 wording of the corpus."""
    v1 = ("ValueError: To serve at least one request with the model's max seq len (131072), "
          "(16.0 GiB KV cache is needed, which is larger than the available KV cache memory "
          "(9.5 GiB). Based on the available memory, the estimated maximum model length is "
          "77824. Try increasing `gpu_memory_utilization` (which also controls CPU memory on "
          "the CPU backend) or decreasing `max_model_len` when initializing the engine.")
    hint = hint_for("not_enough_memory", "vllm", Phase.KV_CACHE, v1)
    assert all(n in hint for n in ("131072", "16.0 GiB", "9.5 GiB", "to 77824 or less"))
    no_estimate = v1.replace("Based on the available memory, the estimated maximum model "
                             "length is 77824. ", "")
    hint = hint_for("not_enough_memory", "unknown", Phase.NONE, no_estimate)
    assert "131072" in hint and "77824" not in hint and "--max-model-len" in hint
    labels = json.loads((CORPUS / "labels.json").read_text())
    v0 = labels["vllm-10517-v0-profiling-max-seq-len-too-large"]["crash"]["cause_line"]
    hint = hint_for("not_enough_memory", "unknown", Phase.KV_CACHE, v0)
    assert "holds 23648 tokens" in hint and "--max-model-len 29000" in hint
    other = hint_for("not_enough_memory", "vllm", Phase.KV_CACHE, "Insufficient KV cache memory")
    assert "--gpu-memory-utilization" in other and "fewer tokens" not in other
    blocks = "ValueError: No available memory for the cache blocks. Try increasing " \
             "`gpu_memory_utilization` when initializing the engine."
    assert "--gpu-memory-utilization" in hint_for("not_enough_memory", "vllm", Phase.KV_CACHE,
                                                  blocks)
    free = ("ValueError: Free memory on device cuda:0 (10.5/79.19 GiB) on startup is less than "
            "desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization "
            "or reduce GPU memory used by other processes.")
    hint = hint_for("not_enough_memory", "unknown", Phase.INIT, free)
    assert all(n in hint for n in ("10.5 of 79.19 GiB", "utilization 0.9", "71.27 GiB"))


def test_every_flag_a_hint_names_is_the_engines_own() -> None:
    """An engine's hints name only its flags (its flag table); the generic ones name flags of
    some engine."""
    tables = load_tables()
    known = {name: {o for f in table.flags for o in f.opts} for name, table in tables.items()}
    everyone = set().union(*known.values()) | {"--help"}  # (argparse's own)
    for owner, t in _templates():
        flags = set(_FLAG.findall(t.text)) | set(_FLAG.findall(t.bare))
        have = known.get(owner, everyone)
        assert flags <= have, (owner, flags - have)


def _report(name: str) -> dict[str, object]:
    engine = name.split("-", 1)[0]
    data = (CORPUS / engine / f"{name}.log").read_bytes()
    report = build_report(io.BytesIO(data), name)
    close(report)
    return report


@pytest.mark.parametrize(("name", "words"), [
    # profiling OOM of a V0 worker, glued to another write: the KV-cache phase, not the weights
    ("vllm-8903-worker-oom-profiling-glued", ("--gpu-memory-utilization", "19.63 GiB")),
    ("vllm-19445-sampler-warmup-oom-rewrapped", ("--max-num-seqs",)),
    ("vllm-10517-v0-profiling-max-seq-len-too-large", ("23648", "29000")),
    ("vllm-14452-ranks-interleaved-oom", ("1.74 GiB", "does not show")),
])
def test_corpus_crashes_get_the_hint_of_their_phase(name: str, words: tuple[str, ...]) -> None:
    crash = _report(name)["crash"]
    assert isinstance(crash, dict)
    for w in words:
        assert w in crash["hint"], (w, crash["hint"])
    assert "weights do not fit" not in crash["hint"]


def test_the_evidence_phase_retunes_the_hint() -> None:
    """A fragment that starts inside the traceback: its frames say CUDA-graph capture, which
    the parser's own phase (none) did not know when it wrote the hint."""
    from eagle_tui.model.events import CrashEvent, LineKind, LogLine
    from eagle_tui.model.fold.reducer import reduce
    from eagle_tui.model.state import DashboardState

    frame = ('  File "/sgl/python/sglang/srt/model_executor/cuda_graph_runner.py", line 3, '
             'in capture')
    crash = CrashEvent("cuda_oom", 3, OOM, hint_for("cuda_oom", "unknown", Phase.NONE, OOM))
    st = reduce(DashboardState(), [LogLine(2, frame, LineKind.TRACEBACK), crash])
    assert st.startup.phase is Phase.CUDA_GRAPH and st.startup.engine == "sglang"
    assert st.startup.crash is not None and "--cuda-graph-max-bs" in st.startup.crash.hint
    assert "does not show" not in st.startup.crash.hint
    assert profile_of("sglang") is not None


def test_every_template_pattern_is_linear() -> None:
    """The templates' patterns run on crash lines of any length (the structure test's budget;
    its collector does not look inside the templates)."""
    from tests.unit.structure.test_regex_budget import LIMIT, worst

    for owner, t in _templates():
        if t.pattern is not None:
            r, label = worst(t.pattern)
            assert r <= LIMIT, (owner, t.pattern.pattern, label, r)
