"""vLLM 0.32 (V1 engine) in its own words, like ``tests/fixtures/vllm-cpu/server-eagle3.log`` but
on simulated GPUs: the launch timeline and the lines the running server prints.

Every line of a vLLM process starts ``(<proc> pid=<n>) LEVEL mm-dd HH:MM:SS [file.py:line] ``:
``APIServer`` (the main process), ``EngineCore`` and one ``Worker_TP<r>`` per rank (``Worker`` at
TP=1). tqdm bars, uvicorn's own lines and C++ (NCCL) output carry no prefix. vLLM binds its HTTP
socket *before* building the engine, so the port accepts connections early but answers nothing
until ``Application startup complete.``: the simulator reproduces that (``http="bind"``).
"""

from __future__ import annotations

from .scenario import DIST_MEM_GIB, GPU_TOTAL_GIB, NUM_SPEC_STEPS, ServerConfig
from .steps import Builder, Timeline
from .textfmt import block_bar, nccl_timeout_text, nccl_watchdog, torch_oom, vllm_time

VERSION = "0.32.0"
PKG = "/usr/local/lib/python3.12/dist-packages/vllm"
ROUTES = ("/openapi.json", "/docs", "/health", "/load", "/ping", "/tokenize", "/detokenize",
          "/version", "/metrics", "/v1/models", "/v1/chat/completions", "/v1/completions")
STATUS_TEXT = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
               503: "Service Unavailable"}


def proc_name(cfg: ServerConfig, index: int) -> tuple[str, int]:
    """(name, pid) of process ``index``: -1 APIServer, 0 EngineCore, 1+r worker of rank r."""
    if index < 0:
        return "APIServer", cfg.main_pid
    if index == 0:
        return "EngineCore", cfg.pid(0)
    name = f"Worker_TP{index - 1}" if cfg.tp > 1 else "Worker"
    return name, cfg.pid(index)


def line(cfg: ServerConfig, index: int, epoch: float, src: str, msg: str,
         level: str = "INFO") -> str:
    name, pid = proc_name(cfg, index)
    return f"({name} pid={pid}) {level} {vllm_time(epoch)} [{src}] {msg}"


def _api(b: Builder, src: str, msg: str, level: str = "INFO") -> str:
    return line(b.config, -1, b.epoch, src, msg, level)


def _core(b: Builder, src: str, msg: str, level: str = "INFO") -> str:
    return line(b.config, 0, b.epoch, src, msg, level)


def _ranks(b: Builder, src: str, msg: str) -> list[str]:
    return [line(b.config, 1 + r, b.epoch + 0.01 * r, src, msg) for r in range(b.config.tp)]


def _traceback(b: Builder, index: int, src: str, frames: list[str], error: str) -> list[str]:
    body = ["Traceback (most recent call last):", *frames, error]
    return [line(b.config, index, b.epoch, src, text, "ERROR") for text in body]


def _api_raise(b: Builder, frames: list[str], error: str) -> list[str]:
    """An uncaught exception in the API server: Python's traceback, prefixed by decorate_logs."""
    cfg = b.config
    body = ["Traceback (most recent call last):",
            '  File "/usr/local/bin/vllm", line 10, in <module>', "    sys.exit(main())",
            f'  File "{PKG}/entrypoints/cli/main.py", line 75, in main',
            "    args.dispatch_function(args)",
            *frames, error]
    return [f"(APIServer pid={cfg.main_pid}) {text}" for text in body]


def _engine_failed(b: Builder, cause: str) -> None:
    frames = [f'  File "{PKG}/v1/engine/core.py", line 1012, in run_engine_core',
              "    engine_core = EngineCoreProc(*args, engine_index=dp_rank, **kwargs)",
              f'  File "{PKG}/v1/executor/multiproc_executor.py", line 412, in collective_rpc',
              "    raise RuntimeError("]
    b.emit(_core(b, "core.py:1021", "EngineCore failed to start.", "ERROR"),
           *_traceback(b, 0, "core.py:1021", frames,
                       f"RuntimeError: Worker failed with error '{cause}', please check the stack "
                       "trace above for the root cause"))
    b.advance(0.4)
    b.emit(*_api_raise(b, [
        f'  File "{PKG}/v1/engine/utils.py", line 1093, in wait_for_engine_startup',
        "    raise RuntimeError("],
        "RuntimeError: Engine core initialization failed. See root cause above. Failed core "
        "proc(s): {'EngineCore': 1}"), exit_code=1)


