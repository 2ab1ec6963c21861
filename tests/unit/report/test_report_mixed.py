"""``report`` on a generated log of every shape the chunk path treats specially, against a golden
made by the code *before* the single-pass rewrite (issue 15).

The golden (``tests/fixtures/golden/generated__mixed.json``) was written by ``report --json`` of
commit 3e82d01, before the report's bulk passes were folded together; the log is generated
here, deterministically. It mixes what a real log throws at the fast path: stamps with and
without a date, rank tags, ``Decode batch [N],`` (forward iterations), Decode lines with and
without ``accept len`` (non-speculative servers), debug prints quoting a Decode line, tokens the
fast path must refuse (``01.5``, ``1.2.3``, a huge number), a second and a third hidden-state
dim, bench window markers (access lines, which are plain lines), ESC and CR lines, and a crash
at the end. Serial (chunks of every size), line by line, and parallel (tiny chunks, several
workers) must all give the golden's bytes. The one-pass work tokens are also checked against
the three passes they replace on generated lines built from the pieces those passes look for.
"""

from __future__ import annotations

import io
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from eagle_tui.cli import main
from eagle_tui.model.ingest.classify import ACC_LINE_B, GEN_LINE_B, valid_tokens
from eagle_tui.report import build_report, build_report_parallel, close
from eagle_tui.report import write_json as dump
from eagle_tui.report.chunk_summary import RUN_WORK_B, WORK_LINE_B, RunTokens, run_tokens
from tests.support.paths import REPO

ROOT = REPO
GOLDEN = ROOT / "tests" / "fixtures" / "golden" / "generated__mixed.json"
UPDATE = os.environ.get("EAGLE_TUI_UPDATE_GOLDEN") == "1"

STARTUP = [
    "[2025-11-20 10:14:31] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct',"
    " tp_size=1, decode_log_interval=40, speculative_algorithm='EAGLE3', "
    "speculative_draft_model_path='yuhuili/EAGLE3-LLaMA3.1-Instruct-8B', "
    "speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4)",
    "[2025-11-20 10:14:40 TP0] Load weight begin. avail mem=78.58 GB",
    "[2025-11-20 10:14:45 TP0] Load weight end. type=LlamaForCausalLM, avail mem=63.44 GB, "
    "mem usage=15.14 GB.",
    "[2025-11-20 10:14:46 TP0] KV Cache is allocated. #tokens: 363000, K size: 22.16 GB",
    "[2025-11-20 10:14:47 TP0] Capture cuda graph begin. This can take up to several minutes.",
    "[2025-11-20 10:14:51 TP0] Capture cuda graph end. Time elapsed: 4.57 s.",
    "[2025-11-20 10:15:00] INFO:     Started server process [41873]",
    "[2025-11-20 10:15:00] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to "
    "quit)",
    "[2025-11-20 10:15:02] The server is fired up and ready to roll!",
]
CRASH = [
    "[2025-11-20 12:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2401, in run_scheduler_process',
    "    scheduler.event_loop_overlap()",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 1.02 GiB is free.",
    "[2025-11-20 12:00:01] Received sigquit from a child process. It usually means the child "
    "failed.",
]


def _stamp(rng: random.Random, t: int) -> str:
    clock = f"{t // 3600 % 24:02d}:{t // 60 % 60:02d}:{t % 60:02d}"
    shape = rng.random()
    if shape < 0.6:
        return f"[2025-11-20 {clock}] "
    if shape < 0.8:
        return f"[2025-11-20 {clock} TP0] "
    if shape < 0.9:
        return f"[2025-11-20 {clock} DP1 TP3] "
    return f"[{clock} TP0] "


def _marker(stamp: str, bench_id: str, at: str, t: float, **n: int) -> str:
    q = f"eagle-tui-bench={bench_id}&at={at}&t={t:.3f}" + "".join(
        f"&{k}={v}" for k, v in n.items())
    return f'{stamp}INFO:     127.0.0.1:45548 - "GET /health?{q} HTTP/1.1" 200 OK'


