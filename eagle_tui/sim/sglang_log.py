"""SGLang in its own words (0.5.x, 2026): the launch timeline and the lines the running server
prints, as the real 0.5.23 server prints them (tests/fixtures/sglang-cpu: the ``server_args``
dict line, ``Init parallel``, the ``Engine startup timings`` summary, the decode and prefill
lines; a GPU prints ``cuda graph:`` where the CPU recording says ``cpu graph:``).

Prefixes follow ``configure_logger``: ``[YYYY-mm-dd HH:MM:SS TPn] `` for scheduler ranks (no tag
at TP=1), no tag for the main process, nothing at all for tqdm bars, traceback continuations and
``print()`` output such as the ``[EAGLE3-DEBUG]`` line. Every rank logs its own copy of the
model-runner lines, so a TP=8 launch has eight ``Load weight end`` lines, as the real one does.
"""

from __future__ import annotations

from typing import Any

from .scenario import DIST_MEM_GIB, GPU_TOTAL_GIB, ServerConfig
from .sglang_prefill import piecewise_graphs, prefill_graphs
from .steps import Builder, Timeline
from .textfmt import block_bar, nccl_watchdog, sglang_time, torch_oom

MAX_RUNNING = 48
CUDA_GRAPH_BS = (1, 2, 4, 8, 12, 16, 24, 32, 40, 48)
PKG = "/usr/local/lib/python3.12/dist-packages/sglang/srt"
STATUS_TEXT = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
               503: "Service Unavailable"}


def prefix(epoch: float, rank: int | None, tp: int) -> str:
    tag = f" TP{rank}" if rank is not None and tp > 1 else ""
    return f"[{sglang_time(epoch)}{tag}] "


def server_args_fields(cfg: ServerConfig) -> dict[str, Any]:
    """The launch's ``ServerArgs`` (a realistic subset): logged at startup, in /server_info."""
    m = cfg.model
    return {
        "model_path": m.path, "tokenizer_path": m.path, "tokenizer_mode": "auto",
        "skip_tokenizer_init": False, "load_format": "auto", "trust_remote_code": True,
        "dtype": "auto", "kv_cache_dtype": "auto", "quantization": None,
        "context_length": m.context_len, "device": "cuda", "served_model_name": cfg.served_name,
        "is_embedding": False, "host": cfg.host, "port": cfg.port, "skip_server_warmup": False,
        "mem_fraction_static": cfg.scenario.mem_fraction, "max_running_requests": MAX_RUNNING,
        "chunked_prefill_size": 16384, "max_prefill_tokens": 16384, "schedule_policy": "fcfs",
        "tp_size": cfg.tp, "pp_size": 1, "dp_size": 1, "ep_size": 1, "random_seed": cfg.seed,
        "watchdog_timeout": 300, "dist_timeout": cfg.dist_timeout_s, "log_level": "info",
        "log_requests": False, "enable_metrics": True,
        "decode_log_interval": cfg.decode_log_interval,
        "speculative_algorithm": cfg.algorithm, "speculative_draft_model_path": cfg.draft_path,
        "speculative_draft_model_revision": "main", "speculative_num_steps": cfg.num_steps,
        "speculative_eagle_topk": 1, "speculative_num_draft_tokens": cfg.num_draft_tokens,
        "speculative_accept_threshold_single": 1.0, "speculative_accept_threshold_acc": 1.0,
        "speculative_token_map": None, "attention_backend": "fa3", "disable_cuda_graph": False,
        "cuda_graph_max_bs_decode": MAX_RUNNING, "enable_torch_compile": False,
        **_spec_modes(cfg),
    }


def _spec_modes(cfg: ServerConfig) -> dict[str, Any]:
    """The settings of the SGLang-only scenarios (0.5.23's field names), where they apply."""
    s = cfg.scenario
    out: dict[str, Any] = {}
    if s.adaptive_steps:
        out["speculative_adaptive"] = True
    if s.block is not None:
        out["speculative_dspark_block_size"] = s.block
    if s.dp_ranks > 1:
        out.update(dp_size=s.dp_ranks, enable_dp_attention=True)
    return out