def _banner(b: Builder) -> None:
    cfg, m = b.config, b.config.model
    src = "api_utils.py:347"
    art = ["", "       █     █     █▄   ▄█",
           f" ▄▄ ▄█ █     █     █ ▀▄▀ █  version {VERSION}",
           f"  █▄█▀ █     █     █     █  model   {m.path}", "   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀", ""]
    spec = (f"{{'method': '{cfg.algorithm}', 'model': '{cfg.draft_path}', "
            f"'num_speculative_tokens': {NUM_SPEC_STEPS}}}")
    args = (f"{{'model_tag': '{m.path}', 'host': '{cfg.host}', 'port': {cfg.port}, 'model': "
            f"'{m.path}', 'trust_remote_code': True, 'tensor_parallel_size': {cfg.tp}, "
            f"'speculative_config': {spec}}}")
    b.emit(*(_api(b, src, a) for a in art),
           _api(b, "api_utils.py:286", f"non-default args: {args}"),
           _api(b, "model.py:733", f"Resolved architecture: {m.architecture}"),
           _api(b, "model.py:2152", f"Using max model len {m.context_len}"),
           _api(b, "model.py:733", "Resolved architecture: LlamaForCausalLMEagle3"),
           _api(b, "vllm.py:2276", "max_num_scheduled_tokens is set to 8192 based on the "
                "speculative decoding settings. This may lead to suboptimal performance.",
                "WARNING"), label="idle", mem=True)


AVAILABLE_RAM_GIB = 1007.52
PREFETCH_STARTED = ("Prefetching checkpoint files into page cache started (in background, "
                    "num_threads=8, block_size=16777216 bytes)")  # 0.32's defaults (config/load)


def _prefetch(b: Builder, gib: float, files: int, seconds: float) -> None:
    """0.32 ``safetensors_weights_iterator``: the checkpoint's size, and on a network filesystem
    (the sim's checkpoints are on NFS) its background prefetch into the page cache, each rank
    its own files (``files[rank::world_size]``) and a line per file while the next multiple of
    10 % is due (``_prefetch_all_checkpoints``: 4 files print 10, 20, 30, 40 %)."""
    cfg = b.config
    b.emit(*_ranks(b, "weight_utils.py:1108", f"Filesystem type for checkpoints: NFS. Checkpoint "
                   f"size: {gib:.2f} GiB. Available RAM: {AVAILABLE_RAM_GIB:.2f} GiB."),
           *_ranks(b, "weight_utils.py:1070", PREFETCH_STARTED))
    mine = [len(range(r, files, cfg.tp)) for r in range(cfg.tp)]
    due = [10] * cfg.tp
    for done in range(1, max(mine) + 1):
        b.advance(seconds / max(mine))
        lines = []
        for r, total in enumerate(mine):
            if done <= total and 100 * done / total >= due[r] and due[r] <= 100:
                lines.append(line(cfg, 1 + r, b.epoch, "weight_utils.py:1042",
                                  f"Prefetching checkpoint files: {due[r]}% ({done}/{total})"))
                due[r] += 10
        b.emit(*lines)
    b.emit(*_ranks(b, "weight_utils.py:1065", "Prefetching checkpoint files into page cache "
                   f"finished in {seconds:.2f}s"))


