"""``eagle-tui bench``: a small, bounded load generator for OpenAI-compatible servers.

It streams ``/v1/chat/completions`` (or ``/v1/completions``) from ``--concurrency`` workers until
``--requests`` are done or ``--timeout`` seconds have passed, and reports what a client sees:
aggregate tok/s, time to first token, inter-token latency and **tokens per SSE event**, the
client-side fingerprint of speculative decoding (one event per verify step, so ≈ the accept
length; 1.0 means drafts are not accepted). ``--endpoint generate`` (SGLang's native API) reads
the engine's own count of verify steps (``meta_info.spec_verify_ct``) instead. Token counts come
from the server's ``usage``; a server that sends none is counted one token per event, and the
result says so.

The run is a *benchmark window*: marker requests before and after the load show in the server's
access log (:mod:`eagle_tui.model.bench.windows`), and ``/metrics`` counters are read at both
ends (:mod:`eagle_tui.commands.bench_window`). :func:`run_bench` is the same code as a function
(the demo's built-in load).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eagle_tui.assembly.spec import normalize_url
from eagle_tui.commands import argtypes
from eagle_tui.commands.bench_result import BenchResult
from eagle_tui.console import fail, say, warn
from eagle_tui.errors import EagleError, UsageError
from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.boundary.sse import MAX_SSE_LINE, SseLines
from eagle_tui.model.boundary.termtext import inert_json, inert_lines

if TYPE_CHECKING:  # imported when a load runs: with click installed, httpx imports rich too
    import httpx

PROMPT = "Count from one hundred, one number after another, in words:"
ERROR_BODY_MAX = 300
MAX_ERRORS_KEPT = 5


class BenchError(EagleError):
    """The load could not start (server unreachable, no model to name): exit 1."""


@dataclass
class RequestResult:
    ok: bool
    error: str = ""
    ttft_s: float | None = None
    e2e_s: float = 0.0
    tokens: int = 0
    events: int = 0  # SSE events that carried text
    decode_s: float = 0.0  # first to last text event
    usage_reported: bool = False
    verify: int = 0  # SGLang /generate: the engine's verify steps (meta_info.spec_verify_ct)


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1]


def summarize(base: BenchResult, results: list[RequestResult], wall_s: float) -> BenchResult:
    good = [r for r in results if r.ok]
    base.ok, base.failed, base.wall_s = len(good), len(results) - len(good), wall_s
    base.tokens = sum(r.tokens for r in good)
    base.tok_s = base.tokens / wall_s if wall_s > 0 else 0.0
    ttfts = sorted(r.ttft_s for r in good if r.ttft_s is not None)
    itls = sorted(r.decode_s / (r.tokens - 1) for r in good if r.tokens > 1 and r.decode_s > 0)
    rates = sorted((r.tokens - 1) / r.decode_s for r in good if r.tokens > 1 and r.decode_s > 0)
    events = base.events = sum(r.events for r in good)
    base.verify = sum(r.verify for r in good)
    base.ttft_p50_s, base.ttft_p90_s = _quantile(ttfts, 0.5), _quantile(ttfts, 0.9)
    base.itl_p50_s, base.itl_p90_s = _quantile(itls, 0.5), _quantile(itls, 0.9)
    base.per_request_tok_s_p50 = _quantile(rates, 0.5)
    base.tokens_per_event = base.tokens / events if events else None
    base.tokens_estimated = any(not r.usage_reported for r in good)
    base.errors = [r.error for r in results if not r.ok][:MAX_ERRORS_KEPT]
    return base


def _payload(endpoint: str, model: str, max_tokens: int, index: int) -> dict[str, Any]:
    prompt = f"{PROMPT} (request {index})"
    if endpoint == "generate":
        return {"text": prompt, "stream": True,
                "sampling_params": {"max_new_tokens": max_tokens, "temperature": 0}}
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "stream": True,
                            "temperature": 0, "stream_options": {"include_usage": True}}
    if endpoint == "chat":
        body["messages"] = [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt
    return body


def _text_of(obj: dict[str, Any]) -> str:
    if isinstance(obj.get("text"), str) and "choices" not in obj:  # SGLang /generate
        return str(obj["text"])
    text = ""
    for choice in obj.get("choices") or ():
        if not isinstance(choice, dict):
            continue
        delta = choice.get("delta")
        if isinstance(delta, dict) and isinstance(delta.get("content"), str):
            text += delta["content"]
        elif isinstance(choice.get("text"), str):
            text += choice["text"]
    return text


async def _sse_lines(resp: httpx.Response, path: str) -> AsyncIterator[str]:
    """The stream's lines, each at most ``MAX_SSE_LINE`` bytes; a longer one refuses the stream
    (:class:`~eagle_tui.model.boundary.loaders.LoadError`, a ``ValueError``) without holding it."""
    lines = SseLines()
    async for chunk in resp.aiter_bytes():
        for line in lines.feed(chunk):
            if line is None:
                raise LoadError(f"the event stream of {path}",
                                f"a line longer than {MAX_SSE_LINE >> 20} MB (refused)")
            yield line
    for line in lines.finish():
        if line is not None:
            yield line


async def one_request(client: httpx.AsyncClient, path: str, body: dict[str, Any],
                      timeout: float) -> RequestResult:
    """Stream one request; every failure becomes ``RequestResult(ok=False, error=...)``."""
    import httpx

    start = time.perf_counter()
    res = RequestResult(ok=False)
    first = last = None
    native = "text" in body
    seen = ""  # /generate streams the text so far, not a delta
    try:
        async with client.stream("POST", path, json=body, timeout=timeout) as resp:
            if resp.status_code != 200:
                raw = (await resp.aread())[:ERROR_BODY_MAX].decode("utf-8", "replace")
                res.error = f"HTTP {resp.status_code}: {raw}"
                return res
            async for line in _sse_lines(resp, path):
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                obj = load_json(data, "an SSE event")
                if not isinstance(obj, dict):
                    raise ValueError("an SSE event is not a JSON object")
                usage = obj.get("usage") if not native else obj.get("meta_info")
                if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
                    res.tokens, res.usage_reported = usage["completion_tokens"], True
                    if isinstance(usage.get("spec_verify_ct"), int):
                        res.verify = usage["spec_verify_ct"]
                text = _text_of(obj)
                if native:  # the text so far (SGLang's default), or only the new part
                    text, seen = ((text[len(seen):], text) if text.startswith(seen)
                                  else (text, seen + text))
                if text:
                    now = time.perf_counter()
                    first = first if first is not None else now
                    last = now
                    res.events += 1
    except (httpx.HTTPError, ValueError) as exc:
        res.error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        res.e2e_s = time.perf_counter() - start
        return res
    res.e2e_s = time.perf_counter() - start
    if not res.usage_reported:
        res.tokens = res.events
    if first is not None and last is not None:
        res.ttft_s, res.decode_s = first - start, last - first
    res.ok = True
    return res


async def detect_model(client: httpx.AsyncClient, timeout: float) -> str:
    import httpx

    from eagle_tui.sources.http_budget import INFO_MAX_BYTES, HttpBudgetError, get_bounded

    try:
        resp = await get_bounded(client, "/v1/models", deadline_s=timeout,
                                 max_bytes=INFO_MAX_BYTES)
        if resp.status_code != 200:
            raise ValueError(f"HTTP {resp.status_code}")
        data = resp.json("the /v1/models answer")["data"]
        return str(data[0]["id"])[:512]
    except (httpx.HTTPError, HttpBudgetError, ValueError, KeyError, IndexError, TypeError,
            RecursionError) as exc:
        raise BenchError(f"could not read the model name from {client.base_url.join('/v1/models')} "
                         f"({type(exc).__name__}: {exc}); pass --model NAME") from None


async def run_bench(url: str, *, concurrency: int = 4, requests: int = 16, max_tokens: int = 128,
                    model: str | None = None, timeout: float = 120.0, endpoint: str = "chat",
                    mark: bool = True, log_path: str | None = None) -> BenchResult:
    """Run the load; returns when every request is done or ``timeout`` s have passed.

    In-flight requests at the deadline are cancelled and not counted. Cancelling the task that
    runs this (the demo does) closes every connection. ``mark``: send the window's markers and
    tag the load requests (:mod:`eagle_tui.model.bench.windows`), read ``/metrics`` at both ends;
    ``log_path``: a local server log to read the window's log figures from.
    """
    import httpx

    from eagle_tui.commands import bench_window as bw

    base_url = normalize_url(url)
    path = {"chat": "/v1/chat/completions", "completions": "/v1/completions",
            "generate": "/generate"}[endpoint]
    bench_id = bw.new_bench_id() if mark else ""
    limits = httpx.Limits(max_connections=concurrency + 1,
                          max_keepalive_connections=concurrency + 1)
    results: list[RequestResult] = []
    # trust_env=False: talk to exactly the URL given (an HTTP(S)_PROXY from the environment
    # would otherwise capture 127.0.0.1 and SSH-forwarded ports)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, trust_env=False) as client:
        name = model or (await detect_model(client, min(10.0, timeout)) if endpoint != "generate"
                         else "default")
        result = BenchResult(base_url, name, path, concurrency, max_tokens, requests)
        result.bench_id = bench_id
        before = await bw.counters(client) if mark else None
        log_file = Path(log_path) if mark and log_path else None
        offset = log_file.stat().st_size if log_file is not None and log_file.exists() else 0
        where = await bw.marker_path(client) if mark else ""
        t_start = (await bw.send_marker(client, bench_id, "start", where) if mark
                   else time.time())
        start = time.perf_counter()
        deadline = start + timeout
        counter = iter(range(requests))

        async def worker() -> None:
            for index in counter:
                left = deadline - time.perf_counter()
                if left <= 0:
                    return
                r = await one_request(client, path,
                                      _payload(endpoint, name, max_tokens, index), left)
                results.append(r)

        tasks = [asyncio.create_task(worker()) for _ in range(max(1, concurrency))]
        try:
            left = max(0.0, deadline - time.perf_counter())
            _done, pending = await asyncio.wait(tasks, timeout=left)
            result.timed_out = bool(pending) or len(results) < requests
        finally:  # the deadline passed or we are being cancelled: stop every worker first
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        summarize(result, results, time.perf_counter() - start)
        if mark:
            t_end = await bw.send_marker(client, bench_id, "end", where, tokens=result.tokens,
                                         events=result.events, requests=result.ok,
                                         verify=result.verify)
            after = await bw.counters(client)
            log = (await bw.wait_for_log_window(log_file, bench_id, offset)
                   if log_file is not None and log_file.exists() else None)
            result.window = bw.window_dict(result, t_start, t_end, before, after, log)
    return result


# --------------------------------------------------------------------------- command line


def _ms(v: float | None) -> str:
    return "n/a" if v is None else f"{v * 1000:.1f} ms"


def format_summary(r: BenchResult) -> list[str]:
    lines = [f"bench: {r.ok}/{r.requests_planned} requests ok, {r.failed} failed in "
             f"{r.wall_s:.1f} s ({r.endpoint}, concurrency {r.concurrency}, max_tokens "
             f"{r.max_tokens}, model {r.model})"]
    if r.timed_out:
        lines.append("  stopped by --timeout before every request finished")
    lines += [
        f"  throughput     : {r.tok_s:.1f} tok/s (client side, {r.tokens} tokens)",
        "  per request    : " + ("n/a" if r.per_request_tok_s_p50 is None else
                                 f"{r.per_request_tok_s_p50:.1f} tok/s decode (median)"),
        f"  TTFT           : p50 {_ms(r.ttft_p50_s)}, p90 {_ms(r.ttft_p90_s)}",
        f"  ITL (per token): p50 {_ms(r.itl_p50_s)}, p90 {_ms(r.itl_p90_s)}",
        "  tokens/event   : " + ("n/a" if r.tokens_per_event is None else
                                 f"{r.tokens_per_event:.2f} (tokens per SSE event; >1 = "
                                 "speculative bursts)"),
    ]
    if r.tokens_estimated:
        lines.append("  note: the server sent no usage; tokens counted as one per event")
    lines += [f"  error: {e}" for e in r.errors]
    if r.window is not None:
        from eagle_tui.commands.bench_window import format_window

        lines += format_window(r.window)
    return lines


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "bench", help="bounded streaming load: client tok/s, TTFT, ITL, tokens per SSE event",
        description="Send a bounded streaming load to an OpenAI-compatible server and report "
        "client tok/s, time to first token, inter-token latency and tokens per SSE event "
        "(speculative bursts). Exit 0 if every request succeeded, 1 otherwise.")
    p.add_argument("--url", required=True, help="server base URL, e.g. http://127.0.0.1:30000")
    p.add_argument("--concurrency", type=argtypes.whole(1, 256), default=4)
    p.add_argument("--requests", type=argtypes.whole(1, 100_000), default=16)
    p.add_argument("--max-tokens", type=argtypes.whole(1, 32_768), default=128)
    p.add_argument("--model", help="model name (default: the first of /v1/models)")
    p.add_argument("--endpoint", choices=("chat", "completions", "generate"), default="chat",
                   help="chat, completions, or generate (SGLang's native API: its meta_info "
                   "counts the verify steps, an exact client-side acceptance length)")
    p.add_argument("--timeout", type=argtypes.seconds, default=120.0,
                   help="stop after this many seconds in all (default 120)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--log", metavar="PATH", type=argtypes.local_file_text,
                   help="the server's log (a local file): print the log's figures over the "
                   "window beside /metrics' and the client's")
    p.add_argument("--run", metavar="REF",
                   help="keep the window in this run of the history (default: the newest run "
                   "on --url that has not ended, if any)")
    p.add_argument("--no-mark", action="store_true",
                   help="send no window markers and read no /metrics (a plain load)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.timeout > 0:
        fail("bench", "--timeout must be > 0")
        return 2
    try:
        result = asyncio.run(run_bench(
            args.url, concurrency=args.concurrency, requests=args.requests,
            max_tokens=args.max_tokens, model=args.model, timeout=args.timeout,
            endpoint=args.endpoint, mark=not args.no_mark, log_path=args.log))
    except UsageError as exc:
        fail("bench", exc)
        return 2
    except BenchError as exc:
        warn(inert_lines(f"eagle-tui bench: {exc}"))
        return 1
    if result.window is not None:
        from eagle_tui.commands.bench_window import save_window

        try:
            kept = save_window(result.window, result.url, args.run)
        except EagleError as exc:  # the history is a convenience: the result is still printed
            warn(inert_lines(f"eagle-tui bench: window not kept in the history: {exc}"))
        else:
            if kept is not None and not args.json:
                say(inert_lines(f"window kept in run {kept} "
                                f"(eagle-tui runs show {kept.split()[0][1:]})"))
    if args.json:
        say(inert_json(result.as_dict()))
    else:
        say(inert_lines("\n".join(format_summary(result))))
    return 0 if result.failed == 0 and result.ok == result.requests_planned else 1