def server_args(cfg: ServerConfig) -> str:
    """``logger.info(f"server_args={...}")``: 0.5.x logs the resolved args as a dict repr on one
    very long line (as in tests/fixtures/sglang-cpu), no longer the
    ``ServerArgs(...)`` dataclass repr of older releases."""
    return f"server_args={server_args_fields(cfg)!r}"


# 0.5.23 entrypoints/engine.py Engine._set_startup_time, verbatim
TIMINGS_FORMAT = ("Engine startup timings (s): load_weight=%.2f, "
                  "kv_cache_allocation=%.2f, scheduler_e2e=%.2f, "
                  "cuda_graph={%s}, tokenizer_e2e=%.2f")
GRAPH_FAMILIES = ("prefill", "decode", "target_verify", "draft_prefill", "draft_decode",
                  "draft_extend")  # 0.5.23 graph_memory_usage.py: every one, 0.0 if not captured


def startup_time(load_weight: float, kv_cache: float, scheduler_e2e: float,
                 graphs: dict[str, float], tokenizer_e2e: float) -> dict[str, Any]:
    """The engine's ``startup_time`` dict (0.5.23 ``observability/startup_time.py``): what its
    log line prints, its ``/metrics`` gauges and its ``/server_info`` hold."""
    return {"load_weight": load_weight, "kv_cache_allocation": kv_cache,
            "scheduler_e2e": scheduler_e2e,
            "cuda_graph": {p: graphs.get(p, 0.0) for p in GRAPH_FAMILIES},
            "tokenizer_e2e": tokenizer_e2e}


def startup_timings(load_weight: float, kv_cache: float, scheduler_e2e: float,
                    graphs: dict[str, float], tokenizer_e2e: float) -> str:
    """The one-line startup summary 0.5.x prints once the schedulers are up (``engine.py``)."""
    return startup_line(startup_time(load_weight, kv_cache, scheduler_e2e, graphs,
                                     tokenizer_e2e))


def startup_line(startup: dict[str, Any]) -> str:
    """0.5.23 ``Engine._set_startup_time``'s line for a ``startup_time`` dict."""
    cuda_graph_timings = ", ".join(f"{phase}={duration:.2f}"
                                   for phase, duration in startup["cuda_graph"].items())
    return TIMINGS_FORMAT % (startup["load_weight"], startup["kv_cache_allocation"],
                             startup["scheduler_e2e"], cuda_graph_timings,
                             startup["tokenizer_e2e"])


def _rank_lines(b: Builder, text: str, step: float = 0.02) -> list[str]:
    """One copy of ``text`` per TP rank, a few milliseconds apart."""
    out = []
    for r in range(b.config.tp):
        out.append(prefix(b.epoch + r * step * b.rng.random(), r, b.config.tp) + text)
    return out


def _main(b: Builder, text: str) -> str:
    return prefix(b.epoch, None, 1) + text


def _graphs(b: Builder, role: str, what: str, per_req: int, seconds: float, gib: float,
            fail_at: int | None = None) -> float:
    """``Capture <role> <what> CUDA graph begin/end`` around a ``Capturing batches`` bar."""
    bs = ", ".join(map(str, CUDA_GRAPH_BS))
    b.emit(*_rank_lines(b, f"Capture {role} {what} CUDA graph begin. backend=full, "
                           f"num_tokens_per_req={per_req}, bs=[{bs}], avail mem={b.avail:.2f} GB"),
           label="capture", mem=True)
    sizes = sorted(CUDA_GRAPH_BS, reverse=True)
    elapsed = 0.0
    for i, size in enumerate(sizes):
        desc = f"Capturing batches (bs={size} avail_mem={b.avail:.2f} GB)"
        b.emit(block_bar(desc, i, len(sizes), elapsed))
        if fail_at is not None and i == fail_at:
            return elapsed
        dt = seconds / len(sizes) * (1.0 + b.rng.uniform(-0.2, 0.2))
        b.advance(dt)
        elapsed += dt
        b.use(gib / len(sizes))
        b.emit(mem=True)
    b.emit(block_bar(f"Capturing batches (bs=1 avail_mem={b.avail:.2f} GB)", len(sizes),
                     len(sizes), elapsed))
    b.emit(*_rank_lines(b, f"Capture {role} {what} CUDA graph end. elapsed={elapsed:.2f} s, "
                           f"mem usage={gib:.2f} GB, avail mem={b.avail:.2f} GB."))
    return elapsed