def _load(b: Builder) -> None:
    cfg, m = b.config, b.config.model
    b.emit(*_ranks(b, "gpu_model_runner.py:4127", f"Starting to load model {m.path}..."),
           label="load_weights")
    _prefetch(b, m.weights_gib, m.shards, 0.3 * m.load_s * cfg.scenario.weight_factor)
    took = b.shards(m.shards, m.load_s * cfg.scenario.weight_factor, cfg.weights_gib,
                    "load_weights")
    b.emit(*_ranks(b, "default_loader.py:501", f"Loading weights took {took:.2f} seconds"),
           *_ranks(b, "gpu_model_runner.py:4150", "Loading drafter model..."))
    _prefetch(b, 1.88, 1, 0.1)
    draft = b.shards(1, 0.4, 1.88, "load_weights")
    lines = [*_ranks(b, "default_loader.py:501", f"Loading weights took {draft:.2f} seconds"),
             *_ranks(b, "llm_base_proposer.py:1440", "Detected EAGLE model without its own "
                     "embed_tokens in the checkpoint. Sharing target model embedding weights "
                     "with the draft model."),
             *_ranks(b, "llm_base_proposer.py:1541", "Detected EAGLE model with distinct lm_head "
                     "weights. Keeping separate lm_head weights from the target model.")]
    if cfg.scenario.eagle3_algorithm:
        lines += _ranks(b, "gpu_model_runner.py:5243", "Using auxiliary layers from speculative "
                        f"config: {tuple(m.aux_layer_ids)}")
    b.advance(0.3)
    lines += _ranks(b, "gpu_model_runner.py:4201", f"Model loading took "
                    f"{cfg.weights_gib + 1.88:.2f} GiB memory and {took + draft + 0.9:.6f} seconds")
    b.emit(*lines, label="loaded")


def _compile_and_kv(b: Builder) -> None:
    cfg = b.config
    b.advance(1.2)
    b.emit(*(line(cfg, 1 + r, b.epoch, "backends.py:609", "Using cache directory: /root/.cache/"
                  f"vllm/torch_compile_cache/5c1f0a2e3b/rank_{r}_0/backbone for vLLM's "
                  "torch.compile") for r in range(cfg.tp)), label="compile")
    b.advance(9.1, 0.1)
    b.emit(*_ranks(b, "backends.py:620", "Dynamo bytecode transform time: 9.12 s"))
    b.advance(25.0, 0.1)
    b.emit(*_ranks(b, "monitor.py:34", "torch.compile takes 34.90 s in total"))
    b.advance(3.0)
    b.use(cfg.kv_gib)
    conc = cfg.kv_tokens / cfg.model.context_len
    b.emit(*_ranks(b, "gpu_worker.py:298", f"Available KV cache memory: {cfg.kv_gib:.2f} GiB"),
           _core(b, "kv_cache_utils.py:2327", f"GPU KV cache size: {cfg.kv_tokens:,} tokens, "
                 f"Maximum concurrency for {cfg.model.context_len:,} tokens per request: "
                 f"{conc:.2f}x"), label="kv_cache", mem=True)


def _graphs(b: Builder, oom: bool) -> None:
    total, elapsed = 51, 0.0
    desc = "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)"
    b.emit(block_bar(desc, 0, total, 0.0), label="capture")
    for n in range(1, total + 1):
        dt = 0.3 * (1.0 + b.rng.uniform(-0.2, 0.2))
        b.advance(dt)
        elapsed += dt
        b.use(1.0 / total)
        if oom and n == 34:
            _oom(b)
            return
        if n % 3 == 0 or n == total:
            b.emit(block_bar(desc, n, total, elapsed), mem=True)
    b.emit(block_bar("Capturing CUDA graphs (decode, FULL)", 35, 35, 4.1))
    b.advance(4.1)
    b.use(0.38)
    b.emit(*_ranks(b, "gpu_model_runner.py:5560", f"Graph capturing finished in "
                   f"{elapsed + 4.1:.0f} secs, took 1.38 GiB"), mem=True)


