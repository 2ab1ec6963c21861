"""The benchmark scripts, for the tests that reuse their log generators and drivers."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from tests.support.paths import REPO

BENCHMARKS = REPO / "benchmarks"


def bench_module(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module.

    The scripts import their siblings (``isolate``, ``bench_tui``) by bare name, as a run of
    ``python benchmarks/<name>.py`` allows, so their folder goes on ``sys.path``: the one path
    entry the tests add, here, so that no test depends on another having added it first.
    """
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    return importlib.import_module(name)