def _oom(b: Builder) -> None:
    cfg = b.config
    rank = b.rng.randrange(cfg.tp)
    free = 0.87
    b.avail = free + 1.2  # the others are close behind
    b.advance(0.8)
    b.emit(label="capture", mem=True)
    text = torch_oom(rank, 2.00, GPU_TOTAL_GIB, free, b.rng.uniform(200, 600))
    runner = f"{PKG}/model_executor/cuda_graph_runner.py"
    b.emit(
        prefix(b.epoch, rank, cfg.tp) + "Scheduler hit an exception: Traceback (most recent call "
        "last):",
        f'  File "{runner}", line 381, in __init__', "    self.capture()",
        f'  File "{runner}", line 497, in capture',
        "    ) = self.capture_one_batch_size(bs, forward)",
        '  File "/usr/local/lib/python3.12/dist-packages/torch/nn/functional.py", line 2516, in '
        "linear", "    return torch._C._nn.linear(input, weight, bias)",
        f"torch.OutOfMemoryError: {text}", "",
        "During handling of the above exception, another exception occurred:", "",
        "Traceback (most recent call last):",
        f'  File "{PKG}/managers/scheduler.py", line 2764, in run_scheduler_process',
        "    scheduler = Scheduler(",
        f'  File "{PKG}/model_executor/model_runner.py", line 1741, in init_cuda_graphs',
        "    self.cuda_graph_runner = CudaGraphRunner(self)",
        f'  File "{runner}", line 383, in __init__', "    raise Exception(",
        f"Exception: Capture cuda graph failed: {text}", "Possible solutions:",
        "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
        "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)",
        "3. disable torch compile by not using --enable-torch-compile",
        "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)",
        "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose ", "",
    )
    b.advance(0.3)
    b.emit(_main(b, "Received sigquit from a child process. It usually means the child failed."),
           exit_code=137, kill=True)


def _nccl_hang(b: Builder) -> None:
    cfg = b.config
    b.emit(label="nccl_hang")
    b.advance(float(cfg.dist_timeout_s))
    b.emit(*nccl_watchdog(0, b.epoch, cfg.dist_timeout_s * 1000))
    b.advance(1.2)
    b.emit(
        "Traceback (most recent call last):",
        '  File "<frozen runpy>", line 198, in _run_module_as_main',
        '  File "<frozen runpy>", line 88, in _run_code',
        '  File "/usr/local/lib/python3.12/dist-packages/sglang/launch_server.py", line 32, in '
        "<module>", "    run_server(server_args)",
        f'  File "{PKG}/entrypoints/engine.py", line 1012, in _launch_subprocesses',
        "    raise _scheduler_died_error(rank, proc.exitcode)",
        "RuntimeError: Rank 0 scheduler died during initialization (exit code: -6). If exit code "
        "is -9 (SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to "
        "check.",
        exit_code=1,
    )