def mixed_log(lines: int, seed: int = 15) -> bytes:
    """A deterministic log of about ``lines`` lines of every shape the chunk path treats
    specially (see the module's docstring)."""
    rng = random.Random(seed)
    out = list(STARTUP)
    t, dim, bench = 36_100, 21504, 0
    while len(out) < lines:
        t += rng.randint(0, 1)
        st = _stamp(rng, t)
        r = rng.random()
        running = rng.randint(1, 48)
        acc = f"{min(4.0, max(1.0, rng.gauss(3.0, 0.3))):.2f}"
        gen = f"{rng.uniform(10.0, 1900.0):.2f}"
        it = f" [{rng.randint(1, 99999)}]" if rng.random() < 0.05 else ""
        if r < 0.35:
            out.append(f"{st}Decode batch{it}, #running-req: {running}, #token: "
                       f"{rng.randint(10, 90000)}, token usage: 0.{rng.randint(0, 99):02d}, "
                       f"accept len: {acc}, accept rate: 0.7{rng.randint(0, 9)}, cuda graph: "
                       f"True, gen throughput (token/s): {gen}, #queue-req: 0, ")
        elif r < 0.40:
            out.append(f"{st}Decode batch. #running-req: {running}, #full token: 11584, full "
                       f"token usage: 0.01, mamba num: 36, mamba usage: 0.60, accept len: "
                       f"{acc}, accept rate: 0.68, cuda graph: True, gen throughput (token/s): "
                       f"{gen}, #queue-req: 1")
        elif r < 0.42:
            out.append(f"{st}Decode batch, #running-req: {running}, #token: 11179, token usage: "
                       f"0.08, cuda graph: True, gen throughput (token/s): {gen}, #queue-req: 0")
        elif r < 0.75:
            if rng.random() < 0.002:
                dim = rng.choice([4096, 21504, 12288])
            shape = f"[{running * 4}, {dim}]" if rng.random() < 0.9 else f"[2, {running}, {dim}]"
            out.append(f"[EAGLE3-DEBUG] hidden_states shape=torch.Size({shape})")
        elif r < 0.85:
            out.append(f"{st}Prefill batch, #new-seq: 1, #new-token: {rng.randint(1, 3000)}, "
                       f"#cached-token: 0, token usage: 0.01, #running-req: {running}, "
                       "#queue-req: 0, ")
        elif r < 0.93:
            out.append(f'{st}INFO:     10.0.0.{rng.randint(1, 254)}:{rng.randint(1024, 65535)}'
                       ' - "POST /v1/chat/completions HTTP/1.1" 200 OK')
        elif r < 0.935:
            bench += 1
            out.append(_marker(st, f"w{bench}", "start", 1000.0 + bench * 10))
            out.extend(f"{_stamp(rng, t)}Decode batch, #running-req: 8, #token: 900, token "
                       f"usage: 0.01, accept len: 3.{k}0, accept rate: 0.8, cuda graph: True, "
                       f"gen throughput (token/s): 4{k}0.00, #queue-req: 0, " for k in range(4))
            out.append(_marker(st, f"w{bench}", "end", 1004.0 + bench * 10, tokens=900,
                               events=300, requests=8))
        elif r < 0.95:
            out.append(f"[EAGLE3-DEBUG] quoting: {st}Decode batch, #running-req: {running}, "
                       f"accept len: {acc}, gen throughput (token/s): {gen}, ")
        elif r < 0.955:
            bad = rng.choice(["01.5", "1.2.3", "7.", "9" * 400, ".5"])
            out.append(f"{st}Decode batch, #running-req: {running}, #token: 5, token usage: "
                       f"0.00, accept len: {bad}, cuda graph: True, gen throughput (token/s): "
                       f"{gen}, #queue-req: 0, ")
        elif r < 0.96:
            out.append(f"{st}Decode batch, #running-req: {'9' * 20}, #token: 5, token usage: "
                       f"0.00, accept len: {acc}, cuda graph: True, gen throughput (token/s): "
                       f"{gen}, #queue-req: 0, ")
        elif r < 0.965:
            out.append(f"\x1b[32m{st}Decode batch, #running-req: {running}, accept len: {acc}, "
                       f"gen throughput (token/s): {gen}\x1b[0m")
        elif r < 0.97:
            out.append(f"{st}Decode batch, #running-req: {running}, #token: 1, accept len: "
                       f"{acc}\r")
        elif r < 0.975:
            out.append(f"{st}Decode batch, #running-req: {running}, gen throughput (token/s): "
                       f"{gen}, accept len: {acc}, ")
        else:
            out.append(f"{st}Some other line #{len(out)} with ] brackets [x])")
    out.extend(CRASH)
    return ("\n".join(out) + "\n").encode()


def _dumped(report: dict[str, Any]) -> dict[str, Any]:
    out = io.BytesIO()
    try:
        dump(report, out)
    finally:
        close(report)
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


@pytest.fixture(scope="module")
def log_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mixed") / "mixed.log"
    path.write_bytes(mixed_log(12_000))
    return path


def test_cli_report_equals_the_golden(log_file: Path,
                                      capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["report", "--json", "--workers", "1", str(log_file)]) == 0
    got = json.loads(capsysbinary.readouterr().out)
    got["file"] = "mixed.log"
    if UPDATE:
        GOLDEN.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    golden = json.loads(GOLDEN.read_text())
    assert got == golden
    # what the log holds, so that the golden tests what it claims to
    assert golden["crash"] is not None and len(golden["hidden_state_dims"]) >= 2
    assert len(golden["windows"]) >= 2


