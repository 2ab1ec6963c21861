"""No module of eagle_tui over 450 lines: a module a newcomer can read in one sitting."""

from __future__ import annotations

from pathlib import Path

import eagle_tui

LIMIT = 450
ROOT = Path(eagle_tui.__file__).resolve().parent


def _too_long(root: Path, limit: int) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        with path.open("rb") as f:
            n = sum(1 for _ in f)
        if n > limit:
            found.append(f"{path.relative_to(root)}: {n} lines")
    return found


def test_no_module_over_the_limit() -> None:
    assert _too_long(ROOT, LIMIT) == []


def test_a_long_module_is_named(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "short.py").write_text("x = 1\n" * LIMIT)
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    assert _too_long(tmp_path, LIMIT) == [f"pkg/long.py: {LIMIT + 1} lines"]
