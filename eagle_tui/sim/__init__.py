"""A simulated speculative-decoding server (SGLang or vLLM) for the demo and for tests.

The simulator is a separate process (``python -m eagle_tui.sim``) that behaves, on the wire and in
its log, like a real server launched on a multi-GPU machine: it writes the real log format of the
chosen engine line by line, answers HTTP on 127.0.0.1 the way the engine does in each phase,
streams tokens at the scenario's rate and burst pattern, and drives a fake ``nvidia-smi`` that
prints the real CSV. The dashboard watches it with exactly the code that watches a real server,
which is the point: every later feature is developed against something that looks real.

Layout: :mod:`.scenario` (pure: scenarios, models and the timed startup steps),
:mod:`.sglang_log` / :mod:`.vllm_log` (pure: the engines' line formats), :mod:`.acceptance`
(pure: deterministic accept lengths), :mod:`.engine` (the serving loop), :mod:`.server` (HTTP),
:mod:`.metrics` (``/metrics`` text), :mod:`.gpu` and :mod:`.smi` (the fake GPUs), and
:mod:`.runtime` (the process that plays a timeline).
"""