def _oom(b: Builder) -> None:
    cfg = b.config
    rank = b.rng.randrange(cfg.tp)
    b.avail = 0.91 + 1.1
    b.emit(mem=True)
    text = torch_oom(rank, 1.76, GPU_TOTAL_GIB, 0.91, b.rng.uniform(100, 500))
    frames = [f'  File "{PKG}/v1/executor/multiproc_executor.py", line 834, in worker_busy_loop',
              "    output = func(*args, **kwargs)",
              f'  File "{PKG}/v1/worker/gpu_worker.py", line 512, in compile_or_warm_up_model',
              "    cuda_graph_memory_bytes = self.model_runner.capture_model()",
              f'  File "{PKG}/v1/worker/gpu_model_runner.py", line 5517, in capture_model',
              "    self._capture_cudagraphs(compilation_cases, cudagraph_runtime_mode)"]
    src = "multiproc_executor.py:839"
    b.advance(0.2)
    b.emit(line(cfg, 1 + rank, b.epoch, src, "WorkerProc hit an exception.", "ERROR"),
           *_traceback(b, 1 + rank, src, frames, f"torch.OutOfMemoryError: {text}"))
    b.advance(0.3)
    _engine_failed(b, text)


def timeline(cfg: ServerConfig) -> Timeline:
    b = Builder(cfg)
    _banner(b)
    b.advance(0.3)
    if cfg.scenario.crash == "port":
        b.emit(*_api_raise(b, [
            f'  File "{PKG}/entrypoints/openai/api_server.py", line 1387, in run_server',
            "    listen_address, sock = setup_server(args)",
            f'  File "{PKG}/entrypoints/openai/api_server.py", line 1349, in create_server_socket',
            "    sock.bind(addr)"], "OSError: [Errno 98] Address already in use"), exit_code=1)
        return b.build()
    b.emit(http="bind")
    b.advance(7.0, 0.1)
    t_core = b.t
    b.emit(_core(b, "core.py:133", f"Initializing a V1 LLM engine (v{VERSION}) with config: "
                 f"model='{cfg.model.path}', speculative_config=SpeculativeConfig(method="
                 f"'{cfg.algorithm}', model='{cfg.draft_path}', num_spec_tokens={NUM_SPEC_STEPS}), "
                 f"tokenizer='{cfg.model.path}', skip_tokenizer_init=False, tokenizer_mode=auto, "
                 f"trust_remote_code=True, dtype=torch.bfloat16, max_seq_len="
                 f"{cfg.model.context_len}, tensor_parallel_size={cfg.tp}, "
                 "pipeline_parallel_size=1, data_parallel_size=1, quantization=fp8, "
                 f"enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, seed={cfg.seed}, "
                 f"served_model_name={cfg.served_name}, enable_prefix_caching=True"),
           _core(b, "multiproc_executor.py:153", "DP group leader: node_rank=0, "
                 "node_rank_within_dp=0, master_addr=127.0.0.1, mq_connect_ip=127.0.0.1 (local), "
                 f"world_size={cfg.tp}, local_world_size={cfg.tp}"), label="init")
    b.advance(6.5, 0.1)
    b.emit(*(line(cfg, 1 + r, b.epoch, "parallel_state.py:1906", f"world_size={cfg.tp} rank={r} "
                  f"local_rank={r} distributed_init_method=tcp://127.0.0.1:45{cfg.seed % 90 + 10}1 "
                  "backend=nccl") for r in range(cfg.tp)))
    if cfg.scenario.crash == "nccl":
        b.emit(label="nccl_hang")
        b.advance(float(cfg.dist_timeout_s))
        b.emit(*nccl_watchdog(0, b.epoch, cfg.dist_timeout_s * 1000))
        b.advance(0.8)
        b.emit(_core(b, "multiproc_executor.py:667", "Worker proc VllmWorker-0 died "
                     "unexpectedly, shutting down executor.", "ERROR"))
        _engine_failed(b, nccl_timeout_text(0, cfg.dist_timeout_s * 1000))
        return b.build()
    b.advance(1.1)
    b.use(DIST_MEM_GIB)
    b.emit(line(cfg, 1, b.epoch, "pynccl.py:111", "vLLM is using nccl==2.27.7"),
           *(line(cfg, 1 + r, b.epoch, "parallel_state.py:2350", f"rank {r} in world size "
                  f"{cfg.tp} is assigned as DP rank 0, PP rank 0, PCP rank 0, TP rank {r}, "
                  "ETP rank 0, EP rank N/A, EPLB rank N/A") for r in range(cfg.tp)), mem=True)
    b.advance(0.6)
    _load(b)
    _compile_and_kv(b)
    b.advance(0.8)
    _graphs(b, cfg.scenario.crash == "oom")
    if cfg.scenario.crash == "oom":
        return b.build()
    b.advance(0.5)
    b.emit(_core(b, "core.py:402", f"init engine (profile, create kv cache, warmup model) took "
                 f"{b.t - t_core:.2f} s"))
    b.advance(0.4)
    b.emit(_api(b, "entry.py:136", "Supported tasks: ['generate']"),
           _api(b, "entry.py:140", f"Starting vLLM server on http://{cfg.host}:{cfg.port}"),
           _api(b, "launcher.py:186", "Available routes are:"),
           *(_api(b, "launcher.py:195", f"Route: {r}, Methods: "
                  f"{'POST' if r.startswith(('/v1/c', '/tok', '/detok')) else 'GET'}")
             for r in ROUTES),
           f"INFO:     Started server process [{cfg.main_pid}]",
           "INFO:     Waiting for application startup.")
    b.advance(0.2)
    b.emit("INFO:     Application startup complete.", label="ready", http="serve", ready=True,
           serve=True)
    return b.build()


