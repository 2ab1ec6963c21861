"""The relaunch editor as the snapshot test and the documentation's screenshot show it: the
misconfigured scenario's run, with the fix (``EAGLE`` → ``EAGLE3``) already typed."""

from __future__ import annotations

from typing import Any

from eagle_tui.model.boundary.shellwords import join
from eagle_tui.ui.screens.editor import EditScreen

RUNNING = ["CUDA_VISIBLE_DEVICES=0", "HF_TOKEN=***", "python", "-m", "sglang.launch_server",
           "--model-path", "meta-llama/Llama-3.1-8B-Instruct",
           "--speculative-algorithm", "EAGLE",
           "--speculative-draft-model-path", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
           "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
           "--speculative-num-draft-tokens", "4", "--mem-fraction-static", "0.8",
           "--port", "30000", "--api-key", "***"]
FIXED = [("EAGLE3" if w == "EAGLE" else w) for w in RUNNING]


def editor_screen(sent: list[Any] | None = None) -> EditScreen:
    """The editor on :data:`FIXED`, diffed against :data:`RUNNING`."""
    return EditScreen("#3", join(FIXED), (sent if sent is not None else []).append,
                      original=join(RUNNING))
