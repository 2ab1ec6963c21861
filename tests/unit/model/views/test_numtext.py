"""``numtext.fixed``: ``:.Nf`` for every real figure, a dozen characters at most for any."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from eagle_tui.model.events import MetricsSample
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState
from eagle_tui.model.views.figtext import figures_text
from eagle_tui.model.views.figures import figures
from eagle_tui.model.views.numtext import PLAIN_BELOW, fixed


@given(st.floats(allow_nan=True, allow_infinity=True), st.integers(0, 3))
def test_any_float_is_short_and_a_real_figure_unchanged(value: float, digits: int) -> None:
    text = fixed(value, digits)
    assert len(text) <= 12 + digits
    if not math.isfinite(value) or abs(value) < PLAIN_BELOW:
        assert text == f"{value:.{digits}f}"
    else:
        assert float(text) == float(f"{value:.3g}")


def test_the_headless_line_keeps_its_width() -> None:
    s = reduce(DashboardState(), [MetricsSample(1.0, gen_tps=1e300, accept_len=2.5)])
    line = figures_text(figures(s))
    assert line is not None and "1e+300" in line and len(line) < 120, line
