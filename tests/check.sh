#!/usr/bin/env bash
# The contributor's fast loop (docs/contributing.md): ruff, mypy --strict, the import contracts,
# then every test that needs no real server: no vLLM or SGLang, no sshd, no tmux, no Prometheus,
# and none marked slow, in two pytest processes (CHECK_JOBS=1: one). Needs only a venv made with
# `pip install -e '.[test]'` (active, or at .venv). Arguments are options for the last pytest
# runs: `tests/check.sh -x -k logbuffer`, or `-m "not realserver and not sshd and not tmux"` to
# add the slow ones (for one file, call pytest: docs/contributing.md).
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

# Every step runs; the exit status says whether any failed, and the last line which.
failed=()
pytest_run() {  # exit 5 (a -k that selects nothing in one of the two halves) is no failure
    local rc=0
    $PY -m pytest "$@" || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 5 ]
}
echo "== ruff"; $PY -m ruff check eagle_tui tests benchmarks || failed+=(ruff)
echo "== mypy --strict eagle_tui"; $PY -m mypy || failed+=(mypy)
echo "== import contracts, cycles, module sizes, AST scans (tests/unit/structure)"
$PY -m pytest -q tests/unit/structure || failed+=(tests/unit/structure)
echo "== tests without real servers"
sel=(-q --ignore=tests/unit/structure -m "not realserver and not sshd and not tmux and not slow"
     --ignore=tests/integration/test_fleet_prometheus.py)  # it starts a real Prometheus if any
if [ "${CHECK_JOBS:-2}" = 1 ]; then
    pytest_run "${sel[@]}" tests "$@" || failed+=(tests)
    [ ${#failed[@]} = 0 ] || { echo "== failed: ${failed[*]}"; exit 1; }
    exit 0
fi
# Two pytest processes, one a core, of about the same length: tests/unit, tests/sim and
# tests/integration in the background (their output is shown when they end), every other folder
# in the foreground.
bg=(tests/unit tests/sim tests/integration)
pytest_run "${sel[@]}" "${bg[@]}" "$@" > "$none/unit.log" 2>&1 &
unit=$!
pytest_run "${sel[@]}" "${bg[@]/#/--ignore=}" tests "$@" || failed+=("tests but ${bg[*]}")
wait "$unit" || failed+=("${bg[*]}")
echo "== ${bg[*]}"
cat "$none/unit.log"
[ ${#failed[@]} = 0 ] || { echo "== failed: ${failed[*]}"; exit 1; }
