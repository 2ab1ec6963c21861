"""Which path the health poller asks (``model/engines/readiness``): found once per server from
the engines' ``Endpoints``, never a working ``/health`` on an idle server where a no-work path
exists."""

from __future__ import annotations

from collections.abc import Callable

from eagle_tui.headless.progress import verdict
from eagle_tui.model.engines import profile_of
from eagle_tui.model.engines.readiness import (
    ReadinessChoice,
    alive_paths,
    health_works,
    quiet_paths,
    readiness_paths,
)
from eagle_tui.model.events import HealthSample
from eagle_tui.model.fold.reducer import reduce
from eagle_tui.model.state import DashboardState

Server = Callable[[str], int]


def sglang_0_5_23(up: bool = True) -> Server:
    """SGLang 0.5.23: /ready is a flag, /health and /health_generate generate once up."""
    paths = {"/ready", "/health", "/model_info", "/get_model_info", "/v1/models"}
    return lambda p: (200 if up else 503) if p in paths else 404


def old_sglang(up: bool = True) -> Server:
    """An SGLang before /ready: only its working /health says whether it is up."""
    paths = {"/health", "/model_info", "/get_model_info", "/v1/models"}
    return lambda p: (200 if up or p != "/health" else 503) if p in paths else 404


def vllm(up: bool = True) -> Server:
    return lambda p: (200 if up else 503) if p in ("/health", "/v1/models", "/ping") else 404


def fixed(engine: str | None) -> Callable[[], str | None]:
    return lambda: engine


def poll(choice: ReadinessChoice, server: Server | None) -> tuple[list[str], int | None]:
    """One poll as the poller makes it: the paths asked (404/405 hand over at once) and the
    status that became the sample (``None``: no answer)."""
    asked: list[str] = []
    while True:
        path = choice.path()
        asked.append(path)
        status = server(path) if server is not None else None
        if not choice.answered(path, status):
            return asked, status


def test_profiles_declare_their_no_work_paths() -> None:
    sg, vl = profile_of("sglang"), profile_of("vllm")
    assert sg is not None and vl is not None
    assert sg.endpoints.ready == ("/ready",) and sg.endpoints.health_works
    assert sg.endpoints.alive[0] == "/model_info"
    assert vl.endpoints.ready == () and not vl.endpoints.health_works
    assert readiness_paths("sglang") == ("/ready", "/health")
    assert readiness_paths("vllm") == ("/health",)
    assert readiness_paths(None) == readiness_paths("unknown") == ("/ready", "/health")
    assert health_works("sglang", "/health") and not health_works("vllm", "/health")
    assert health_works(None, "/health")  # unknown: taken to work, as one engine's does
    assert not health_works("sglang", "/ready")
    assert alive_paths("vllm") == () and alive_paths(None) == alive_paths("sglang")
    # the bench markers' candidates: no-work paths first, a working /health last
    assert quiet_paths() == ("/ready", "/health", "/model_info", "/get_model_info")
    assert quiet_paths("sglang") == ("/ready", "/model_info", "/get_model_info", "/health")


def test_sglang_is_asked_ready_only_starting_and_up() -> None:
    for engine in ("sglang", None):
        c = ReadinessChoice(fixed(engine))
        assert poll(c, sglang_0_5_23(up=False)) == (["/ready"], 503)
        for _ in range(5):
            assert poll(c, sglang_0_5_23()) == (["/ready"], 200)
        assert c.ready_path == "/ready" and c.alive_path is None


def test_vllm_falls_back_to_its_cheap_health_once_and_keeps_it() -> None:
    c = ReadinessChoice(lambda: None)  # the engine not known yet: /ready is tried first
    assert poll(c, vllm(up=False)) == (["/ready", "/health"], 503)
    assert poll(c, vllm()) == (["/health"], 200)
    c2 = ReadinessChoice(lambda: "vllm")
    assert poll(c2, vllm()) == (["/health"], 200)
    for _ in range(3):  # known cheap: /health stays
        assert poll(c2, vllm()) == (["/health"], 200)
    assert c2.ready_path == "/health" and not c2.up


def test_unknown_engine_with_only_a_working_health_leaves_it_after_the_first_200() -> None:
    """vLLM not yet known: its /health is treated as working, the liveness paths are all 404,
    so /health stays (once known, nothing changes: the choice is per server)."""
    c = ReadinessChoice(lambda: None)
    assert poll(c, vllm()) == (["/ready", "/health"], 200)
    assert poll(c, vllm()) == (["/model_info", "/get_model_info", "/health"], 200)
    assert poll(c, vllm()) == (["/health"], 200)
    assert c.alive_missing


def test_old_sglang_generates_only_until_its_first_200() -> None:
    c = ReadinessChoice(lambda: "sglang")
    assert poll(c, old_sglang(up=False)) == (["/ready", "/health"], 503)
    assert poll(c, old_sglang(up=False)) == (["/health"], 503)  # 503 while starting: no work
    assert poll(c, old_sglang()) == (["/health"], 200)  # the one generation
    for _ in range(5):
        assert poll(c, old_sglang()) == (["/model_info"], 200)
    assert c.alive_path == "/model_info"


def test_liveness_path_failing_goes_back_to_the_readiness_path() -> None:
    c = ReadinessChoice(lambda: "sglang")
    poll(c, old_sglang(up=False))
    poll(c, old_sglang())
    assert poll(c, old_sglang()) == (["/model_info"], 200)
    assert poll(c, lambda p: 500) == (["/model_info"], 500)
    assert poll(c, old_sglang(up=False)) == (["/health"], 503)  # fast again, on /health
    assert poll(c, old_sglang()) == (["/health"], 200)
    assert poll(c, old_sglang()) == (["/model_info"], 200)  # the path found is kept
    assert poll(c, None) == (["/model_info"], None)  # no answer (a timeout): /health next
    assert poll(c, old_sglang()) == (["/health"], 200)


def test_forget_asks_everything_again_for_the_next_server() -> None:
    c = ReadinessChoice(lambda: None)
    poll(c, vllm())
    assert c.ready_path == "/health"
    c.forget()  # nothing listened: the next one may be SGLang 0.5.23
    assert poll(c, sglang_0_5_23()) == (["/ready"], 200)
    assert c.ready_path == "/ready"


def test_no_candidate_there_reports_the_last_one() -> None:
    c = ReadinessChoice(lambda: None)
    assert poll(c, lambda p: 404) == (["/ready", "/health"], 404)
    assert poll(c, lambda p: 404) == (["/health"], 404)  # no loop: HTTP 404 is the sample


def test_the_verdict_names_the_path_that_said_ready() -> None:
    s = reduce(DashboardState(), [HealthSample("ready", 2.0, 200, path="/ready")])
    assert verdict(s, has_url=True) == ("ready", "/ready answered 200")


def test_the_engine_known_between_the_question_and_the_answer() -> None:
    """/ready was asked while the engine was unknown; the log said vLLM before its 404 came:
    the 404 still hands over to /health (it once stuck on /ready, 404 after 404)."""
    engine: list[str | None] = [None]
    c = ReadinessChoice(lambda: engine[0])
    assert c.path() == "/ready"
    engine[0] = "vllm"
    assert c.answered("/ready", 404)
    assert poll(c, vllm()) == (["/health"], 200)
    assert poll(c, vllm()) == (["/health"], 200)
