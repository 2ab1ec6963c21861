"""The test servers' ports stay out of the ranges others pick from on their own."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.support import ports


@given(low=st.integers(1025, 40000), width=st.integers(0, 30000))
def test_no_candidate_is_ephemeral_or_an_engines_own_pick(low: int, width: int) -> None:
    ephemeral = (low, min(low + width, 65535))
    pool = ports.candidates(ephemeral)
    assert pool
    if any(p for p in range(1024, ephemeral[0])
           if not ports.ENGINE_PICKS[0] <= p <= ports.ENGINE_PICKS[1]):
        for port in pool:
            assert not ephemeral[0] <= port <= ephemeral[1]
            assert not ports.ENGINE_PICKS[0] <= port <= ports.ENGINE_PICKS[1]


def test_the_default_machine_leaves_thousands_of_ports() -> None:
    pool = ports.candidates((32768, 60999))
    assert len(pool) > 4000
    assert min(pool) >= 20000 and max(pool) <= 32767


def test_a_free_port_binds_and_is_a_candidate() -> None:
    port = ports.free_port()
    assert port in ports.candidates() or port >= 32768
