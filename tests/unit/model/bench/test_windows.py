"""Benchmark windows from a log's markers, their weighted figures, results files, and the fold of
eagle-tui's own poll lines.

The vLLM lines are the recorded real server's (``server-eagle3.log`` of the real vLLM CPU
server, tests/realserver); the markers are what ``eagle-tui bench`` sends.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from eagle_tui.model.bench.benchfiles import counter_totals, metrics_figures, parse_results
from eagle_tui.model.bench.windows import (
    WindowTracker,
    bench_mark,
    is_own_access,
    marker_query,
    own_path,
)
from eagle_tui.model.buffers.logbuffer import LogBuffer
from eagle_tui.model.events import LineKind, LogLine
from tests.support.parsing import parse
from tests.support.paths import TESTS

ENGINE = ("(APIServer pid=330) INFO 11-30 00:10:{s:02d} [loggers.py:335] Engine 000: Avg prompt "
          "throughput: 0.0 tokens/s, Avg generation throughput: {tps} tokens/s, Running: 4 reqs, "
          "Waiting: 0 reqs, CPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%")
SPEC = ("(APIServer pid=330) INFO 11-30 00:10:{s:02d} [metrics.py:120] SpecDecoding metrics: Mean "
        "acceptance length: {mean:.2f}, Accepted throughput: {atps:.2f} tokens/s, Drafted "
        "throughput: 77.07 tokens/s, Accepted: {acc} tokens, Drafted: 213 tokens, Per-position "
        "acceptance rate: 1.000, 0.930, 0.775, Avg Draft acceptance rate: 90.1%")


def access(path: str) -> str:
    return f'INFO:     127.0.0.1:45548 - "GET {path} HTTP/1.1" 200 OK'


def start(bench_id: str, t: float) -> str:
    return access(f"/health?{marker_query(bench_id, 'start', t=t)}")


def end(bench_id: str, t: float, **n: int) -> str:
    return access(f"/health?{marker_query(bench_id, 'end', t=t, **n)}")


def interval(s: int, tps: float, acc: int, drafts: int, secs: float = 2.0) -> list[str]:
    return [ENGINE.format(s=s, tps=tps),
            SPEC.format(s=s, mean=1 + acc / drafts, atps=acc / secs, acc=acc)]


def test_marks_round_trip_and_own_lines_are_told_apart() -> None:
    m = bench_mark(end("ab12", 100.5, tokens=900, events=300, requests=10))
    assert m is not None and (m.bench_id, m.at) == ("ab12", "end")
    assert (m.number("t"), m.number("tokens"), m.number("requests")) == (100.5, 900, 10)
    assert own_path("/health") == "/health?eagle-tui"
    assert is_own_access(access(own_path("/metrics")))
    assert not is_own_access(start("ab12", 1.0))  # a window marker stays in view
    assert not is_own_access(access("/health"))  # a user's curl stays in view


def test_window_weights_intervals_by_drafts_and_takes_the_tail() -> None:
    lines = [*interval(10, 0.0, 0, 1), start("w1", 1000.0),
             # mean 3.00: 100 drafts; vLLM times the first spec line after idle from its last
             # one (6 s here), the Engine line's tok/s from the last Engine line (2 s)
             *interval(12, 300.0, 200, 100, secs=6.0),
             *interval(14, 600.0, 500, 200),  # mean 3.50: 200 drafts
             *interval(16, 30.0, 6, 20),  # a near-empty interval: mean 1.30
             end("w1", 1007.0, tokens=1900, events=600, requests=10),
             *interval(18, 100.0, 80, 40),  # the tail, logged after the end marker
             ENGINE.format(s=20, tps=0.0),  # idle: sealed
             *interval(22, 999.0, 999, 333)]  # another load: not this window's
    tracker = WindowTracker()
    tracker.feed(parse(lines))
    (w,) = tracker.windows
    assert w.sealed and w.duration_s == 7.0 and w.requests == 10
    log = w.log_figures()
    # weighted: 1 + 786 / 360 = 3.183; the plain mean of the four values would be 2.95
    assert log.accept_len == pytest.approx(1 + 786 / 360, rel=1e-3)
    assert log.intervals == 4
    # tokens: Σ tok/s × (accepted / accepted tok/s) = (300 + 600 + 30 + 100) × 2 s
    assert log.tokens == pytest.approx(2060, rel=1e-3)
    assert log.tok_s == pytest.approx(2060 / 7, rel=1e-3)
    assert w.client is not None and w.client.accept_len == pytest.approx(1890 / 590)
    assert w.client.tok_s == pytest.approx(1900 / 7)


def test_window_banners() -> None:
    lines = [start("ab", 1.0), *interval(12, 300.0, 200, 100), end("ab", 3.0, tokens=600,
             events=200, requests=4), *interval(14, 10.0, 10, 5), ENGINE.format(s=16, tps=0.0)]
    tracker = WindowTracker()
    texts = [t for ev in parse(lines) for t in tracker.banners([ev])]  # one batch per line
    assert texts[0] == "──── bench window ab started ────"
    assert texts[1].startswith("──── bench window ab ended · 2.0 s, 4 requests · client accept")
    assert texts[2].startswith("──── bench window ab · log accept 3.00, 310.0 tok/s")


def test_sglang_decode_lines_weigh_by_running_requests() -> None:
    dec = ("[2026-12-01 13:14:0{s}] Decode batch, #running-req: {r}, #token: 46, token usage: "
           "0.01, accept len: {a:.2f}, accept rate: 0.77, cpu graph: False, gen throughput "
           "(token/s): 40.00, #queue-req: 0")
    lines = ["[2026-12-01 13:13:00] server_args={'decode_log_interval': 10, 'model_path': 'x'}",
             start("sg", 10.0), dec.format(s=1, r=4, a=3.5), dec.format(s=2, r=1, a=2.0),
             end("sg", 20.0, tokens=160, events=0, requests=4, verify=50)]
    tracker = WindowTracker()
    tracker.feed(parse(lines))
    (w,) = tracker.windows
    log = w.log_figures()
    assert log.accept_len == pytest.approx((3.5 * 4 + 2.0) / 5)
    assert log.tokens == pytest.approx(10 * (4 * 3.5 + 1 * 2.0) + 10 / 2 * 2.0)  # + the tail
    assert w.client is not None and w.client.accept_len == pytest.approx(160 / 50)


VLLM_METRICS = """# TYPE vllm:spec_decode_num_drafts counter
vllm:spec_decode_num_drafts_total{{engine="0",model_name="m"}} {d}
vllm:spec_decode_num_drafts_created{{engine="0",model_name="m"}} 1.79e+09
vllm:spec_decode_num_accepted_tokens_total{{engine="0",model_name="m"}} {a}
vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="0",position="0"}} 99
vllm:generation_tokens_total{{engine="0",model_name="m"}} {g}
"""


def test_metrics_counter_deltas() -> None:
    before = counter_totals(VLLM_METRICS.format(d=100, a=250, g=400))
    after = counter_totals(VLLM_METRICS.format(d=400, a=1000, g=1500))
    assert before == {"vllm:spec_decode_num_drafts": 100, "vllm:spec_decode_num_accepted_tokens":
                      250, "vllm:generation_tokens": 400}
    fig = metrics_figures(before, after, 5.0)
    assert fig is not None and fig.accept_len == pytest.approx(1 + 750 / 300)
    assert fig.tok_s == pytest.approx(1100 / 5)
    with open(TESTS / "fixtures" / "sglang-cpu" / "eagle3-metrics.txt") as fh:
        sg = counter_totals(fh.read())
    assert sg == {"sglang:generation_tokens": 648.0, "sglang:spec_verify_calls": 177.0}
    fig = metrics_figures({k: 0.0 for k in sg}, sg, 10.0)
    assert fig is not None and fig.accept_len == pytest.approx(648 / 177)


def test_results_files_of_both_tools() -> None:
    vllm = {"date": "20261201-120000", "backend": "vllm", "model_id": "m", "duration": 20.0,
            "completed": 100, "total_output_tokens": 12800, "output_throughput": 640.0,
            "spec_decode_acceptance_length": 3.2, "spec_decode_acceptance_rate": 73.3,
            "spec_decode_num_drafts": 4000, "ttfts": [0.1]}
    (run,) = parse_results(json.dumps(vllm))
    assert run.tool == "vllm bench serve" and run.figures.accept_len == 3.2
    assert run.t_end is not None and run.t_start == run.t_end - 20.0
    sg = {"backend": "sglang", "dataset_name": "random", "duration": 10.0, "completed": 50,
          "total_output_tokens": 5000, "output_throughput": 500.0, "accept_length": 3.4}
    runs = parse_results(json.dumps(sg) + "\n" + json.dumps({**sg, "accept_length": None}) + "\n")
    assert [r.figures.accept_len for r in runs] == [3.4, None]
    assert runs[0].tool == "sglang.bench_serving" and runs[0].t_start is None
    with pytest.raises(ValueError):
        parse_results('{"hello": 1}')


def test_log_buffer_folds_own_polls_and_shows_them_on_request() -> None:
    b = LogBuffer()
    b.append([LogLine(1, "startup")])
    assert b.rows is None  # no own line yet: no row table
    b.append([LogLine(2, access("/health?eagle-tui"), LineKind.ACCESS),
              LogLine(3, access("/health"), LineKind.ACCESS),
              LogLine(4, start("x", 1.0), LineKind.ACCESS)])
    assert b.own_lines == 1 and b.narrowed
    assert [b.row_text(y) for y in range(b.row_count)] == [
        "startup", access("/health"), start("x", 1.0)]
    assert b.set_fold_own(False) and b.row_count == 4 and not b.narrowed
    assert not b.set_fold_own(False)
    b.set_fold_own(True)
    b.set_filter("health")
    assert b.row_count == 2  # the filter works within the fold


def test_report_finds_windows_and_places_results_by_time(tmp_path: Path) -> None:
    from eagle_tui.commands import report_windows

    log = tmp_path / "server.log"
    lines = [*interval(10, 0.0, 0, 1), start("w1", 1000.0), *interval(12, 300.0, 200, 100),
             end("w1", 1002.0, tokens=600, events=200, requests=4),
             *interval(14, 10.0, 10, 5), ENGINE.format(s=16, tps=0.0)]
    log.write_text("\n".join(lines) + "\n")
    assert report_windows.first_marker(log) == len("\n".join(lines[:2])) + 1
    t_end = time.mktime((time.localtime().tm_year, 11, 30, 0, 10, 13, 0, 0, -1))
    date = time.strftime("%Y%m%d-%H%M%S", time.localtime(t_end))
    res = tmp_path / "res.json"
    res.write_text(json.dumps({"date": date, "duration": 4.0, "completed": 4,
                               "total_output_tokens": 600, "output_throughput": 150.0,
                               "spec_decode_acceptance_length": 3.0}))
    wins = report_windows.windows(log, report_windows.load_results([str(res)]))
    assert [w["id"] for w in wins] == ["w1", "vllm bench serve"]
    by_source = {f["source"]: f for f in wins[1]["figures"]}
    assert by_source["log"]["accept_len"] == pytest.approx(3.0, rel=1e-3)  # stamped 00:10:12
    assert by_source["vllm bench serve"]["tok_s"] == 150.0
    assert "benchmark windows:" in report_windows.render(wins)
    with pytest.raises(ValueError, match=r"res\.txt"):
        (tmp_path / "res.txt").write_text("not json")
        report_windows.load_results([str(tmp_path / "res.txt")])


def test_a_window_is_kept_in_its_run_and_runs_show_lists_its_sources(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse
    import io

    from eagle_tui.commands.bench_window import save_window
    from eagle_tui.commands.runs import cmd_show
    from eagle_tui.history.store import RunStore

    monkeypatch.setenv("EAGLE_TUI_DATA_DIR", str(tmp_path))
    store = RunStore()
    run = store.add(kind="watched", engine="vllm", url="http://127.0.0.1:8000")
    window = {"id": "ab12", "duration_s": 8.3, "requests": 40, "figures": [
        {"source": "log", "accept_len": 3.434, "tok_s": 618.0, "note": "weighted by drafts"},
        {"source": "/metrics", "accept_len": 3.432, "tok_s": 618.4},
        {"source": "client", "accept_len": 3.353, "tok_s": 618.4}]}
    assert save_window(window, "http://127.0.0.1:8000", None) == run.label
    assert save_window(window, "http://elsewhere:1", None) is None
    assert store.get(str(run.id)).windows == [window]
    out = io.StringIO()
    cmd_show(store, argparse.Namespace(run=str(run.id), json=False), out)
    text = out.getvalue()
    assert "window ab12: 8.3 s, 40 requests" in text
    assert "log       accept  3.43  tok/s    618.0  (weighted by drafts)" in text
    assert "client    accept  3.35" in text


SG_DECODE = ("[2026-12-01 13:14:0{s}] Decode batch, #running-req: 4, #token: 46, token usage: "
             "0.01, accept len: 3.00, accept rate: 0.77, cpu graph: False, gen throughput "
             "(token/s): 40.00, #queue-req: 0")


def _sg_window(head: list[str]) -> list[str]:
    return [*head, "[2026-12-01 13:13:30] Load weight end. type=LlamaForCausalLM",
            start("iv", 10.0), SG_DECODE.format(s=1), SG_DECODE.format(s=2),
            end("iv", 20.0, tokens=0, events=0, requests=4)]


def test_the_report_reads_the_servers_decode_log_interval_before_the_first_marker(
        tmp_path: Path) -> None:
    """The window pass starts at the first marker, past the server_args line: the interval is
    still the server's (10 here), not the default 40 (which made tok/s 4x too high)."""
    from eagle_tui.commands.report_windows import first_marker, windows

    args = "[2026-12-01 13:13:00] server_args={'decode_log_interval': 10, 'model_path': 'x'}"
    log = tmp_path / "sg.log"
    log.write_text("\n".join(_sg_window([args])) + "\n")
    assert (first_marker(log) or 0) > 0
    (w,) = windows(log, [])
    (fig,) = [f for f in w["figures"] if f["source"] == "log"]
    tokens = 10 * 4 * 3.0 * 2 + 10 / 2 * 4 * 3.0  # two intervals + half a one for the tail
    assert fig["tokens"] == pytest.approx(tokens)
    assert fig["tok_s"] == pytest.approx(tokens / 10.0)
    assert "decode_log_interval 10, from the log's server_args" in fig["note"]
    # the launch command echoed into the log says it too; no statement at all: the default
    cmd = "+ python -m sglang.launch_server --model-path x --decode-log-interval=10 --port 1"
    log.write_text("\n".join(_sg_window([cmd])) + "\n")
    (w,) = windows(log, [])
    (fig,) = [f for f in w["figures"] if f["source"] == "log"]
    assert fig["tokens"] == pytest.approx(tokens)
    assert "from the launch command" in fig["note"]
    log.write_text("\n".join(_sg_window([])) + "\n")
    (w,) = windows(log, [])
    (fig,) = [f for f in w["figures"] if f["source"] == "log"]
    assert fig["tokens"] == pytest.approx(tokens * 4)
    assert "decode_log_interval 40, from the default" in fig["note"]


def test_a_live_window_takes_the_interval_from_server_info() -> None:
    from eagle_tui.model.engines.sglang.server_info import parse_server_info
    from eagle_tui.model.events import ServerInfo

    info = parse_server_info({"decode_log_interval": 10, "speculative_algorithm": "EAGLE3"}, 1.0)
    assert info.decode_log_interval == 10
    assert parse_server_info({"decode_log_interval": True}, 1.0).decode_log_interval is None
    tracker = WindowTracker()
    assert tracker.decode_log_interval == 40 and tracker.interval_from == "the default"
    tracker.feed([ServerInfo(t=1.0, decode_log_interval=10)])
    tracker.feed(parse(_sg_window([])))
    fig = tracker.windows[0].log_figures()
    assert fig.tokens == pytest.approx(10 * 4 * 3.0 * 2 + 10 / 2 * 4 * 3.0)
    assert "from /server_info" in fig.note
