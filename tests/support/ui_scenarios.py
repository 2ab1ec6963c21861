"""Deterministic event scripts for the dashboard's tests, snapshots and doc screenshots.

Each scenario is a plain list of events with explicit times (``Tick``/``t``), so the app renders
the same frame on every run: the session is built with ``tick_interval=None`` and the events'
own clock drives elapsed times. The lines are taken from the recorded fixtures
(``tests/fixtures/``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from eagle_tui.model.events import (
    Baseline,
    ConnectionState,
    CrashEvent,
    DecodeStats,
    DraftConfig,
    EngineDetected,
    Event,
    GpuInfo,
    GpuProcess,
    GpuSample,
    HealthSample,
    HiddenStateDims,
    LineKind,
    LogLine,
    ModelInfo,
    Phase,
    PhaseEvent,
    ProcessExited,
    ProcessSample,
    Progress,
    SpecConfig,
    SpecStats,
    Tick,
)

T0 = 1_763_633_671.0  # 2025-11-20 10:14:31 UTC
GIB = 1024**3
H200_TOTAL = int(139.81 * GIB)
FROZEN_CLOCK = T0 + 3600.0


class Script:
    """Builds a scenario: log lines get consecutive line numbers, time only moves forward."""

    def __init__(self, t0: float = T0) -> None:
        self.t = t0
        self.lineno = 0
        self.events: list[Event] = [Tick(t0)]

    def at(self, dt: float) -> Script:
        self.t += dt
        self.events.append(Tick(self.t))
        return self

    def stamp(self) -> str:
        import time as _time

        return _time.strftime("%Y-%m-%d %H:%M:%S", _time.gmtime(self.t))

    def line(self, text: str, kind: LineKind = LineKind.PLAIN, *, prefix: bool = True) -> int:
        self.lineno += 1
        full = f"[{self.stamp()}] {text}" if prefix else text
        self.events.append(LogLine(self.lineno, full, kind))
        return self.lineno

    def phase(self, phase: Phase, text: str, role: str = "target") -> int:
        n = self.line(text, LineKind.MILESTONE)
        self.events.append(PhaseEvent(phase, n, self.stamp(), role=role))
        return n

    def add(self, *events: Event) -> Script:
        self.events.extend(events)
        return self


def gpus(used_gib: list[float], util: list[float], *, t: float, power: float = 420.0,
         procs: bool = True) -> GpuSample:
    infos = []
    for i, (u, ut) in enumerate(zip(used_gib, util, strict=True)):
        processes = (GpuProcess(4242 + i, "python3 -m sglang.launch_server", int(u * GIB)),) \
            if procs and u > 1 else ()
        infos.append(GpuInfo(index=i, name="NVIDIA H200", uuid=f"GPU-{i:04d}",
                             mem_used=int(u * GIB), mem_total=H200_TOTAL, util_gpu=ut,
                             util_mem=ut / 2, power_w=power + 10 * i * (ut > 0),
                             power_limit_w=700.0, temp_c=38.0 + ut / 4, sm_mhz=1980.0,
                             processes=processes))
    return GpuSample(t=t, state="ok", gpus=tuple(infos), backend="nvml")


def _launch(s: Script, algorithm: str = "EAGLE3", n_gpus: int = 2,
            draft: str = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
            model: str = "meta-llama/Llama-3.1-8B-Instruct") -> None:
    s.add(EngineDetected("sglang", 1))
    s.line(f"server_args=ServerArgs(model_path='{model}', tp_size={n_gpus}, "
           f"speculative_algorithm='{algorithm}', speculative_draft_model_path='{draft}', "
           "speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4, "
           "...)")
    s.add(SpecConfig(algorithm, draft, 3, 1, 4))
    s.add(PhaseEvent(Phase.INIT, 1, s.stamp()))
    s.add(ProcessSample(s.t, 4242, "running", "python3", int(1.1 * GIB), 99.0, T0, 3))
    s.add(HealthSample("no_listener", s.t, error="connection refused"))
    s.add(gpus([0.5] * n_gpus, [0.0] * n_gpus, t=s.t, power=75.0, procs=False))
    s.at(6.2).line("Init torch distributed begin.", LineKind.MILESTONE)
    s.at(1.1).line("Init torch distributed ends. mem usage=0.00 GB", LineKind.MILESTONE)


def _weights(s: Script, n_gpus: int = 2, shards: int = 4, upto: int = 4) -> None:
    s.at(0.6).phase(Phase.LOADING_WEIGHTS, "Load weight begin. avail mem=78.58 GB")
    for i in range(upto + 1):
        pct = int(100 * i / shards)
        n = s.line(f"Loading safetensors checkpoint shards: {pct:3d}% Completed | {i}/{shards} "
                   f"[00:0{i}<00:0{shards - i},  1.24s/it]", prefix=False)
        s.add(Progress("shards", i, shards, n))
        s.add(gpus([0.5 + 3.7 * i] * n_gpus, [12.0 + 5 * i] * n_gpus, t=s.t, power=160.0,
                   procs=i > 0))
        s.at(1.2)
    s.add(ProcessSample(s.t, 4242, "running", "python3", int(3.4 * GIB), 97.0, T0, 3))


def _graphs(s: Script, n_gpus: int = 2, draft_done: int = 9) -> None:
    s.phase(Phase.WEIGHTS_LOADED, "Load weight end. elapsed=5.12 s, type=LlamaForCausalLM, "
            "dtype=torch.bfloat16, avail mem=63.44 GB, mem usage=15.14 GB.")
    s.add(ModelInfo("target", "LlamaForCausalLM", s.lineno))
    s.at(0.4).phase(Phase.KV_CACHE, "KV Cache is allocated. #tokens: 363000, K size: 22.16 GB, "
                    "V size: 22.16 GB")
    s.add(gpus([60.2] * n_gpus, [3.0] * n_gpus, t=s.t, power=120.0))
    s.at(0.8).line("Memory pool end. avail mem=18.87 GB", LineKind.MILESTONE)
    s.at(0.5).phase(Phase.CUDA_GRAPH, "Capture cuda graph begin. This can take up to several "
                    "minutes. avail mem=18.55 GB")
    for i in (0, 7, 14):
        n = s.line(f"Capturing batches (bs={48 - 3 * i} avail_mem=18.41 GB): "
                   f"{int(100 * i / 14):3d}%|          | {i}/14 [00:0{i // 4}<00:04,  3.21it/s]",
                   prefix=False)
        s.add(Progress("graphs", i, 14, n))
        s.at(1.5)
    s.line("Capture cuda graph end. Time elapsed: 4.57 s. mem usage=0.61 GB. avail mem=17.94 GB.",
           LineKind.MILESTONE)
    s.at(0.7).phase(Phase.LOADING_WEIGHTS, "Load weight begin. avail mem=17.94 GB", role="draft")
    s.at(0.9).line("Load weight end. elapsed=0.87 s, type=LlamaForCausalLMEagle3, "
                   "dtype=torch.bfloat16, avail mem=16.07 GB, mem usage=1.87 GB.",
                   LineKind.MILESTONE)
    s.add(ModelInfo("draft", "LlamaForCausalLMEagle3", s.lineno))
    s.at(0.3).phase(Phase.CUDA_GRAPH, "Capture draft cuda graph begin. This can take up to several"
                    " minutes. avail mem=14.66 GB", role="draft")
    for i in sorted({0, draft_done}):
        n = s.line(f"Capturing batches (bs={48 - 3 * i} avail_mem=14.60 GB): "
                   f"{int(100 * i / 14):3d}%|######    | {i}/14 [00:02<00:01,  3.55it/s]",
                   prefix=False)
        s.add(Progress("graphs", i, 14, n, role="draft"))
        s.add(gpus([64.9] * n_gpus, [41.0 + 2 * i] * n_gpus, t=s.t, power=310.0))
        s.at(1.1)


def _ready(s: Script, n_gpus: int = 2) -> None:
    s.line("Capture draft cuda graph end. Time elapsed: 3.91 s. mem usage=0.21 GB. "
           "avail mem=14.39 GB.", LineKind.MILESTONE)
    s.at(0.2).line("max_total_num_tokens=363000, chunked_prefill_size=8192, max_prefill_tokens="
                   "16384, max_running_requests=48, context_len=131072, available_gpu_mem=14.39 GB")
    s.at(0.6).line("INFO:     Started server process [4242]")
    s.line("INFO:     Waiting for application startup.")
    s.line("INFO:     Application startup complete.")
    s.phase(Phase.HTTP_SERVER, "INFO:     Uvicorn running on http://0.0.0.0:30000 "
            "(Press CTRL+C to quit)")
    s.add(HealthSample("starting", s.t, 503, 0.004))
    s.at(1.4).line('INFO:     127.0.0.1:51234 - "GET /get_model_info HTTP/1.1" 200 OK',
                   LineKind.ACCESS)
    s.line("Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, "
           "#running-req: 0, #queue-req: 0, ", LineKind.STATS)
    s.line('INFO:     127.0.0.1:51240 - "POST /generate HTTP/1.1" 200 OK', LineKind.ACCESS)
    s.at(0.9).phase(Phase.READY, "The server is fired up and ready to roll!")
    s.add(HealthSample("ready", s.t, 200, 0.003))


ACCEPT = [2.05, 2.31, 2.12, 2.44, 2.27, 2.38, 2.19, 2.52, 2.33, 2.41, 2.26, 2.47, 2.35, 2.29,
          2.58, 2.43, 2.36, 2.49, 2.31, 2.45, 2.39, 2.55, 2.42, 2.37]
TPS = [151.2, 172.9, 160.4, 181.7, 169.3, 177.8, 163.0, 188.4, 174.1, 180.2, 168.7, 185.9,
       176.3, 171.0, 192.6, 182.4, 176.8, 186.1, 172.5, 183.7, 179.9, 190.8, 181.2, 178.4]


def _decode(s: Script, n: int, accept: list[float], tps: list[float], n_gpus: int = 2,
            debug_dim: int | None = 12288, running: int = 4) -> None:
    for i in range(n):
        s.at(2.0)
        a, g = accept[i % len(accept)], tps[i % len(tps)]
        s.line(f"Decode batch, #running-req: {running}, #token: {1800 + 37 * i}, token usage: "
               f"0.{10 + i % 7:02d}, accept len: {a:.2f}, accept rate: {(a - 1) / 3:.2f}, "
               f"cuda graph: True, gen throughput (token/s): {g:.2f}, #queue-req: {i % 3}, ",
               LineKind.STATS)
        s.add(DecodeStats(s.lineno, s.stamp(), g, a, (a - 1) / 3, running, i % 3,
                          0.10 + (i % 7) / 100, 1800 + 37 * i, True))
        if debug_dim is not None and i % 8 == 0:
            s.line(f"[EAGLE3-DEBUG] hidden_states shape=torch.Size([{running * 4}, {debug_dim}]) "
                   "dtype=torch.bfloat16", LineKind.DEBUG, prefix=False)
            s.add(HiddenStateDims(debug_dim, s.lineno, running * 4))
        util = 70.0 + (i * 13) % 28
        s.add(gpus([66.3 + 0.01 * i] * n_gpus, [util] * n_gpus, t=s.t, power=520.0))
        s.add(ProcessSample(s.t, 4242, "running", "python3", int(5.8 * GIB), 103.0, T0, 3))
        s.add(HealthSample("ready", s.t, 200, 0.002 + (i % 3) / 1000))


def loading_weights() -> list[Event]:
    s = Script()
    _launch(s)
    _weights(s, upto=2)
    return s.events


def capturing_graphs() -> list[Event]:
    s = Script()
    _launch(s)
    _weights(s)
    _graphs(s)
    return s.events


def ready_metrics() -> list[Event]:
    s = Script()
    _launch(s)
    s.add(Baseline(90.0, "demo"))
    s.add(DraftConfig("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", ("LlamaForCausalLMEagle3",), True,
                      4096, None, (1, 15, 29)))
    _weights(s)
    _graphs(s, draft_done=14)
    _ready(s)
    _decode(s, 24, ACCEPT, TPS)
    return s.events


def misconfigured() -> list[Event]:
    """EAGLE-3 draft launched with --speculative-algorithm EAGLE on 8 GPUs (DeepSeek width)."""
    s = Script()
    _launch(s, algorithm="EAGLE", n_gpus=8, draft="lmsys/DeepSeek-V3-EAGLE3",
            model="deepseek-ai/DeepSeek-V3")
    s.add(Baseline(90.0, "demo"))
    s.add(DraftConfig("lmsys/DeepSeek-V3-EAGLE3", ("LlamaForCausalLMEagle3",), True, 7168, None,
                      (1, 29, 57)))
    _weights(s, n_gpus=8)
    _graphs(s, n_gpus=8, draft_done=14)
    _ready(s, n_gpus=8)
    _decode(s, 12, [1.02, 1.01, 1.03, 1.00, 1.02], [71.5, 69.8, 73.2, 70.4, 72.0], n_gpus=8,
            debug_dim=7168)
    return s.events


OOM_MESSAGE = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 "
               "has a total capacity of 139.81 GiB of which 1.25 GiB is free.")
OOM_HINT = ("Lower --mem-fraction-static (e.g. 0.88 → 0.80) or --cuda-graph-max-bs so the "
            "graphs fit beside the KV cache.")


def oom_crash() -> list[Event]:
    s = Script()
    _launch(s)
    _weights(s)
    s.phase(Phase.WEIGHTS_LOADED, "Load weight end. elapsed=5.12 s, type=LlamaForCausalLM, "
            "dtype=torch.bfloat16, avail mem=63.44 GB, mem usage=15.14 GB.")
    s.at(0.4).phase(Phase.KV_CACHE, "KV Cache is allocated. #tokens: 1933682, K size: 59.10 GB, "
                    "V size: 59.10 GB")
    s.add(gpus([134.1, 134.3], [2.0, 2.0], t=s.t, power=130.0))
    s.at(0.5).phase(Phase.CUDA_GRAPH, "Capture cuda graph begin. This can take up to several "
                    "minutes. avail mem=4.02 GB")
    n = s.line("Capturing batches (bs=160 avail_mem=3.90 GB):  12%|#2        | 4/35 "
               "[00:01<00:09,  3.10it/s]", prefix=False)
    s.add(Progress("graphs", 4, 35, n))
    s.add(gpus([138.6, 138.7], [64.0, 63.0], t=s.t, power=350.0))
    s.at(1.3).line("Scheduler hit an exception: Traceback (most recent call last):",
                   LineKind.ERROR)
    s.line('  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2735, in '
           "run_scheduler_process", LineKind.TRACEBACK, prefix=False)
    s.line('  File "/sgl/python/sglang/srt/model_executor/cuda_graph_runner.py", line 391, in '
           "capture", LineKind.TRACEBACK, prefix=False)
    root = s.line(OOM_MESSAGE, LineKind.ERROR, prefix=False)
    s.add(CrashEvent("cuda_oom", root, OOM_MESSAGE, OOM_HINT, s.stamp()))
    s.at(0.2).line("Received sigquit from a child process. It usually means the child failed.",
                   LineKind.ERROR)
    s.add(ProcessExited(s.t, 4242, 1))
    s.add(gpus([0.5, 0.5], [0.0, 0.0], t=s.t, power=80.0, procs=False))
    return s.events


def no_gpu() -> list[Event]:
    """vLLM on a CPU-only host (the recorded fixture's shape): the GPU pane says no driver."""
    s = Script()
    s.add(EngineDetected("vllm", 1))
    s.add(GpuSample(s.t, "no_driver", error="NVML Shared Library Not Found", backend="nvml"))
    s.add(ProcessSample(s.t, 330, "running", "vllm", int(2.2 * GIB), 180.0, T0, 2))
    s.add(HealthSample("no_listener", s.t, error="connection refused"))
    v = "(APIServer pid=330) INFO 11-30 00:10:{:02d} [{}] {}"
    s.add(SpecConfig("eagle3", "/srv/eagle/tiny-eagle3", 3, None, None))
    s.line(v.format(0, "api_utils.py:347", "vLLM API server version 0.32.0"), prefix=False)
    s.add(PhaseEvent(Phase.INIT, 1, "11-30 00:10:00"))
    s.at(2.0).phase(Phase.LOADING_WEIGHTS, v.format(2, "cpu_model_runner.py:71",
                                                    "Starting to load model /srv/eagle/tiny-llama"))
    s.at(1.0).phase(Phase.WEIGHTS_LOADED, v.format(3, "default_loader.py:291",
                                                   "Loading weights took 0.02 seconds"))
    s.at(1.0).phase(Phase.KV_CACHE, v.format(4, "kv_cache_utils.py:1314",
                                             "GPU KV cache size: 43,680 tokens"))
    s.at(1.0).phase(Phase.READY, v.format(5, "launcher.py:61", "Application startup complete."))
    s.add(HealthSample("ready", s.t, 200, 0.002))
    for i in range(6):
        s.at(2.0)
        s.line(v.format(6 + 2 * i, "loggers.py:335", "Engine 000: Avg prompt throughput: 22.8 "
               f"tokens/s, Avg generation throughput: {88 + i * 1.5:.1f} tokens/s, Running: 1 "
               "reqs, Waiting: 0 reqs, CPU KV cache usage: 0.4%, Prefix cache hit rate: 0.0%"),
               LineKind.STATS, prefix=False)
        s.add(DecodeStats(s.lineno, None, 88 + i * 1.5, None, None, 1, 0, 0.004, source="log"))
        s.line(v.format(6 + 2 * i, "metrics.py:120", "SpecDecoding metrics: Mean acceptance "
               f"length: {3.5 + i / 20:.2f}, Accepted throughput: 69.48 tokens/s, Drafted "
               "throughput: 77.07 tokens/s, Accepted: 192 tokens, Drafted: 213 tokens, "
               "Per-position acceptance rate: 1.000, 0.930, 0.775, Avg Draft acceptance rate: "
               "90.1%"), LineKind.STATS, prefix=False)
        s.add(SpecStats(s.lineno, None, 3.5 + i / 20, 192, 213, (1.0, 0.93, 0.775), 0.901))
    return s.events


HOSTS = ("node-a", "node-b")
LINK_ERROR = "connection to node-b lost: no answer to keepalive@openssh.com in 2.0 s"


def _split_hosts(events: list[Event]) -> list[Event]:
    """A one-host script as a two-node run: node-a logs everything, node-b (TP ranks 4-7) the
    startup lines only, numbered from 1 on its own; GPU samples merged the way MergedGpu does."""
    out: list[Event] = [ConnectionState(h, "connected", T0, attempt=0) for h in HOSTS]
    b_lineno = 0
    for ev in events:
        if isinstance(ev, LogLine):
            out.append(dataclasses.replace(ev, host="node-a"))
            if ev.kind not in (LineKind.STATS, LineKind.ACCESS, LineKind.DEBUG):
                b_lineno += 1
                out.append(LogLine(b_lineno, ev.text.replace(" TP0", " TP4"), ev.kind, "node-b"))
        elif isinstance(ev, GpuSample):
            a = tuple(dataclasses.replace(g, host="node-a") for g in ev.gpus)
            b = tuple(dataclasses.replace(g, host="node-b", uuid=f"GPU-1{g.index:03d}",
                                          mem_used=(g.mem_used or 0) + int(0.3 * GIB))
                      for g in ev.gpus)
            out.append(dataclasses.replace(ev, gpus=a + b))
        else:
            out.append(ev)
    return out


def two_hosts(down: str | None = "node-b", error: str = LINK_ERROR) -> list[Event]:
    """Llama-8B EAGLE-3 over two 4-GPU nodes, serving; then ``down`` loses its SSH link.

    While it reconnects, the merged GPU sample lacks its GPUs (MergedGpu reports the host's
    error instead), as a real multi-host ``watch`` does; node-a's numbers keep coming.
    """
    s = Script()
    _launch(s, n_gpus=4)
    s.add(Baseline(90.0, "demo"))
    _weights(s, n_gpus=4)
    _graphs(s, n_gpus=4, draft_done=14)
    _ready(s, n_gpus=4)
    _decode(s, 20, ACCEPT, TPS, n_gpus=4)
    out = _split_hosts(s.events)
    if down is not None:
        t = s.t + 1.0
        last = next(e for e in reversed(out) if isinstance(e, GpuSample))
        kept = tuple(g for g in last.gpus if g.host != down)
        out += [Tick(t), ConnectionState(down, "reconnecting", t, attempt=3, error=error),
                dataclasses.replace(last, t=t, gpus=kept, error=f"{down}: {error}"),
                Tick(t + 2.0)]
    return out


SCENARIOS: dict[str, Callable[[], list[Event]]] = {
    "loading_weights": loading_weights,
    "capturing_graphs": capturing_graphs,
    "ready_metrics": ready_metrics,
    "misconfigured": misconfigured,
    "oom_crash": oom_crash,
    "no_gpu": no_gpu,
    "two_hosts": two_hosts,  # not in the snapshot matrix: test_ui_multihost has its own
}
