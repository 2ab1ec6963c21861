"""``eagle-tui runs list | show RUN | compare RUN RUN [...] | note RUN TEXT | rm RUN``.

``RUN`` is an id, a name, ``last`` or ``last~N``. Every subcommand takes ``--json``:
``list`` prints a JSON array of objects (at least ``id``, ``name``, ``engine``, ``command``,
``started``, ``state``); ``compare`` an object with ``runs`` (each with at least ``id``,
``accept_len``, ``tok_s``) and ``flags_changed`` (a list of ``{flag, from, to}``). Demo runs are
kept apart: ``--demo`` lists them instead of the real ones.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, TextIO

from eagle_tui.commands import argtypes
from eagle_tui.console import fail, say
from eagle_tui.model.boundary.termtext import Inert, inert_lines
from eagle_tui.model.ingest.normalize import sanitize

EXIT_OK = 0
EXIT_USAGE = 2


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("runs", help="the run history: list, show, compare, note, rm",
                              description=__doc__.split("\n\n")[1] if __doc__ else None)
    sub = p.add_subparsers(dest="runs_command", metavar="SUBCOMMAND", required=True)
    ls = sub.add_parser("list", help="recorded runs, oldest first")
    ls.add_argument("--demo", action="store_true", help="the demo's runs instead")
    ls.add_argument("--limit", type=argtypes.count, default=50)
    show = sub.add_parser("show", help="one run in full")
    show.add_argument("run", metavar="RUN")
    cmp_ = sub.add_parser("compare", help="runs side by side with the flags that changed")
    cmp_.add_argument("runs", metavar="RUN", nargs="+")
    cmp_.add_argument("--baseline", metavar="TOKS_PER_S", type=argtypes.rate, default=None)
    cmp_.add_argument("--baseline-run", metavar="RUN", default=None,
                      help="take the baseline tok/s from a recorded run")
    note = sub.add_parser("note", help="attach a note to a run")
    note.add_argument("run", metavar="RUN")
    note.add_argument("text", metavar="TEXT", nargs="+")
    rm = sub.add_parser("rm", help="remove a run from the history")
    rm.add_argument("run", metavar="RUN")
    for q in (ls, show, cmp_, note, rm):
        q.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _iso(t: float | None) -> str | None:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(t)) if t else None


def _metric(rec: Any, key: str) -> float | None:
    value = (rec.metrics or {}).get(key)
    return float(value) if isinstance(value, (int, float)) else None


def _accept_text(rec: Any) -> str:
    """``3.40 (server counters)``: the run's acceptance and its source."""
    value = _metric(rec, "accept_len")
    if value is None:
        return "—"
    source = (rec.metrics or {}).get("accept_source")
    return f"{value:.2f} ({source})" if isinstance(source, str) and source else f"{value:.2f}"


def _timeline(rec: Any) -> list[dict[str, Any]]:
    return [{"state": e[0], "at": _iso(e[1]), "note": e[2]} for e in rec.timeline or ()]


def run_dict(rec: Any) -> dict[str, Any]:
    """A run as ``--json`` shows it (stable keys)."""
    return {
        "id": rec.id, "name": rec.name, "kind": rec.kind, "demo": rec.demo,
        "engine": rec.engine, "version": rec.version, "host": rec.host,
        "command": rec.command, "flags": rec.flags or {}, "started": _iso(rec.started),
        "ended": _iso(rec.ended), "state": rec.state, "state_text": rec.state_text,
        "timeline": _timeline(rec), "log": rec.log_path, "url": rec.url,
        "pid": rec.pid, "parent": rec.parent, "phases": rec.phases or {},
        "ready_s": rec.ready_s, "crash": rec.crash, "metrics": rec.metrics or {},
        "windows": rec.windows or [], "baseline": rec.baseline, "notes": rec.notes,
        "accept_len": _metric(rec, "accept_len"), "tok_s": _metric(rec, "tok_s_median"),
        "accept_source": (rec.metrics or {}).get("accept_source"),
        "tok_s_mean": _metric(rec, "tok_s_mean"),
        "figures_note": getattr(rec, "figures_note", ""),
        "container": rec.container,
    }


def container_of(rec: Any) -> str:
    """``container NAME · IMAGE`` of a container's run (``""``: none)."""
    if not getattr(rec, "container", None):
        return ""
    name = rec.container_text("name") or rec.container_text("id")[:12]
    return f"container {name} · {rec.container_text('image')}"


