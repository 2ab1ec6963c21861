"""``eagle-tui fleet --prometheus URL``: every engine instance Prometheus scrapes, at a glance.

Nothing is installed on any node: the rows come from a few PromQL queries per refresh (grouped
``by (instance)``, the same number of requests for 10 or 1,000 instances). On a terminal the
fleet screen opens (sort, filter, sparklines, ``Enter`` opens the ordinary dashboard for one
instance); ``--headless`` prints text lines and ``--json`` one JSON object per refresh, for
``--count`` refreshes or ``--duration`` seconds (default: until interrupted). See docs/fleet.md.
"""

from __future__ import annotations

import argparse
from typing import Any

from eagle_tui.assembly.open import EXIT_USAGE
from eagle_tui.commands import argtypes
from eagle_tui.console import fail
from eagle_tui.errors import UsageError
from eagle_tui.model.fleet.flags import FLAG_ORDER, SORT_KEYS, FleetFilter


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "fleet",
        help="every SGLang/vLLM server Prometheus scrapes, with speculative-decoding figures",
        description="One row per engine instance from a Prometheus server: state, tok/s, "
        "acceptance length and rate, requests, KV cache, TTFT/ITL, restarts, and flags "
        "(drafts rejected, down, stalled, below the fleet median, restarted).",
    )
    p.add_argument("--prometheus", metavar="URL", required=True,
                   help="Prometheus base URL, e.g. http://prometheus:9090")
    p.add_argument("--selector", metavar="SEL", default=None,
                   help='extra label matchers for every series, e.g. \'job="llm"\'')
    p.add_argument("--ssh-map", metavar="FILE", type=argtypes.local_file, default=None,
                   help="instance/host pattern → SSH destination, one rule a line "
                   "(default: hosts named in ~/.ssh/config)")
    p.add_argument("--ssh-config", metavar="FILE", type=argtypes.any_path, default=None,
                   help="OpenSSH client config to read (default ~/.ssh/config)")
    p.add_argument("--headless", action="store_true",
                   help="print text lines instead of the screen (the default without a TTY)")
    p.add_argument("--json", action="store_true", help="one JSON object per refresh")
    p.add_argument("--count", metavar="N", type=argtypes.count, default=None,
                   help="stop after N refreshes")
    p.add_argument("--duration", metavar="SECONDS", type=argtypes.seconds, default=None,
                   help="stop after this long")
    p.add_argument("--interval", metavar="SECONDS", type=argtypes.seconds, default=5.0,
                   help="seconds between refreshes (default 5)")
    p.add_argument("--window", metavar="RANGE", type=argtypes.prom_range, default="1m",
                   help="the longest rate window, a Prometheus duration (default 1m; ≥ 2 "
                   "scrape intervals); young or often-scraped instances read a shorter one")
    p.add_argument("--lookback", metavar="RANGE", type=argtypes.prom_range, default="15m",
                   help="how far back restarts and the engine of a down instance are looked "
                   "for (default 15m)")
    p.add_argument("--timeout", metavar="SECONDS", type=argtypes.seconds, default=5.0,
                   help="total deadline of each request to Prometheus (default 5)")
    p.add_argument("--sort", choices=SORT_KEYS, default="flags",
                   help="row order (default: flags, most severe first)")
    p.add_argument("--flag", choices=("any", *FLAG_ORDER), default=None,
                   help="only instances with this flag (any: with any flag)")
    p.add_argument("--model", metavar="TEXT", default=None, help="only models containing TEXT")
    p.add_argument("--host", metavar="TEXT", default=None, help="only hosts containing TEXT")
    p.add_argument("--theme", metavar="NAME", default=None, help="theme of the screen")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from eagle_tui.assembly.fleet import FleetSpec, open_fleet

    url = str(args.prometheus)
    if not url.startswith(("http://", "https://")):
        fail("fleet", f"--prometheus wants an http(s) URL, got {url!r}")
        return EXIT_USAGE
    spec = FleetSpec(
        prometheus=url, selector=args.selector, ssh_map=args.ssh_map, ssh_config=args.ssh_config,
        headless=args.headless, json=args.json, duration=args.duration, count=args.count,
        interval=args.interval, window=args.window, lookback=args.lookback,
        deadline_s=args.timeout, sort=args.sort,
        filter=FleetFilter(flag=args.flag, model=args.model, host=args.host), theme=args.theme)
    try:
        return open_fleet(spec)
    except UsageError as exc:
        fail("fleet", exc)
        return EXIT_USAGE


__all__ = ["register", "run"]