def timeline(cfg: ServerConfig) -> Timeline:
    b = Builder(cfg)
    m, spec = cfg.model, cfg.scenario
    b.emit("Max running requests is reset to 48 for speculative decoding. You can override this "
           "by explicitly setting --max-running-requests.", label="idle", mem=True)
    b.advance(0.4)
    b.emit(_main(b, server_args(cfg)))
    t_launch = b.t
    b.advance(6.0, 0.15)
    b.emit(*_rank_lines(b, "Init parallel begin."), label="init")
    t_init = b.t
    if spec.crash == "nccl":
        _nccl_hang(b)
        return b.build()
    b.advance(1.9, 0.2)
    b.use(DIST_MEM_GIB)
    b.emit(*_rank_lines(b, f"Init parallel ends. elapsed={b.t - t_init:.2f} s"), mem=True)
    b.emit(*_rank_lines(b, f"Memory baseline taken. mem usage={DIST_MEM_GIB:.2f} GB"))
    b.advance(0.5)
    b.emit(*_rank_lines(b, f"Load weight begin. avail mem={b.avail:.2f} GB"), label="load_weights")
    took = b.shards(m.shards, m.load_s * spec.weight_factor, cfg.weights_gib, "load_weights")
    b.advance(0.6)
    load_weight = took + 0.6
    b.emit(*_rank_lines(b, f"Load weight end. elapsed={load_weight:.2f} s, type={m.architecture}, "
                           f"avail mem={b.avail:.2f} GB, mem usage={cfg.weights_gib:.2f} GB."))
    b.advance(0.4)
    t_kv = b.t
    b.use(cfg.kv_gib)
    kv = (f"KV size: {cfg.kv_gib:.2f} GB" if m.mla else
          f"K size: {cfg.kv_gib / 2:.2f} GB, V size: {cfg.kv_gib / 2:.2f} GB")
    b.emit(*_rank_lines(b, "Using KV cache dtype: torch.bfloat16"),
           *_rank_lines(b, f"KV Cache is allocated. dtype: torch.bfloat16, #tokens: "
                           f"{cfg.kv_tokens}, {kv}"),
           *_rank_lines(b, f"Memory pool end. avail mem={b.avail:.2f} GB"), label="kv_cache",
           mem=True)
    b.advance(0.5)
    kv_cache = b.t - t_kv
    if spec.crash == "oom":
        _graphs(b, "target", "verify", b.config.num_draft_tokens, 18.0, 1.42, fail_at=0)
        _oom(b)
        return b.build()
    window = b.config.num_draft_tokens
    graphs: dict[str, float] = {}
    if cfg.version == "0.5.23":  # (its prefill graphs come first, the target's, then the draft's)
        graphs["prefill"] = prefill_graphs(b, _rank_lines, "target", 24.0, 0.95)
    graphs["target_verify"] = _graphs(b, "target", "verify", window, 18.0, 1.42)
    if cfg.version == "pre-0.5.23":
        b.advance(0.3)
        graphs["prefill"] = piecewise_graphs(b, _rank_lines, 30.0, 0.95)
    b.advance(0.6)
    draft_gib = 1.88
    b.emit(*_rank_lines(b, f"Load weight begin. avail mem={b.avail:.2f} GB"), label="load_weights")
    took = b.shards(1, 1.1, draft_gib, "load_weights")
    load_weight += took
    b.emit(*_rank_lines(b, f"Load weight end. elapsed={took:.2f} s, type=LlamaForCausalLMEagle3, "
                           f"avail mem={b.avail:.2f} GB, mem usage={draft_gib:.2f} GB."))
    draft_kv = cfg.kv_tokens * 8 * 128 * 2 / 2**30
    b.use(2 * draft_kv)
    b.emit(*_rank_lines(b, f"KV Cache is allocated. dtype: torch.bfloat16, #tokens: "
                           f"{cfg.kv_tokens}, K size: {draft_kv:.2f} GB, V size: "
                           f"{draft_kv:.2f} GB"),
           *_rank_lines(b, f"Memory pool end. avail mem={b.avail:.2f} GB"), label="kv_cache",
           mem=True)
    b.advance(0.4)
    if cfg.version == "0.5.23":
        graphs["draft_prefill"] = prefill_graphs(b, _rank_lines, "draft", 6.0, 0.12)
    graphs["draft_decode"] = _graphs(b, "draft", "decode", 1, 9.0, 0.28)
    graphs["draft_extend"] = _graphs(b, "draft", "extend", b.config.num_draft_tokens, 5.5, 0.17)
    b.advance(0.5)
    b.emit(prefix(b.epoch, 0, cfg.tp) + f"max_total_num_tokens={cfg.kv_tokens}, "
           f"chunked_prefill_size=16384, max_prefill_tokens=16384, max_running_requests="
           f"{MAX_RUNNING}, context_len={m.context_len}, available_gpu_mem={b.avail:.2f} GB",
           label="loaded")
    b.advance(0.2)
    startup = startup_time(load_weight, kv_cache, b.t - t_init, graphs, b.t - t_launch)
    b.emit(_main(b, startup_line(startup)), startup=startup)
    b.advance(0.7)
    b.emit(*(_main(b, t) for t in (
        f"INFO:     Started server process [{cfg.main_pid}]",
        "INFO:     Waiting for application startup.", "INFO:     Application startup complete.")))
    if spec.crash == "port":
        b.advance(0.05)
        b.emit(*(_main(b, t) for t in (
            f"ERROR:    [Errno 98] error while attempting to bind on address ('{cfg.host}', "
            f"{cfg.port}): address already in use",
            "INFO:     Waiting for application shutdown.",
            "INFO:     Application shutdown complete.")), exit_code=3)
        return b.build()
    b.emit(_main(b, f"INFO:     Uvicorn running on http://{cfg.host}:{cfg.port} (Press CTRL+C "
                    "to quit)"), http="serve")
    b.advance(1.0)
    b.emit(access_line(b.epoch, 47886, "GET", "/model_info", 200))
    b.advance(0.2)
    b.emit(prefill_line(cfg, b.epoch, 1, 7, 0, 0.0, 0, 0, 0.0),
           debug_line(7, cfg.hidden_dim), label="warmup")
    b.advance(1.1)
    b.emit(access_line(b.epoch, 47890, "POST", "/generate", 200),
           _main(b, "The server is fired up and ready to roll!"), label="ready", ready=True,
           serve=True)
    return b.build()


