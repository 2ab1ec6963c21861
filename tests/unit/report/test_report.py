"""``eagle-tui report``: golden reports, fast path == line-by-line, the JSON contract, the CLI.

Goldens live in ``tests/fixtures/golden/``, one per fixture log (the recorded vLLM CPU server
logs and every SAMPLES.md sample). After a deliberate change, regenerate them with
``EAGLE_TUI_UPDATE_GOLDEN=1 pytest tests/unit/report/test_report.py`` and review the diff.
"""

from __future__ import annotations

import io
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from eagle_tui.cli import main
from eagle_tui.model.events import Event, LogLine
from eagle_tui.model.ingest.parser import LogParser
from eagle_tui.report import NumberSpool, build_report, close
from eagle_tui.report import write_json as dump
from tests.support.bench import bench_module
from tests.support.parsing import framed
from tests.support.paths import REPO

ROOT = REPO
FIX = ROOT / "tests" / "fixtures"
GOLDEN = FIX / "golden"
LOGS = sorted([*FIX.glob("vllm-cpu/*.log"), *FIX.glob("samples/*.log")])
SAMPLE = ROOT / "eagle_tui" / "data" / "sample-sglang-eagle3.log"
UPDATE = os.environ.get("EAGLE_TUI_UPDATE_GOLDEN") == "1"
PHASES = {"none", "init", "loading_weights", "weights_loaded", "kv_cache", "cuda_graph",
          "http_server", "ready", "serving"}


def report(data: bytes, name: str = "x.log", *, fast: bool = True,
           baseline: float | None = None) -> dict[str, Any]:
    r = build_report(io.BytesIO(data), name, fast=fast, baseline=baseline)
    out = io.BytesIO()
    try:
        dump(r, out)
    finally:
        close(r)
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


def rel(path: Path) -> str:
    return path.relative_to(FIX).as_posix()


@pytest.mark.parametrize("log", LOGS, ids=rel)
def test_golden(log: Path) -> None:
    got = report(log.read_bytes(), rel(log))
    golden = GOLDEN / (rel(log).replace("/", "__").removesuffix(".log") + ".json")
    if UPDATE:
        golden.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert got == json.loads(golden.read_text())


@pytest.mark.parametrize("log", [*LOGS, SAMPLE], ids=lambda p: p.name)
def test_fast_path_equals_line_by_line(log: Path) -> None:
    data = log.read_bytes()
    assert report(data, fast=True) == report(data, fast=False)


def derived_line_by_line(data: bytes) -> list[Event]:
    p = LogParser()
    out: list[Event] = []
    for line in data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"):
        out.extend(e for e in p.feed_line(line) if not isinstance(e, LogLine))
    out.extend(p.finish())
    return out


def derived_fast(data: bytes, seed: int) -> list[Event]:
    rng = random.Random(seed)
    feed = framed(LogParser(), visible=False)
    out: list[Event] = []
    i = 0
    while i < len(data):
        n = rng.choice([1, 7, 100, 4096, 1 << 16])
        out.extend(feed.feed(data[i : i + n]))
        i += n
    out.extend(feed.finish())
    return out


@pytest.mark.parametrize("log", [*LOGS, SAMPLE], ids=lambda p: p.name)
def test_parser_fast_path_emits_exactly_the_derived_events(log: Path) -> None:
    data = log.read_bytes()
    expected = derived_line_by_line(data)
    assert derived_fast(data, 1) == expected
    assert derived_fast(data, 2) == expected


def test_feed_chunk_with_lines_matches_feed_line() -> None:
    data = SAMPLE.read_bytes()
    p1, p2 = LogParser(), LogParser()
    feed = framed(p2)
    by_line = [e for line in data.split(b"\n")[:-1] for e in p1.feed_line(line)]
    by_chunk = [e for i in range(0, len(data), 333)
                for e in feed.feed(data[i : i + 333])] + feed.finish()
    assert by_chunk == by_line + p1.finish()
    assert p2.lineno == p1.lineno == data.count(b"\n")


def test_contract_shape() -> None:
    r = report(SAMPLE.read_bytes(), "sample.log")
    assert list(r)[:13] == ["file", "engine", "lines", "phase", "ready", "phases", "crash",
                            "speculative", "accept_len", "gen_throughput", "hidden_state_dims",
                            "summary", "alerts"]
    assert r["file"] == "sample.log" and r["engine"] in ("sglang", "vllm", "unknown")
    assert isinstance(r["lines"], int) and r["phase"] in PHASES and isinstance(r["ready"], bool)
    for p in r["phases"]:
        assert set(p) == {"phase", "line", "time"} and p["phase"] in PHASES
    assert set(r["speculative"]) == {"algorithm", "draft_model", "num_steps", "eagle_topk",
                                     "num_draft_tokens"}
    assert all(isinstance(x, float) for x in r["accept_len"] + r["gen_throughput"])
    assert all(isinstance(x, int) for x in r["hidden_state_dims"])
    assert set(r["summary"]) == {"accept_len_mean", "gen_throughput_median"}
    for a in r["alerts"]:
        assert set(a) == {"kind", "severity", "message"}


def test_summary_is_exact() -> None:
    r = report(SAMPLE.read_bytes())
    assert r["summary"]["accept_len_mean"] == pytest.approx(statistics.mean(r["accept_len"]))
    assert r["summary"]["gen_throughput_median"] == statistics.median(r["gen_throughput"])