# ------------------------------------------------------------------ lines of the running server


def access_line(client_port: int, method: str, path: str, status: int) -> str:
    return (f"INFO:     127.0.0.1:{client_port} - \"{method} {path} HTTP/1.1\" {status} "
            f"{STATUS_TEXT.get(status, '')}")


def debug_line(cfg: ServerConfig, tokens: int, dim: int) -> str:
    """A user's debug ``print`` in the worker (vLLM prefixes a worker's stdout with its name)."""
    name, pid = proc_name(cfg, 1)
    return f"({name} pid={pid}) [EAGLE3-DEBUG] hidden_states shape=torch.Size([{tokens}, {dim}])"


def stats_lines(cfg: ServerConfig, epoch: float, prompt_tps: float, gen_tps: float, running: int,
                waiting: int, kv_usage: float, accepted: int, drafted: int, drafts: int,
                per_pos: tuple[int, ...], interval: float) -> list[str]:
    """``Engine 000:`` and, when drafts were made, ``SpecDecoding metrics:`` (same interval)."""
    out = [line(cfg, -1, epoch, "loggers.py:335", f"Engine 000: Avg prompt throughput: "
                f"{prompt_tps:.1f} tokens/s, Avg generation throughput: {gen_tps:.1f} tokens/s, "
                f"Running: {running} reqs, Waiting: {waiting} reqs, GPU KV cache usage: "
                f"{100 * kv_usage:.1f}%, Prefix cache hit rate: 0.0%")]
    if drafts:
        pos = ", ".join(f"{n / drafts:.3f}" for n in per_pos)
        out.append(line(cfg, -1, epoch, "metrics.py:120", f"SpecDecoding metrics: Mean acceptance "
                        f"length: {1 + accepted / drafts:.2f}, Accepted throughput: "
                        f"{accepted / interval:.2f} tokens/s, Drafted throughput: "
                        f"{drafted / interval:.2f} tokens/s, Accepted: {accepted} tokens, "
                        f"Drafted: {drafted} tokens, Per-position acceptance rate: {pos}, "
                        f"Avg Draft acceptance rate: {100 * accepted / max(1, drafted):.1f}%"))
    return out


def shutdown_lines(cfg: ServerConfig, epoch: float) -> list[str]:
    return [line(cfg, 0, epoch, "core.py:1454", "[shutdown] EngineCore: trigger received "
                 "signal=SIGTERM"),
            line(cfg, -1, epoch, "launcher.py:254", "[shutdown] API server: shutdown triggered"),
            "INFO:     Shutting down", "INFO:     Waiting for application shutdown.",
            "INFO:     Application shutdown complete."]