def container_rows(recs: list[Any]) -> tuple[list[list[str]], list[dict[str, Any]]]:
    """The container rows of ``runs compare`` (``*``: differs among the runs) and the options
    that changed, first → last."""
    if not any(getattr(r, "container", None) for r in recs):
        return [], []
    opts = [{"image": r.container_text("image") or None, "cli": r.container_text("cli") or None,
             **{k: v for k, v in ((r.container or {}).get("options") or {}).items()
                if isinstance(k, str)}} for r in recs]
    rows: list[list[str]] = []
    changed: list[dict[str, Any]] = []
    for key in ["image", "cli", *sorted({k for o in opts for k in o} - {"image", "cli"})]:
        values = [o.get(key) for o in opts]
        shown = [" ".join(v) if isinstance(v, list) else "—" if v is None else str(v)
                 for v in values]
        differs = len(set(shown)) > 1
        rows.append([f"{'*' if differs else ' '} {key}", *[sanitize(v)[:40] for v in shown]])
        if differs:
            changed.append({"option": key, "from": values[0], "to": values[-1]})
    return rows, changed


REFRESH_AT_MOST = 3  # runs a ``runs list`` completes per call (each bounded)


def _fresh(store: Any, rec: Any, notes: dict[int, str]) -> Any:
    """``rec`` with the figures it lacked (:func:`~eagle_tui.commands.runfigures.refreshed`);
    why some are still missing goes to ``notes``."""
    from eagle_tui.commands.runfigures import lacks_figures, live_here, refreshed

    if rec.demo or not (lacks_figures(rec) or live_here(rec)):
        return rec
    rec, note = refreshed(store, rec)
    if note:
        notes[rec.id] = note
    return rec


def _fmt(v: float | None, spec: str = ".1f", suffix: str = "") -> str:
    return "—" if v is None else f"{v:{spec}}{suffix}"


def _table(rows: list[list[str]], out: TextIO) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        row = "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))
        say(inert_lines(row.rstrip()), out)


def cmd_list(store: Any, args: argparse.Namespace, out: TextIO) -> int:
    runs = store.list(demo=bool(args.demo), limit=max(1, args.limit))
    notes: dict[int, str] = {}
    from eagle_tui.commands.runfigures import lacks_figures, live_here

    lacking = [i for i, r in enumerate(runs) if lacks_figures(r) or live_here(r)]
    for i in lacking[-REFRESH_AT_MOST:]:
        runs[i] = _fresh(store, runs[i], notes)
    if args.json:
        json.dump([run_dict(r) for r in runs], out, ensure_ascii=True)
        say(Inert(""), out)
        return EXIT_OK
    if not runs:
        say(inert_lines("no runs recorded yet (eagle-tui launch ... records one)"), out)
        return EXIT_OK
    rows = [["ID", "NAME", "ENGINE", "HOST", "STARTED", "STATE", "READY", "TOK/S", "ACCEPT",
             "COMMAND"]]
    for r in runs:
        rows.append([str(r.id), sanitize(r.name or ""), r.engine or "?", sanitize(r.host or
                     "local"), time.strftime("%m-%d %H:%M", time.localtime(r.started)),
                     sanitize(r.state_text),
                     _fmt(r.ready_s, ".0f", "s"), _fmt(_metric(r, "tok_s_median")),
                     _accept_text(r), sanitize(container_of(r) or r.command or "")[:60]])
    _table(rows, out)
    return EXIT_OK


def cmd_show(store: Any, args: argparse.Namespace, out: TextIO) -> int:
    notes: dict[int, str] = {}
    rec = _fresh(store, store.get(args.run), notes)
    d = run_dict(rec)
    d["figures_note"] = notes.get(rec.id, "")
    if args.json:
        json.dump(d, out, ensure_ascii=True)
        say(Inert(""), out)
        return EXIT_OK
    say(sanitize(f"run {rec.label} ({rec.kind}{', demo' if rec.demo else ''}) "
                 f"{rec.engine or ''} on {rec.host or 'this machine'}: {rec.state_text}"), out)
    if rec.container:
        say(sanitize(f"  {container_of(rec)} (id {rec.container_text('id')[:12]}, "
                     f"{rec.container_text('cli')}); options: "
                     f"{json.dumps((rec.container or {}).get('options') or {}, sort_keys=True)}"),
            out)
    for key in ("command", "started", "ended", "log", "url", "pid", "baseline", "notes"):
        if d.get(key) is not None:
            say(sanitize(f"  {key}: {d[key]}"), out)
    if rec.ready_s is not None:
        from eagle_tui.model.views.ready import MEANING

        say(sanitize(f"  ready: {rec.ready_s:.1f} s ({MEANING})"), out)
    say(sanitize(f"  accept: {_accept_text(rec)}"
                 + (f" — {(rec.metrics or {}).get('accept_note')}"
                    if (rec.metrics or {}).get("accept_note") else "")), out)
    if d["figures_note"]:
        say(sanitize(f"  figures: {d['figures_note']}"), out)
    if rec.timeline:
        say(inert_lines("  timeline:"), out)
        for e in d["timeline"]:
            link = " as " if e["state"] == "relaunched" else " — "
            say(sanitize(f"    {e['at']}  {e['state']}" + (link + e["note"] if e["note"] else "")),
                out)
    for key in ("phases", "crash", "metrics"):
        if d.get(key):
            say(sanitize(f"  {key}: {json.dumps(d[key], sort_keys=True)}"), out)
    for w in d["windows"]:
        if isinstance(w, dict) and isinstance(w.get("figures"), list):  # log, /metrics, client
            from eagle_tui.commands.bench_window import format_window

            for line in format_window(w):
                say(sanitize(line), out)
        else:
            say(sanitize(f"  window: {json.dumps(w, sort_keys=True)}"), out)
    return EXIT_OK


