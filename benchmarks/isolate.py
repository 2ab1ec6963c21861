"""Benchmarks run eagle-tui with folders of their own, never the user's run history or config.

Imported first by every benchmark that starts eagle-tui (in-process or as a child): the
variables are set in ``os.environ`` at import, so every child inherits them. A folder the caller
set on purpose (``EAGLE_TUI_DATA_DIR``) is kept.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

_BASE = Path(tempfile.mkdtemp(prefix="eagle-tui-bench-"))
atexit.register(shutil.rmtree, _BASE, True)

for _var, _sub in (("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config"),
                   ("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache")):
    (_BASE / _sub).mkdir()
    os.environ[_var] = str(_BASE / _sub)
os.environ.setdefault("EAGLE_TUI_DATA_DIR", str(_BASE / "data" / "eagle-tui"))
