"""The phases a fragment's traceback frames and prefill batches imply, in the reducer and in
``report`` alike: each engine's frame table (``engines/<engine>/phases.py``, read by
``evidence.phase_in_line``), torch's rendezvous store, and the corpus excerpts that show each.
"""

from __future__ import annotations

import io

import pytest

from eagle_tui.model.events import CrashEvent, LineKind, LogLine, Phase, PhaseEvent
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.ingest.evidence import phase_in_line, phase_of_crash
from eagle_tui.model.state import DashboardState
from eagle_tui.report import build_report, close, to_plain
from tests.support.paths import FIXTURES

CORPUS = FIXTURES / "corpus"


@pytest.mark.parametrize(("text", "phase"), [
    # SGLang's scheduler loop and the batches it runs (frames, and the source line's call)
    ('  File ".../sglang/srt/managers/scheduler.py", line 1196, in event_loop_normal',
     Phase.SERVING),
    ('  File ".../sglang/srt/managers/scheduler.py", line 2061, in event_loop_overlap',
     Phase.SERVING),
    ("    scheduler.run_event_loop()", Phase.SERVING),
    ('File ".../scheduler.py", line 4614, in run_batch', Phase.SERVING),  # indentation lost
    ('  File ".../eagle_worker_v2.py", line 1110, in _draft_extend_for_decode', Phase.SERVING),
    ("    batch_result = self.model_worker.forward_batch_generation(", Phase.SERVING),
    # vLLM's engine core busy loop, and the model built inside its loader
    ('  File ".../vllm/v1/engine/core.py", line 1547, in run_busy_loop', Phase.SERVING),
    ("    self._process_engine_step()", Phase.SERVING),
    ("    self.worker.load_model()", Phase.LOADING_WEIGHTS),
    ('    self.collective_rpc("load_model")', Phase.LOADING_WEIGHTS),
    ('  File ".../vllm/model_executor/models/utils.py", line 610, in make_layers',
     Phase.LOADING_WEIGHTS),
    # torch's rendezvous store is created while the distributed environment starts
    ('File ".../torch/distributed/rendezvous.py", line 186, in _create_c10d_store', Phase.INIT),
    # not these: a name that only starts alike, and the attention backend's decode (graph
    # capture runs it too)
    ("    model_config = self.load_model_config()", None),
    ('  File ".../flashinfer_backend.py", line 1521, in forward_decode', None),
])
def test_frames_imply_their_phase(text: str, phase: Phase | None) -> None:
    found = phase_in_line(text)
    assert (found[0] if found else None) is phase


@pytest.mark.parametrize("engine", ["unknown", "vllm", "sglang"])
def test_tcpstore_that_cannot_listen_is_init(engine: str) -> None:
    msg = ("RuntimeError: The server socket has failed to listen on any local network address. "
           "useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use")
    found = phase_of_crash(CrashEvent("port_in_use", 3, msg, "hint"), engine)
    assert found is not None and found[0] is Phase.INIT


LOOP = LogLine(2, '  File ".../sglang/srt/managers/scheduler.py", line 1196, in event_loop_normal',
               LineKind.TRACEBACK)


def test_a_fragments_scheduler_loop_traceback_infers_serving() -> None:
    s = reduce(DashboardState(), [LOOP])
    assert s.startup.phase is Phase.SERVING
    assert s.startup.phase_inferred == "the scheduler's event loop in the traceback"


def test_with_the_start_in_view_a_loop_traceback_is_not_serving() -> None:
    # the warm-up request runs through the same loop: its failure is no sign of serving
    s = reduce(DashboardState(), [PhaseEvent(Phase.HTTP_SERVER, 1), LOOP])
    assert s.startup.phase is Phase.HTTP_SERVER


def _phase(data: bytes) -> tuple[str, str]:
    r = build_report(io.BytesIO(data), "x.log")
    try:
        rep = to_plain(r)
    finally:
        close(r)
    inferred = rep["inferred"]
    assert isinstance(inferred, dict)
    return str(rep["phase"]), str((inferred["phase"] or {}).get("reason"))


PREFILL = (b"[2025-01-07 20:16:02 TP0] Prefill batch. #new-seq: 1, #new-token: 48, "
           b"#cached-token: 0, cache hit rate: 0.00%, token usage: 0.00, #running-req: 0, "
           b"#queue-req: 0\n")


@pytest.mark.parametrize("fast", [True, False])
def test_report_takes_a_prefill_only_fragment_as_serving(fast: bool) -> None:
    r = build_report(io.BytesIO(PREFILL * 3), "x.log", fast=fast)
    try:
        rep = to_plain(r)
    finally:
        close(r)
    assert rep["phase"] == "serving"
    assert rep["inferred"]["phase"]["reason"] == "a prefill stats line"  # type: ignore[index]


def test_report_with_the_start_in_view_keeps_a_prefill_as_warm_up() -> None:
    start = b"[2025-01-07 20:16:00] INFO:     Uvicorn running on http://0.0.0.0:30000\n"
    assert _phase(start + PREFILL)[0] == "http_server"


@pytest.mark.parametrize(("name", "phase", "reason"), [
    ("sglang/sglang-2777-eagle2-prefill-burst", "serving", "a prefill stats line"),
    ("sglang/sglang-2102-scheduler-traceback-serving", "serving",
     "the scheduler's event loop in the traceback"),
    ("sglang/sglang-24283-spec-grammar-scheduler-exception", "serving",
     "the scheduler's event loop in the traceback"),
    ("sglang/sglang-33892-dp-ep-prefix-elided-frames", "serving",
     "the scheduler's event loop in the traceback"),
    ("vllm/vllm-13673-v1-ngram-busy-loop-exception", "serving",
     "the engine core's busy loop in the traceback"),
    ("vllm/vllm-16343-oom-model-init-frames", "loading_weights",
     "the model being built and loaded in the traceback"),
    ("vllm/vllm-11617-tcpstore-eaddrinuse", "init", None),
])
def test_corpus_excerpts_show_each_rule(name: str, phase: str, reason: str | None) -> None:
    got, why = _phase((CORPUS / f"{name}.log").read_bytes())
    assert got == phase
    if reason is not None:
        assert why == reason
