"""Crash classifier: every kind, root-cause specificity, line numbers, hints, and non-crashes."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from eagle_tui.model.events import CrashEvent, LineKind, LogLine, Phase
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.ingest.crash import KINDS, CrashTracker, hint_for, kind_of
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.model.state import DashboardState

TS = "[2025-11-20 11:02:17] "
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total"
       " capacity of 79.19 GiB of which 1.01 GiB is free.")


def crash(lines: Sequence[str], *, ready: bool = False) -> CrashEvent | None:
    """The crash the reducer keeps for these lines (``ready`` prepends a ready SGLang server)."""
    pre = [TS + "server_args=ServerArgs(model_path='m')",
           TS + "The server is fired up and ready to roll!"] if ready else []
    p = LogParser()
    events = [e for line in (*pre, *lines) for e in p.feed_line(line)] + p.finish()
    st = reduce(DashboardState(), events)
    if st.startup.crash is not None and ready:
        c = st.startup.crash
        return CrashEvent(c.kind, c.lineno - len(pre), c.message, c.hint, c.time)
    return st.startup.crash


def tb(*frames_and_exc: str, head: str = "Traceback (most recent call last):") -> list[str]:
    return [head, *frames_and_exc]


FRAME = ['  File "/usr/lib/python3.12/site-packages/sglang/srt/x.py", line 10, in f',
         "    do_thing()"]


@pytest.mark.parametrize(("lines", "kind", "line"), [
    # cuda_oom
    (tb(*FRAME, OOM), "cuda_oom", 4),
    (["RuntimeError: CUDA error: out of memory"], "cuda_oom", 1),
    (["(EngineCore_DP0 pid=2) ERROR 09-18 12:03:12 [core.py:712] ValueError: Failed to load "
      "model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory for "
      "weights, increasing --tensor-parallel-size, or using --quantization. (original error: "
      "CUDA out of memory)"], "cuda_oom", 1),
    # not_enough_memory
    ([TS + "Scheduler hit an exception: Traceback (most recent call last):", *FRAME,
      "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current "
      "value: mem_fraction_static=0.55"], "not_enough_memory", 4),
    ([TS + "Scheduler hit an exception: Traceback (most recent call last):", *FRAME,
      "ValueError: Loaded weights leave no GPU memory for the KV cache under "
      "--mem-fraction-static=0.5. Raise --mem-fraction-static above 0.773 (minimum viable = 1 - "
      "available/pre = 0.7726). If using speculative decoding, draft weights are now counted."],
     "not_enough_memory", 4),
    (["ValueError: Free memory on device cuda:0 (10.5/79.2 GiB) on startup is less than desired "
      "GPU memory utilization (0.9, 71.3 GiB). Decrease GPU memory utilization or reduce GPU "
      "memory used by other processes."], "not_enough_memory", 1),
    (["ValueError: No available memory for the cache blocks. Try increasing "
      "`gpu_memory_utilization` when initializing the engine."], "not_enough_memory", 1),
    # nccl
    (["RuntimeError: NCCL error: remote process exited or there was a network error"], "nccl", 1),
    (["[rank1]:[E1130 10:00:00.123 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective "
      "operation timeout: WorkNCCL(SeqNum=78, OpType=BROADCAST, NumelIn=80, NumelOut=80, "
      "Timeout(ms)=600000) ran for 600096 milliseconds before timing out."], "nccl", 1),
    (["terminate called after throwing an instance of 'c10::DistBackendError'"], "nccl", 1),
    # port_in_use
    ([TS + "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): "
      "address already in use"], "port_in_use", 1),
    (tb('  File "/x/launcher.py", line 1, in serve', "    sock.bind(addr)",
        "OSError: [Errno 98] Address already in use"), "port_in_use", 4),
    (["zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:29236')"],
     "port_in_use", 1),
    (["ValueError: detokenizer_port at 30001 is not available in 30 seconds. Please check."],
     "port_in_use", 1),
    # model_not_found
    (tb(*FRAME, "OSError: meta-llama/Llama-3.1-8B-Instruc is not a local folder and is not a "
        "valid model identifier listed on 'https://huggingface.co/models'"), "model_not_found", 4),
    (["huggingface_hub.errors.LocalEntryNotFoundError: Cannot find the requested files in the "
      "disk cache and outgoing traffic has been disabled."], "model_not_found", 1),
    (["ValueError: Unrecognized model in /models/x. Should have a `model_type` key in its "
      "config.json"], "model_not_found", 1),
    # watchdog_timeout
    (["[2025-04-03 20:06:34 DP1 TP0] Watchdog timeout (self.watchdog_timeout=300)"],
     "watchdog_timeout", 1),
    (["[2026-09-22 01:05:16] Scheduler watchdog timeout (self.watchdog_timeout=300, "
      "self.soft=False)", "[2026-09-22 01:05:21] SIGQUIT received. signum=None, frame=None. It "
      "usually means one child failed."], "watchdog_timeout", 1),
    # config_error
    (["usage: launch_server.py [-h] --model-path MODEL_PATH",
      "launch_server.py: error: argument --speculative-algorithm: invalid choice: 'EAGLE4' "
      "(choose from 'EAGLE', 'EAGLE3', 'NEXTN')"], "config_error", 2),  # the error, not usage
    (tb(*FRAME, "pydantic_core._pydantic_core.ValidationError: 1 validation error for "
        "SpeculativeConfig"), "config_error", 4),
    (tb(*FRAME, "ValueError: speculative_eagle_topk must be 1 when --enable-dp-attention is set"),
     "config_error", 4),
    (tb(*FRAME, "ValueError: Unknown speculative algorithm name: EAGLE4"), "config_error", 4),
    # engine_dead
    (["(APIServer pid=1) ERROR 09-18 12:03:12 [core_client.py:1] EngineDeadError: EngineCore "
      "encountered an issue. See stack trace (above) for the root cause."], "engine_dead", 1),
    ([TS + "Rank 0 scheduler is dead. Please check if there are relevant logs.",
      TS + "Exit code: -6"], "engine_dead", 1),
    (["RuntimeError: Rank 0 scheduler died during initialization (exit code: -6). If exit code "
      "is -9 (SIGKILL), a common cause is the OS OOM killer."], "engine_dead", 1),
    (["(APIServer pid=1) WARNING 11-30 01:18:32 [core_client.py:817] [shutdown] MPClient: engine"
      " core exited unexpectedly; starting cleanup"], "engine_dead", 1),
    # killed
    (["Killed"], "killed", 1),
    ([TS + "Received sigquit from a child process. It usually means the child failed."],
     "killed", 1),
    (["RuntimeError: Rank 0 scheduler died during initialization (exit code: -9). If exit code "
      "is -9 (SIGKILL), a common cause is the OS OOM killer."], "killed", 1),
    # other_traceback (before ready: any uncaught exception stops the launch)
    (tb(*FRAME, "KeyError: 'rope_scaling'"), "other_traceback", 4),
    (["Fatal Python error: Segmentation fault"], "other_traceback", 1),
])
def test_each_kind_and_its_root_cause_line(lines: list[str], kind: str, line: int) -> None:
    c = crash(lines)
    assert c is not None, lines
    assert (c.kind, c.lineno) == (kind, line)
    assert c.message and "\n" not in c.message and len(c.message) <= 240
    assert c.hint


def test_every_kind_has_a_concrete_hint() -> None:
    assert set(KINDS) == {"cuda_oom", "not_enough_memory", "nccl", "port_in_use",
                          "model_not_found", "watchdog_timeout", "config_error", "engine_dead",
                          "killed", "crash_loop", "other_traceback"}
    for kind in KINDS:
        assert len(hint_for(kind)) > 40
    assert "--mem-fraction-static" in hint_for("cuda_oom", "sglang", Phase.CUDA_GRAPH)
    assert "--cuda-graph-max-bs" in hint_for("cuda_oom", "sglang", Phase.CUDA_GRAPH)
    assert "--tensor-parallel-size" in hint_for("cuda_oom", "vllm", Phase.LOADING_WEIGHTS)
    assert "--mem-fraction-static" in hint_for("not_enough_memory", "sglang")
    assert "--gpu-memory-utilization" in hint_for("not_enough_memory", "vllm")
    assert "30000" in hint_for("port_in_use", message="('0.0.0.0', 30000): address already in use")
    assert "--port" in hint_for("port_in_use")
    assert "model path" in hint_for("model_not_found")


def test_capture_failed_with_oom_is_cuda_oom_at_the_first_oom_line() -> None:
    lines = [TS + "Scheduler hit an exception: Traceback (most recent call last):", *FRAME, OOM,
             "", "During handling of the above exception, another exception occurred:", "",
             "Traceback (most recent call last):", *FRAME,
             "Exception: Capture cuda graph failed: " + OOM[len("torch.OutOfMemoryError: "):],
             "Possible solutions:", "1. set --mem-fraction-static to a smaller value (e.g., 0.8)",
             TS + "Received sigquit from a child process. It usually means the child failed.",
             "Killed"]
    c = crash(lines)
    assert c is not None and (c.kind, c.lineno) == ("cuda_oom", 4)


def test_nccl_error_then_sigquit_is_nccl() -> None:
    c = crash(["[rank0]:[E1130 10:00:00 ProcessGroupNCCL.cpp:685] [Rank 0] Watchdog caught "
               "collective operation timeout: WorkNCCL(SeqNum=1) ran for 600000 milliseconds",
               TS + "Received sigquit from a child process. It usually means the child failed."])
    assert c is not None and (c.kind, c.lineno) == ("nccl", 1)


def test_engine_core_failed_then_the_root_cause_below() -> None:
    lines = ["(EngineCore_DP0 pid=2) ERROR 09-18 12:03:12 [core.py:712] EngineCore failed to "
             "start.",
             "(EngineCore_DP0 pid=2) ERROR 09-18 12:03:12 [core.py:712] Traceback (most recent "
             "call last):",
             '(EngineCore_DP0 pid=2) ERROR 09-18 12:03:12 [core.py:712]   File "core.py", line 7',
             "(EngineCore_DP0 pid=2) ERROR 09-18 12:03:12 [core.py:712]     engine = Engine()",
             "(EngineCore_DP0 pid=2) ERROR 09-18 12:03:12 [core.py:712] ValueError: To serve at "
             "least one request with the models's max seq len (131072), (16.50 GiB KV cache is "
             "needed, which is larger than the available KV cache memory (9.84 GiB).",
             "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause "
             "above. Failed core proc(s): {}"]
    c = crash(lines)
    assert c is not None and (c.kind, c.lineno) == ("not_enough_memory", 5)
    assert "--gpu-memory-utilization" in c.hint


def test_generic_root_cause_replaced_by_a_specific_one_later() -> None:
    tracker = CrashTracker()
    first = tracker.feed("Engine core initialization failed.", 1, level="ERROR", engine="vllm")
    later = tracker.feed("RuntimeError: NCCL error: unhandled system error", 9, level="ERROR",
                         engine="vllm")
    assert [e.kind for e in first] == ["engine_dead"] and [e.kind for e in later] == ["nccl"]
    assert tracker.feed("Killed", 10) == []  # less specific than what was already reported


@pytest.mark.parametrize("marker", ["EngineCore failed to start.", "WorkerProc failed to start."])
def test_a_v1_failed_to_start_line_is_fatal_and_waits_for_its_traceback(marker: str) -> None:
    tracker = CrashTracker()
    assert tracker.feed(marker, 1, level="ERROR", engine="vllm") == []
    later = tracker.feed("RuntimeError: NCCL error: unhandled system error", 9, level="ERROR",
                         engine="vllm")
    assert [(e.kind, e.lineno) for e in later] == [("nccl", 9)]
    alone = CrashTracker()  # the traceback cut: the line itself is the crash, at the end
    alone.feed(marker, 1, level="ERROR", engine="vllm")
    alone.feed("Traceback (most recent call last):", 2, level="ERROR", engine="vllm")
    alone.feed('  File "/x/vllm/v1/engine/core.py", line 3, in run', 3, level="ERROR")
    assert [(e.kind, e.lineno, e.message) for e in alone.finish("vllm")] == [
        ("other_traceback", 1, marker)]


@pytest.mark.parametrize("lines", [
    # error text quoted in a traceback's source line is not the error
    [TS + "Scheduler hit an exception: Traceback (most recent call last):",
     '  File "/x/model_runner.py", line 300, in init_memory_pool',
     '    raise RuntimeError("Not enough memory. Please try to increase --mem-fraction-static.")',
     "RuntimeError: boom"],
])
def test_quoted_source_lines_are_not_the_cause(lines: list[str]) -> None:
    c = crash(lines)
    assert c is not None and (c.kind, c.lineno) == ("other_traceback", 4)


@pytest.mark.parametrize("lines", [
    ["(Worker pid=1) WARNING 11-30 00:10:13 [cpu_worker.py:114] NCCL is slow here: check "
     "NCCL_P2P_DISABLE"],
    ["host:123:456 [0] NCCL WARN Cuda failure 'out of memory'"],
    ["[rank0]:[W1130 10:00:00 ProcessGroupNCCL.cpp:4561] Warning: NCCL timeout is large"],
    ["/x/dispatcher.py:138: FutureWarning: `torch.distributed.reduce_op` is deprecated"],
    ["(APIServer pid=1) WARNING 11-30 00:09:59 [system_utils.py:255] Found ulimit of 20000 and "
     "failed to automatically increase with error current limit exceeds maximum limit. This can "
     "cause fd limit errors like `OSError: [Errno 24] Too many open files`."],
    [TS + "port 30000 is in use. Waiting for 1 seconds for http_port to be available."],
    ["    raise RuntimeError('CUDA out of memory')"],  # indented code outside a traceback
    # a handled request error after ready is not a crash
    [TS + "Error in request", *tb(*FRAME, "ValueError: prompt is too long")],
])
def test_things_that_are_not_crashes(lines: list[str]) -> None:
    assert crash(lines, ready=True) is None


def test_traceback_after_ready_becomes_the_cause_when_the_process_dies() -> None:
    lines = [*tb(*FRAME, "AssertionError"), "Killed"]
    c = crash(lines, ready=True)
    assert c is not None and (c.kind, c.lineno) == ("other_traceback", 4)


def test_shutdown_noise_is_not_a_crash() -> None:
    lines = ["(EngineCore pid=9) INFO 11-30 00:02:52 [core.py:1454] [shutdown] EngineCore: "
             "trigger received signal=SIGTERM",
             "(APIServer pid=1) ERROR 11-30 00:02:52 [async_llm.py:906] AsyncLLM output_handler "
             "failed.",
             "(APIServer pid=1) ERROR 11-30 00:02:52 [async_llm.py:906] vllm.v1.engine.exceptions."
             "EngineDeadError: EngineCore encountered an issue."]
    assert crash(lines, ready=True) is None
    assert crash([*tb(*FRAME, "KeyboardInterrupt"), "Killed"], ready=True) is None


def test_a_marker_whose_traceback_never_came_still_counts_at_the_end() -> None:
    c = crash([TS + "Scheduler hit an exception: Traceback (most recent call last):"])
    assert c is not None and (c.kind, c.lineno) == ("other_traceback", 1)


def test_crash_lines_are_error_and_traceback_kinds() -> None:
    p = LogParser()
    kinds = [e.kind for line in [*tb(*FRAME, OOM)] for e in p.feed_line(line)
             if isinstance(e, LogLine)]
    assert kinds == [LineKind.TRACEBACK] * 3 + [LineKind.ERROR]


def test_kind_of_plain_messages() -> None:
    assert kind_of("CUDA out of memory") == "cuda_oom"
    assert kind_of("all good") is None


# -- general crash reading: frames without a header, the process's end ------------------------
def _finish(lines: list[tuple[str, str | None]]) -> list[tuple[str, int, str]]:
    tracker = CrashTracker()
    out = [e for i, (msg, level) in enumerate(lines, 1)
           for e in tracker.feed(msg, i, level=level)]
    out += tracker.finish()
    return [(e.kind, e.lineno, e.message) for e in out]


def test_a_tail_of_frames_and_an_exception_line_is_a_crash() -> None:
    got = _finish([('  File "/x/model_runner.py", line 3, in load_model', None),
                   ("    self.model = get_model()", None),
                   ("RuntimeError: something broke", None)])
    assert got == [("other_traceback", 3, "RuntimeError: something broke")]


def test_frames_that_lost_their_indentation_are_still_frames() -> None:
    got = _finish([('File "/x/scheduler.py", line 3, in event_loop', None),
                   ("self.process_batch_result(batch)", None),
                   ('File "/x/scheduler.py", line 9, in process_batch_result', None),
                   ("raise ValueError(x)", None),
                   ("ValueError: bad batch", None)])
    assert got == [("other_traceback", 5, "ValueError: bad batch")]


def test_a_traceback_the_log_stops_in_is_a_crash_at_its_start() -> None:
    got = _finish([("INFO: loading", "INFO"),
                   ("Traceback (most recent call last):", None),
                   ('  File "/x/model_runner.py", line 3, in load_model', None),
                   ("    self.model = get_model()", None)])
    assert got == [("other_traceback", 2, "Traceback (most recent call last):")]
    headless = _finish([('  File "/x/model_runner.py", line 3, in load_model', None)])
    assert [k for k, _, _ in headless] == ["other_traceback"]


def test_argparse_crash_is_its_error_line_or_the_usage_alone() -> None:
    got = _finish([("usage: launch_server.py [-h] --model-path MODEL_PATH", None),
                   ("launch_server.py: error: unrecognized arguments: --reasoning_parser x",
                    None)])
    assert got == [("config_error", 2,
                    "launch_server.py: error: unrecognized arguments: --reasoning_parser x")]
    alone = _finish([("usage: launch_server.py [-h] --model-path MODEL_PATH", None)])
    assert alone == [("config_error", 1, "usage: launch_server.py [-h] --model-path MODEL_PATH")]


def test_cuda_driver_out_of_memory_is_oom() -> None:
    assert kind_of("RuntimeError: CUDA driver error: out of memory") == "cuda_oom"


def test_sigkill_without_a_traceback_says_oom_killer_with_the_host_memory() -> None:
    from eagle_tui.model.events import ProcessExited
    from eagle_tui.model.ingest.crash import KILLED_MESSAGE, killed_crash

    ev = ProcessExited(1.0, 7, 137, 9, 3 * 2**30, 64 * 2**30)
    c = killed_crash(ev, 12)
    assert c is not None and (c.kind, c.lineno) == ("killed", 12)
    assert c.message.startswith(KILLED_MESSAGE) and "3.0 GiB available of 64.0 GiB" in c.message
    assert "dmesg" in KILLED_MESSAGE
    plain = killed_crash(ProcessExited(1.0, 7, None, 9), 1)
    assert plain is not None and plain.message == KILLED_MESSAGE  # memory unknown: not invented
    assert killed_crash(ProcessExited(1.0, 7, 1, None), 1) is None
    assert killed_crash(ProcessExited(1.0, 7, 143, 15), 1) is None


def test_sigkill_exit_reaches_the_banner_headless_and_the_run_record() -> None:
    from eagle_tui.headless.lines import phase_text
    from eagle_tui.model.events import CrashEvent, ProcessExited
    from eagle_tui.model.fold.reducer import reduce
    from eagle_tui.model.views.runsummary import summarize

    ev = ProcessExited(1.0, 7, 137, 9, 2**30, 8 * 2**30)
    s = reduce(DashboardState(), [ev])
    assert s.startup.crash is not None and s.startup.crash.kind == "killed"
    assert "CRASHED (killed)" in phase_text(s)
    from eagle_tui.headless.lines import diagnosis_lines
    from eagle_tui.headless.progress import verdict

    status, why = verdict(s, has_url=False) or ("", "")
    assert status == "crashed" and why.startswith("server process 7 exited (exit code 137): killed")
    text = "\n".join(diagnosis_lines(s, status, why))
    assert "OOM killer" in text and "with no crash line in the log" in text
    record = summarize(s)["crash"]
    assert "dmesg" in record["message"] and "1.0 GiB available of 8.0 GiB" in record["message"]
    # the log's own bare "Killed" says less: replaced; a real cause in the log stays
    said = reduce(DashboardState(), [CrashEvent("killed", 3, "Killed", "h"), ev])
    assert said.startup.crash is not None and "OOM killer" in said.startup.crash.message
    oom = CrashEvent("cuda_oom", 3, "torch.OutOfMemoryError: CUDA out of memory", "h")
    kept = reduce(DashboardState(), [oom, ev])
    assert kept.startup.crash == oom


def test_host_memory_from_proc_meminfo() -> None:
    from eagle_tui.sources.process import host_memory
    from eagle_tui.sources.process_rules import end_of_watch, parse_meminfo

    text = "MemTotal:       65536 kB\nMemFree:  1 kB\nMemAvailable:    2048 kB\n"
    assert parse_meminfo(text) == (2048 * 1024, 65536 * 1024)
    assert parse_meminfo("MemTotal: 1 kB\n") is None
    local = host_memory()
    assert local is not None and 0 <= local[0] <= local[1]
    exited = end_of_watch(1.0, 5, seen=True, signal=9, memory=(1, 2))[-1]
    assert (exited.mem_available, exited.mem_total) == (1, 2)  # type: ignore[union-attr]


def test_a_traceback_cut_in_a_call_that_names_the_failure_takes_its_kind() -> None:
    got = _finish([("Traceback (most recent call last):", None),
                   ('  File "/x/pynccl.py", line 99, in __init__', None),
                   ("    self.comm: ncclComm_t = self.nccl.ncclCommInitRank(", None)])
    assert got == [("nccl", 1, "Traceback (most recent call last):")]
