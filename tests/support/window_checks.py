"""The agreement every benchmark window must show, on each real server (issue 12).

Over one window: the log's weighted acceptance length and the /metrics counter deltas within
2 %, the client's figure within 5 %, and the log's tok/s within 5 % of the client's.
"""

from __future__ import annotations

from typing import Any

import pytest


def window_agrees(window: dict[str, Any], engine: str,
                  tok_s_rel: float = 0.05) -> dict[str, dict[str, Any]]:
    """Print the window's figures, assert the agreement, return them by source."""
    fig = {f["source"]: f for f in window["figures"]}
    log, metrics, client = fig["log"], fig["/metrics"], fig["client"]
    print(f"{engine} window {window['duration_s']:.1f} s, {log.get('intervals')} log "
          f"intervals: accept log {log['accept_len']:.3f} /metrics {metrics['accept_len']:.3f} "
          f"client {client['accept_len']:.3f}; tok/s log {log['tok_s']:.1f} "
          f"/metrics {metrics['tok_s']:.1f} client {client['tok_s']:.1f}")
    assert log["intervals"] >= 3
    assert log["accept_len"] == pytest.approx(metrics["accept_len"], rel=0.02)
    assert client["accept_len"] == pytest.approx(metrics["accept_len"], rel=0.05)
    assert log["tok_s"] == pytest.approx(client["tok_s"], rel=tok_s_rel)
    return fig