@pytest.mark.parametrize("chunk", [1 << 16, 100_003, 1 << 22])
def test_serial_chunks_and_line_by_line_equal_the_golden(log_file: Path, chunk: int) -> None:
    golden = json.loads(GOLDEN.read_text())
    golden.pop("windows")
    data = log_file.read_bytes()
    for fast in (True, False):
        got = _dumped(build_report(io.BytesIO(data), "mixed.log", fast=fast, chunk=chunk))
        assert got == golden


@pytest.mark.parametrize("workers", [2, 4])
def test_parallel_equals_the_golden(log_file: Path, workers: int) -> None:
    golden = json.loads(GOLDEN.read_text())
    golden.pop("windows")
    with log_file.open("rb") as f:
        got = _dumped(build_report_parallel(f, "mixed.log", workers=workers, threshold=0,
                                            min_bytes=1, chunk=1 << 16))
    assert got == golden


def test_the_report_pass_finds_the_first_bench_marker_as_the_scan_does(log_file: Path) -> None:
    from eagle_tui.commands.report_windows import first_marker

    expected = first_marker(log_file)
    assert expected is not None and expected > 0
    data = log_file.read_bytes()
    for fast, chunk in ((True, 1 << 16), (False, 1 << 16), (True, 1 << 22)):
        mark: list[int] = []
        close(build_report(io.BytesIO(data), "x", fast=fast, chunk=chunk, bench_mark=mark))
        assert mark == [expected]
    for workers in (1, 3):
        mark = []
        with log_file.open("rb") as f:
            close(build_report_parallel(f, "x", workers=workers, threshold=0, min_bytes=1,
                                        chunk=1 << 16, bench_mark=mark))
        assert mark == [expected]
    mark = []
    close(build_report(io.BytesIO(data[:expected]), "x", bench_mark=mark))
    assert mark == []  # none before it
    tail = data[expected:].split(b"\n", 1)[0]  # the marker's line alone, no newline after it
    close(build_report(io.BytesIO(b"x\n" + tail), "x", bench_mark=mark))
    assert mark == [2]


# ------------------------------------------------------------------- the one-pass work tokens

_piece = st.sampled_from([
    "[2025-11-20 10:16:03] ", "[2025-11-20 10:16:03 TP0] ", "[04:40:55 DP1 TP0] ",
    "[1234567] Decode bat", "[1234567 TP0 TP1 TP2] ", "[EAGLE3-DEBUG] ", "Decode batch",
    "Decode batch, ", "Decode batch. ", "Decode batch [7], ", "#running-req: 3, ",
    f"#running-req: {'9' * 16}, ", "#token: 12, token usage: 0.01, ", "#token: 1, ",
    "token usage: 1.2.3, ", "accept len: ", "accept len: 2.50", "accept len: x", "accept len: 01.5",
    "accept len: .5", "gen throughput (token/s): ", "gen throughput (token/s): 12.5", ", ", "] ",
    "])", "a", "7", ".", " ", "#full token: 5, full token usage: 0.1, ", "cuda graph: True, ",
])
_line = st.lists(_piece, max_size=12).map("".join)


def _old_run_tokens(buf: bytes, a: int, b: int) -> RunTokens | None:
    """``run_tokens`` as it was before the one-pass work tokens (three ``findall``s)."""
    acc = ACC_LINE_B.findall(buf, a, b)
    gen = GEN_LINE_B.findall(buf, a, b)
    acc_text, gen_text = b",".join(acc), b",".join(gen)
    if not (valid_tokens(acc_text) and valid_tokens(gen_text)):
        return None
    return RunTokens(acc, acc_text, gen, gen_text, WORK_LINE_B.findall(buf, a, b))


def _same_tokens(data: bytes, a: int) -> None:
    """``run_tokens`` gives the three passes' tokens; ``paired`` only where the accept tokens
    are the work tokens' own, in order (their counts then come from the work counts)."""
    new, old = run_tokens(data, a, len(data)), _old_run_tokens(data, a, len(data))
    assert (new if new is None else new[:5]) == (old if old is None else old[:5])
    if new is not None and new.paired:
        assert new.acc == [acc for _, acc in new.work]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, min_size=1, max_size=30))
@example(["[2025-11-20 10:16:03] Decode batch, #running-req: 3, #token: 1, token usage: 0.01, "
          "accept len: 2.50, gen throughput (token/s): 12.5", "[EAGLE3-DEBUG] x"])  # paired
def test_one_pass_work_tokens_equal_the_three_passes(lines: list[str]) -> None:
    data = ("\n" + "\n".join(lines) + "\n").encode()
    assert RUN_WORK_B.findall(data) == WORK_LINE_B.findall(data, 1)
    _same_tokens(data, 1)
    _same_tokens(data[1:], 0)  # a raw run's own buffer: no newline in front


def test_one_pass_work_tokens_on_the_mixed_log() -> None:
    data = b"\n" + mixed_log(3000, seed=7)
    assert RUN_WORK_B.findall(data) == WORK_LINE_B.findall(data, 1)
    _same_tokens(data, 1)