def startup_order(keys: set[str]) -> list[str]:
    """A run's phase keys in the order a launch passes through them (they were listed
    alphabetically: ``http_server`` before ``init``); a key of another version's last."""
    from eagle_tui.model.events import Phase

    rank = {p.value: p.rank for p in Phase}
    return sorted(keys, key=lambda k: (rank.get(k, len(rank)), k))


def cmd_compare(store: Any, args: argparse.Namespace, out: TextIO) -> int:
    from eagle_tui.model.bench.compare import flag_changes, speedup

    notes: dict[int, str] = {}
    recs = [_fresh(store, store.get(ref), notes) for ref in args.runs]
    baseline = args.baseline
    if args.baseline_run:
        base = _fresh(store, store.get(args.baseline_run), notes)
        baseline = _metric(base, "tok_s_median")
        if baseline is None:
            why = f" ({notes[base.id]})" if base.id in notes else ""
            raise ValueError(f"run {base.label} has no tok/s figure to use as the baseline{why}")
    changes = flag_changes([r.flags or {} for r in recs])
    crows = container_rows(recs)
    runs = []
    for r in recs:
        d = run_dict(r)
        base_r = baseline if baseline is not None else r.baseline
        d["speedup"] = speedup(d["tok_s"], base_r)
        d["figures_note"] = notes.get(r.id, "")
        runs.append(d)
    if args.json:
        json.dump({"runs": runs, "baseline": baseline, "flags_changed": [
            {"flag": c.flag, "from": c.before, "to": c.after} for c in changes],
            "container_changed": crows[1]}, out, ensure_ascii=True)
        say(Inert(""), out)
        return EXIT_OK
    head = ["", *[sanitize(f"#{r.id} {r.name or ''}")[:28] for r in recs]]
    rows = [head]
    rows.append(["engine", *[r.engine or "?" for r in recs]])
    rows.append(["state", *[sanitize(r.state_text) for r in recs]])
    for ph in startup_order({p for r in recs for p in (r.phases or {})}):
        rows.append([f"  {ph}", *[_fmt((r.phases or {}).get(ph), ".1f", "s") for r in recs]])
    rows.append(["ready", *[_fmt(r.ready_s, ".1f", "s") for r in recs]])
    rows.append(["tok/s (median)", *[_fmt(d["tok_s"]) for d in runs]])
    if any(d["tok_s_mean"] is not None for d in runs):
        rows.append(["tok/s (run mean)", *[_fmt(d["tok_s_mean"]) for d in runs]])
    rows.append(["accept len", *[_accept_text(r) for r in recs]])
    rows.append(["speedup", *[_fmt(d["speedup"], ".2f", "×") for d in runs]])
    if crows[0]:
        rows.append(["container (* differs)", *["" for _ in recs]])
        rows.extend(crows[0])
    _table(rows, out)
    for r in recs:
        if r.id in notes:
            say(sanitize(f"#{r.id}: {notes[r.id]}"), out)
    if changes:
        say(inert_lines("flags changed (first → last):"), out)
        for c in changes:
            say(sanitize(f"  {c.flag}: {c.before} → {c.after}"), out)
    else:
        say(inert_lines("flags: the same"), out)
    if crows[1]:
        say(inert_lines("container options changed (first → last):"), out)
        for ch in crows[1]:
            say(sanitize(f"  {ch['option']}: {ch['from']} → {ch['to']}"), out)
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    from eagle_tui.history.store import HistoryError, RunStore

    out = sys.stdout
    try:
        store = RunStore()
        sub = args.runs_command
        if sub == "list":
            return cmd_list(store, args, out)
        if sub == "show":
            return cmd_show(store, args, out)
        if sub == "compare":
            return cmd_compare(store, args, out)
        rec = store.get(args.run)
        if sub == "note":
            store.note(rec.id, " ".join(args.text))
        else:
            store.remove(rec.id)
        if args.json:
            json.dump({"id": rec.id, "done": sub}, out)
            say(Inert(""), out)
        else:
            done = "noted" if sub == "note" else "removed"
            say(inert_lines(f"{done} run {rec.label}"), out)
        return EXIT_OK
    except (HistoryError, ValueError) as exc:
        fail("runs", exc)
        return EXIT_USAGE


__all__ = ["register", "run", "run_dict"]
