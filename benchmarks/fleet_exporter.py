"""A synthetic exporter: one ``/metrics`` carrying many engine instances' series.

Each instance's series carry their own ``instance`` label (Prometheus scrapes it with
``honor_labels: true``, so they stay apart), in the engines' real names and types: half vLLM
(lifetime spec counters with per-position counts, gauges, TTFT/ITL histograms), half SGLang
(``generation_tokens_total``, ``spec_verify_calls_total``, its gauges, the same histograms).
Counters grow with wall time at a per-instance rate, so Prometheus' ``rate()`` has live data;
every 17th instance is misconfigured (accept length ≈ 1.02).

    python benchmarks/fleet_exporter.py --instances 1000 --port 9400
"""

from __future__ import annotations

import argparse
import http.server
import random
import time

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, "+Inf")
SPEC_K = 3


def _hist(lines: list[str], name: str, labels: str, n: float, typical: float) -> None:
    for le in BUCKETS:
        frac = 1.0 if le == "+Inf" else min(1.0, float(le) / (2 * typical))
        lines.append(f'{name}_bucket{{{labels},le="{le}"}} {int(n * frac)}')
    lines.append(f"{name}_sum{{{labels}}} {n * typical:.3f}")
    lines.append(f"{name}_count{{{labels}}} {int(n)}")


def render(instances: int, t0: float, now: float) -> str:
    lines: list[str] = []
    dt = now - t0
    for i in range(instances):
        rng = random.Random(i)
        tps = rng.uniform(200.0, 400.0)
        accept = 1.02 if i % 17 == 5 else rng.uniform(2.6, 3.4)
        gen = tps * dt
        steps = gen / accept
        inst = f'instance="node-{i // 8:03d}:{8000 + i % 8}"'
        reqs = gen / 256
        if i % 2 == 0:
            lab = f'{inst},engine="0",model_name="llama-70b"'
            lines += [
                f"vllm:generation_tokens_total{{{lab}}} {gen:.0f}",
                f"vllm:spec_decode_num_drafts_total{{{lab}}} {steps:.0f}",
                f"vllm:spec_decode_num_draft_tokens_total{{{lab}}} {steps * SPEC_K:.0f}",
                f"vllm:spec_decode_num_accepted_tokens_total{{{lab}}} {steps * (accept - 1):.0f}",
                *(f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{lab},position="{p}"}} '
                  f"{steps * (accept - 1) * (0.5 ** p) / 1.75:.0f}" for p in range(SPEC_K)),
                f"vllm:num_requests_running{{{lab}}} {4 + i % 3}",
                f"vllm:num_requests_waiting{{{lab}}} {i % 2}",
                f"vllm:kv_cache_usage_perc{{{lab}}} {0.3 + 0.01 * (i % 40):.2f}",
                f"process_start_time_seconds{{{inst}}} {t0:.0f}",
            ]
            _hist(lines, "vllm:time_to_first_token_seconds", lab, reqs, 0.08)
            _hist(lines, "vllm:inter_token_latency_seconds", lab, gen, 0.012)
        else:
            lab = f'{inst},engine_type="unified",model_name="qwen-32b"'
            rank = f'{lab},tp_rank="0",pp_rank="0"'
            lines += [
                f"sglang:generation_tokens_total{{{lab}}} {gen:.0f}",
                f"sglang:spec_verify_calls_total{{{lab}}} {steps:.0f}",
                f"sglang:num_running_reqs{{{rank}}} {4 + i % 3}",
                f"sglang:num_queue_reqs{{{rank}}} {i % 2}",
                f"sglang:token_usage{{{rank}}} {0.3 + 0.01 * (i % 40):.2f}",
                f"sglang:gen_throughput{{{rank}}} {tps:.1f}",
                f"sglang:spec_accept_length{{{rank}}} {accept:.2f}",
            ]
            _hist(lines, "sglang:time_to_first_token_seconds", lab, reqs, 0.08)
            _hist(lines, "sglang:inter_token_latency_seconds", lab, gen, 0.012)
    return "\n".join(lines) + "\n"


def serve(instances: int, port: int) -> None:
    t0 = time.time() - 600.0  # counters already 10 minutes old

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = render(instances, t0, time.time()).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"serving {instances} instances on 127.0.0.1:{port}", flush=True)
    server.serve_forever()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--instances", type=int, default=100)
    p.add_argument("--port", type=int, default=9400)
    args = p.parse_args()
    serve(args.instances, args.port)


if __name__ == "__main__":
    main()
