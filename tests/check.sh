#!/usr/bin/env bash
# The contributor's fast loop (docs/contributing.md): ruff, mypy --strict, the import contracts,
# then every test that needs no real server: no vLLM or SGLang, no sshd, no tmux, no Prometheus,
# and none marked slow. Needs only a venv made with `pip install -e '.[test]'` (active, or at
# .venv). Arguments go to the last pytest: `tests/check.sh -x -k logbuffer`, or
# `tests/check.sh -m "not realserver and not sshd and not tmux"` to add the slow ones.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=python
if [ -z "${VIRTUAL_ENV:-}" ] && [ -x .venv/bin/python ]; then PY=.venv/bin/python; fi

# The real parts are skipped, never required, whatever the caller's environment says: the
# server fixtures skip on an empty root and a missing sshd (tests/integration/conftest.py,
# tests/ssh/conftest.py); the markers leave out the tests that start them.
unset EAGLE_TUI_REQUIRE_REALSERVER EAGLE_TUI_REQUIRE_SGLANG EAGLE_TUI_REQUIRE_SSHD \
    EAGLE_TUI_REQUIRE_TMUX
none=$(mktemp -d)
trap 'rm -rf "$none"' EXIT
export EAGLE_TUI_VLLM_ROOT=$none EAGLE_TUI_SGLANG_ROOT=$none EAGLE_TUI_SSHD=$none/sshd

echo "== ruff"; $PY -m ruff check eagle_tui tests benchmarks
echo "== mypy --strict eagle_tui"; $PY -m mypy
echo "== import contracts, cycles, module sizes, AST scans (tests/unit/structure)"
$PY -m pytest -q tests/unit/structure
echo "== tests without real servers"
# test_fleet_prometheus starts a real Prometheus when one is installed
exec $PY -m pytest -q --ignore=tests/unit/structure \
    --ignore=tests/integration/test_fleet_prometheus.py \
    -m "not realserver and not sshd and not tmux and not slow" "$@"