@pytest.mark.parametrize("n", [1, 2, 3, 10, 40_001])
def test_spool_median_and_mean_are_exact(n: int) -> None:
    rng = random.Random(n)
    values = [round(rng.uniform(0, 3000), 2) for _ in range(n)]
    spool = NumberSpool(median=True)
    try:
        for i in range(0, n, 1000):  # mixed batches of tokens and single floats
            chunk = values[i : i + 1000]
            spool.add_tokens([f"{v:.2f}".encode() for v in chunk[1:]],
                             b",".join(f"{v:.2f}".encode() for v in chunk[1:]))
            spool.add(chunk[0])
        assert spool.count == n
        assert spool.median() == pytest.approx(statistics.median(values))
        assert spool.mean() == pytest.approx(statistics.mean(values))
        assert sorted(spool.values()) == pytest.approx(sorted(values))
    finally:
        spool.close()


def test_floats_are_written_without_exponents() -> None:
    spool = NumberSpool()
    spool.add(1e-05)
    spool.add(float("nan"))  # dropped, never written as invalid JSON
    out = io.BytesIO()
    spool.write_json(out)
    spool.close()
    assert json.loads(out.getvalue()) == [1e-05] and b"e" not in out.getvalue()


def test_last_line_without_newline_and_empty_input() -> None:
    assert report(b"")["lines"] == 0 and report(b"")["phase"] == "none"
    r = report(b"[2025-11-20 10:15:02] The server is fired up and ready to roll!")
    assert (r["lines"], r["phase"], r["ready"]) == (1, "ready", True)


def test_binary_garbage_is_read_not_crashed_on() -> None:
    rng = random.Random(5)
    data = bytes(rng.randrange(256) for _ in range(200_000))
    assert report(data) == report(data, fast=False)
    assert report(data)["lines"] == data.count(b"\n") + (not data.endswith(b"\n"))


def test_big_generated_log_fast_equals_line_by_line(tmp_path: Path) -> None:
    generate = bench_module("bench_report").generate

    path = tmp_path / "gen.log"
    generate(path, 30_000)
    data = path.read_bytes()
    fast = report(data)
    assert fast == report(data, fast=False)
    assert fast["lines"] == 30_000 and fast["phase"] == "serving" and fast["ready"]
    assert fast["hidden_state_dims"] == [21504]
    assert len(fast["accept_len"]) == len(fast["gen_throughput"]) == data.count(b"Decode batch")


def test_drafts_rejected_and_baseline_alerts() -> None:
    lines = [f"[2025-11-20 10:16:0{i}] Decode batch, #running-req: 1, #token: 10, token usage: "
             f"0.00, accept len: 1.0{i}, cuda graph: True, gen throughput (token/s): 50.00, "
             "#queue-req: 0" for i in range(4)]
    r = report(("\n".join(lines) + "\n").encode(), baseline=90.0)
    kinds = {a["kind"]: a["severity"] for a in r["alerts"]}
    assert kinds == {"drafts_rejected": "critical", "below_baseline": "warning"}


# ------------------------------------------------------------------------------ the CLI
def test_cli_json_and_exit_code(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["report", "--json", str(SAMPLE)]) == 0
    r = json.loads(capsysbinary.readouterr().out)
    assert r["engine"] == "sglang" and r["ready"] and r["hidden_state_dims"] == [12288]


def test_cli_human_summary(capsys: pytest.CaptureFixture[str]) -> None:
    log = FIX / "samples" / "sglang-oom-cuda-graph.log"
    assert main(["report", str(log)]) == 0
    out = capsys.readouterr().out
    assert "crash: cuda_oom at line 23" in out and "--mem-fraction-static" in out
    assert "phase: cuda_graph (not ready)" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["report", "/nonexistent/server.log"], "cannot read /nonexistent/server.log"),
    (["report", "."], "cannot read ."),
])
def test_cli_unreadable_file_exits_2_with_one_line(argv: list[str], message: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("argv", [["report"], ["report", "a", "b"],
                                  ["report", "--baseline", "-3", "x.log"]])
def test_cli_usage_errors_exit_2(argv: list[str]) -> None:
    try:  # argparse's own refusal, or the command's (no LOG and no --container)
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    assert code == 2


def test_cli_reads_stdin_in_a_real_process() -> None:
    data = (FIX / "samples" / "vllm-kv-too-small.log").read_bytes()
    proc = subprocess.run([sys.executable, "-m", "eagle_tui", "report", "--json", "-"],
                          input=data, capture_output=True, cwd=ROOT, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert (r["file"], r["engine"], r["crash"]["kind"], r["crash"]["line"]) == (
        "-", "vllm", "not_enough_memory", 5)


def test_a_drafter_loading_alone_says_speculation_is_on() -> None:
    """vLLM's ``Loading drafter model...`` with no settings line in view (a fragment)."""
    from eagle_tui.report.output import render_text

    engine = ("(APIServer pid=2) INFO 10-30 14:20:01 [loggers.py:1] Engine 000: Avg prompt "
              "throughput: 0.0 tokens/s, Avg generation throughput: 80.0 tokens/s, Running: 4 "
              "reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%")
    data = "\n".join(["(EngineCore_DP0 pid=1) INFO 10-30 14:19:15 [gpu_model_runner.py:2602] "
                      "Loading drafter model...", *[engine] * 6]).encode() + b"\n"
    r = build_report(io.BytesIO(data), "x")
    text = render_text(r)
    close(r)
    assert "speculative: on (a draft model loaded; its settings are not in the log)" in text
    assert "alert [warning] no_drafts_verified:" in text
