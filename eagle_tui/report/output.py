"""Writing a finished report: the JSON object other tools rely on, and the human summary.

A report (``ReportBuilder.finish``) is a dict whose ``accept_len`` and ``gen_throughput`` are
:class:`~.spool.NumberSpool`\\ s, possibly on disk: :func:`write_json` copies them into the
stream instead of loading them, and :func:`close` releases their files. :func:`render_text` is
pure: the command writes the text it returns.
"""

from __future__ import annotations

import json
from typing import Any, BinaryIO

from eagle_tui.model.ingest.normalize import sanitize

from .spool import NumberSpool


def write_json(report: dict[str, Any], out: BinaryIO) -> None:
    """Write the report as one JSON object; spooled arrays are copied, not loaded."""
    out.write(b"{")
    for i, (key, value) in enumerate(report.items()):
        if i:
            out.write(b", ")
        out.write(json.dumps(key).encode() + b": ")
        if isinstance(value, NumberSpool):
            value.write_json(out)
        else:
            out.write(json.dumps(value).encode())
    out.write(b"}\n")


def close(report: dict[str, Any]) -> None:
    """Release the report's spools (their temporary files)."""
    for value in report.values():
        if isinstance(value, NumberSpool):
            value.close()


def to_plain(report: dict[str, Any]) -> dict[str, Any]:
    """The report with arrays materialized (tests, small logs)."""
    out: dict[str, Any] = {}
    for key, value in report.items():
        out[key] = value.values() if isinstance(value, NumberSpool) else value
    return out


def _fmt(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def render_text(report: dict[str, Any]) -> str:
    """The human summary of ``eagle-tui report`` (without ``--json``)."""
    r = report
    ready = "ready" if r["ready"] else "not ready"
    if r["ready"] and isinstance(r.get("ready_s"), int | float):
        ready = f"ready after {r['ready_s']:.1f} s"  # the one meaning (model.views.ready)
    parts: list[str] = []
    w = parts.append
    inferred = r.get("inferred") or {}
    eng, ph = inferred.get("engine"), inferred.get("phase")
    eng_note = f" (inferred from {eng['reason']}, line {eng['line']})" if eng else ""
    ph_note = f", inferred from {ph['reason']} at line {ph['line']}" if ph else ""
    w(f"{sanitize(r['file'])}: {r['engine']}{eng_note}, {r['lines']} lines\n")
    if r.get("encoding"):  # a UTF-16/32 (or BOM'd) log, decoded: say so
        w(f"encoding: {r['encoding']}\n")
    w(f"phase: {r['phase']} ({ready}{ph_note})\n")
    for p in r["phases"]:
        mark = " (inferred)" if ph and (p["phase"], p["line"]) == (ph["value"], ph["line"]) else ""
        w(f"  {p['phase']:<16} line {p['line']:<8} {p['time'] or ''}".rstrip() + mark + "\n")
    eng = r.get("engine_startup")
    if eng:  # the engine's own measure of its startup, and where it was read
        named = ", ".join(f"{k} {v:.2f} s" for k, v in eng["figures"].items() if v > 0)
        w(f"startup as the engine measured it ({eng['source']}): {named or 'all zero'}\n")
    if (pw := r.get("piecewise_graphs")) is not None:
        w(f"  piecewise CUDA graphs: {pw['stage']} {pw['done']}/{pw['total']} ({pw['role']}, "
          f"line {pw['line']})\n")
    c = r["crash"]
    if c is None:
        w("crash: none\n")
    else:
        w(f"crash: {c['kind']} at line {c['line']}\n  {c['message']}\n  fix: {c['hint']}\n")
    s = r["speculative"]
    if s is None and r["accept_len"].count:  # only a speculating engine logs accept len
        w("speculative: on (accept len on the stats lines; its settings are not in the log)\n")
    elif s is None:
        w("speculative: not seen in the log\n")
    else:
        settings = [f"{k}={v}" for k, v in s.items() if v is not None]
        if not settings:  # a draft model loading, with no settings line in view
            w("speculative: on (a draft model loaded; its settings are not in the log)\n")
        else:
            w(f"speculative: {', '.join(settings)}\n")
    acc, gen, summ = r["accept_len"], r["gen_throughput"], r["summary"]
    w(f"accept len: {acc.count} values, mean {_fmt(summ['accept_len_mean'])}")
    w(f", last {_fmt(acc.tail[-1])}\n" if acc.count else "\n")
    num = r.get("numbers") or {}
    if num.get("accept_len_weighted") is not None:
        w(f"accept len weighted: {_fmt(num['accept_len_weighted'])} ({num['window']})\n")
        if num["accepted_distribution"]:
            dist = " ".join(f"{j}:{p:.2f}" for j, p in enumerate(num["accepted_distribution"]))
            w(f"accepted drafts per step: {dist}\n")
    w(f"gen throughput: {gen.count} values, median {_fmt(summ['gen_throughput_median'], 1)} "
      "tok/s")
    w(f", last {_fmt(gen.tail[-1], 1)}\n" if gen.count else "\n")
    dims = r["hidden_state_dims"]
    w(f"hidden-state dims: {', '.join(map(str, dims)) if dims else '-'}\n")
    alerts = r["alerts"]  # the crash alert too: the text lists what --json lists
    if not alerts:
        w("alerts: none\n")
    for a in alerts:
        w(f"alert [{a['severity']}] {a['kind']}: {a['message']}\n")
    return "".join(parts)


__all__ = ["close", "render_text", "to_plain", "write_json"]