# ------------------------------------------------------------------ lines of the running server


def access_line(epoch: float, client_port: int, method: str, path: str, status: int) -> str:
    phrase = STATUS_TEXT.get(status, "")
    return (f"[{sglang_time(epoch)}] INFO:     127.0.0.1:{client_port} - \"{method} {path} "
            f"HTTP/1.1\" {status} {phrase}")


def debug_line(tokens: int, dim: int) -> str:
    """A user's debug ``print`` in the EAGLE-3 hook (not upstream: a user's own instrumentation)."""
    return f"[EAGLE3-DEBUG] hidden_states shape=torch.Size([{tokens}, {dim}])"


def prefill_line(cfg: ServerConfig, epoch: float, new_seq: int, new_tokens: int, cached: int,
                 usage: float, running: int, queued: int, input_tps: float) -> str:
    return (f"{prefix(epoch, 0, cfg.tp)}Prefill batch, #new-seq: {new_seq}, #new-token: "
            f"{new_tokens}, #cached-token: {cached}, token usage: {usage:.2f}, #running-req: "
            f"{running}, #queue-req: {queued}, #pending-token: 0, cuda graph: True, "
            f"input throughput (token/s): {input_tps:.2f}")


def decode_line(cfg: ServerConfig, epoch: float, running: int, tokens: int, usage: float,
                accept_len: float, gen_tps: float, queued: int, draft_tokens: int = 0,
                cap_len: float = 0.0, block_accept_len: float = 0.0) -> str:
    """2026 ``Decode batch,`` line; ``accept rate`` is drafts-only: (len-1)/(draft tokens-1);
    a DSpark server adds ``cap len`` and ``block accept len`` after it where they are above 0
    (metrics_reporter.py, 0.5.23)."""
    rate = (accept_len - 1.0) / ((draft_tokens or cfg.num_draft_tokens) - 1)
    extra = (f"cap len: {cap_len:.2f}, " if cap_len > 0 else "") + (
        f"block accept len: {block_accept_len:.2f}, " if block_accept_len > 0 else "")
    return (f"{prefix(epoch, 0, cfg.tp)}Decode batch, #running-req: {running}, #token: {tokens}, "
            f"token usage: {usage:.2f}, accept len: {accept_len:.2f}, accept rate: {rate:.2f}, "
            f"{extra}cuda graph: True, gen throughput (token/s): {gen_tps:.2f}, "
            f"#queue-req: {queued}")


def adaptive_line(cfg: ServerConfig, epoch: float, old: int, new: int, ema: float) -> str:
    """``AdaptiveStepSlot._apply_target_steps``' line (adaptive_spec_params.py, 0.5.23), logged
    on rank 0."""
    return (f"{prefix(epoch, 0, cfg.tp)}Adaptive spec params updated: steps {old} -> {new} "
            f"(ema_accept_len={ema:.2f})")


def shutdown_lines(cfg: ServerConfig, epoch: float) -> list[str]:
    p = f"[{sglang_time(epoch)}] "
    return [p + "INFO:     Shutting down", p + "INFO:     Waiting for application shutdown.",
            p + "INFO:     Application shutdown complete.",
            p + f"INFO:     Finished server process [{cfg.main_pid}]"]
