"""GPU sampling: NVML scenario mocks, the real no-driver path, the nvidia-smi CSV parser/stream."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncGenerator, AsyncIterator
from types import SimpleNamespace
from typing import Any

import pynvml
import pytest

from eagle_tui.model.events import GpuInfo, GpuSample
from eagle_tui.sources.gpu import MIB, NvmlSampler, SmiStream, parse_smi_line, smi_argv
from eagle_tui.transport.base import CommandNotFound, TransportError
from eagle_tui.transport.local import LocalTransport
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures" / "nvml"
GIB = 1 << 30


def nvml_error(code: int) -> pynvml.NVMLError:
    return pynvml.NVMLError(code)  # pynvml builds the matching subclass


class FakeNvml:
    """gpustat-style scenario mock: real pynvml exception classes and constants, fake devices.

    ``gpus`` is a list of dicts; a value that is an exception is raised by that call.
    """

    NVMLError = pynvml.NVMLError
    NVMLError_LibraryNotFound = pynvml.NVMLError_LibraryNotFound
    NVMLError_DriverNotLoaded = pynvml.NVMLError_DriverNotLoaded
    NVML_TEMPERATURE_GPU = pynvml.NVML_TEMPERATURE_GPU
    NVML_CLOCK_SM = pynvml.NVML_CLOCK_SM

    def __init__(self, gpus: list[dict[str, Any]], init_error: BaseException | None = None):
        self.gpus = gpus
        self.init_error = init_error
        self.calls: list[str] = []
        self.shutdown = False

    def _get(self, handle: int, key: str) -> Any:
        self.calls.append(key)
        value = self.gpus[handle][key]
        if isinstance(value, BaseException):
            raise value
        return value

    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise self.init_error

    def nvmlShutdown(self) -> None:
        self.shutdown = True

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        err = self.gpus[i].get("handle_error")
        if err is not None:
            raise err
        return i

    def nvmlDeviceGetName(self, h: int) -> Any:
        return self._get(h, "name")

    def nvmlDeviceGetUUID(self, h: int) -> Any:
        return self._get(h, "uuid")

    def nvmlDeviceGetMemoryInfo(self, h: int) -> Any:
        return self._get(h, "mem")

    def nvmlDeviceGetUtilizationRates(self, h: int) -> Any:
        return self._get(h, "util")

    def nvmlDeviceGetPowerUsage(self, h: int) -> Any:
        return self._get(h, "power_mw")

    def nvmlDeviceGetEnforcedPowerLimit(self, h: int) -> Any:
        return self._get(h, "limit_mw")

    def nvmlDeviceGetTemperature(self, h: int, sensor: int) -> Any:
        assert sensor == self.NVML_TEMPERATURE_GPU
        return self._get(h, "temp")

    def nvmlDeviceGetClockInfo(self, h: int, clock: int) -> Any:
        assert clock == self.NVML_CLOCK_SM
        return self._get(h, "sm")

    def nvmlDeviceGetComputeRunningProcesses(self, h: int) -> Any:
        return self._get(h, "procs")


def h200(i: int, used_gib: float = 70.0, **over: Any) -> dict[str, Any]:
    gpu: dict[str, Any] = {
        "name": b"NVIDIA H200" if i % 2 else "NVIDIA H200",  # older pynvml returns bytes
        "uuid": f"GPU-{i:04d}",
        "mem": SimpleNamespace(used=int(used_gib * GIB), total=int(139.8 * GIB)),
        "util": SimpleNamespace(gpu=97, memory=40),
        "power_mw": 512_345,
        "limit_mw": 700_000,
        "temp": 61,
        "sm": 1980,
        "procs": [SimpleNamespace(pid=4242, usedGpuMemory=int(69 * GIB)),
                  SimpleNamespace(pid=4243, usedGpuMemory=None)],
    }
    gpu.update(over)
    return gpu


def test_several_gpus_are_read_field_by_field() -> None:
    fake = FakeNvml([h200(0), h200(1, 12.5)])
    sampler = NvmlSampler(nvml=fake, clock=lambda: 42.0)
    assert sampler.start() is None
    s = sampler.sample()
    assert s.state == "ok" and s.backend == "nvml" and s.t == 42.0
    assert [g.index for g in s.gpus] == [0, 1]
    g0, g1 = s.gpus
    assert g0.name == g1.name == "NVIDIA H200"
    assert g0.uuid == "GPU-0000"
    assert g0.mem_used == int(70 * GIB) and g1.mem_used == int(12.5 * GIB)
    assert g0.mem_total == int(139.8 * GIB)
    assert (g0.util_gpu, g0.util_mem, g0.temp_c, g0.sm_mhz) == (97.0, 40.0, 61.0, 1980.0)
    assert g0.power_w == pytest.approx(512.345) and g0.power_limit_w == 700.0
    assert [(p.pid, p.used_bytes) for p in g0.processes] == [(4242, int(69 * GIB)), (4243, None)]
    assert g0.error == ""
    # name/uuid are static: read once, not per sample
    sampler.sample()
    assert fake.calls.count("name") == 2 and fake.calls.count("mem") == 4


def test_unsupported_fields_become_none_not_errors() -> None:
    unsupported = nvml_error(pynvml.NVML_ERROR_NOT_SUPPORTED)
    fake = FakeNvml([h200(0, power_mw=unsupported, limit_mw=unsupported, sm=unsupported,
                          procs=nvml_error(pynvml.NVML_ERROR_NO_PERMISSION))])
    sampler = NvmlSampler(nvml=fake)
    assert sampler.start() is None
    (g,) = sampler.sample().gpus
    assert g.power_w is None and g.power_limit_w is None and g.sm_mhz is None
    assert g.processes == ()
    assert g.mem_used == int(70 * GIB) and g.temp_c == 61.0
    assert g.error == ""


def test_one_failing_gpu_is_reported_while_the_others_keep_updating() -> None:
    lost = nvml_error(pynvml.NVML_ERROR_GPU_IS_LOST)
    fake = FakeNvml([h200(0), h200(1, mem=lost, temp=lost, util=lost, power_mw=lost),
                     h200(2, handle_error=nvml_error(pynvml.NVML_ERROR_UNKNOWN))])
    sampler = NvmlSampler(nvml=fake)
    assert sampler.start() is None
    s = sampler.sample()
    assert s.state == "ok"
    ok, failing, no_handle = s.gpus
    assert ok.error == "" and ok.mem_used is not None
    assert "GPU is lost" in failing.error and failing.mem_used is None
    assert failing.name == "NVIDIA H200"  # what is known is still shown
    assert no_handle.error and no_handle.index == 2


def test_all_gpus_failing_is_an_error_state() -> None:
    lost = nvml_error(pynvml.NVML_ERROR_GPU_IS_LOST)
    sampler = NvmlSampler(nvml=FakeNvml([h200(0, mem=lost, temp=lost)]))
    assert sampler.start() is None
    s = sampler.sample()
    assert s.state == "error" and s.error


@pytest.mark.parametrize(
    ("error", "state"),
    [
        (pynvml.NVMLError_LibraryNotFound(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND), "no_driver"),
        (nvml_error(pynvml.NVML_ERROR_DRIVER_NOT_LOADED), "no_driver"),
        (nvml_error(pynvml.NVML_ERROR_NO_PERMISSION), "error"),
    ],
)
def test_init_failures_are_states(error: BaseException, state: str) -> None:
    sampler = NvmlSampler(nvml=FakeNvml([], init_error=error))
    failed = sampler.start()
    assert failed is not None and failed.state == state and failed.error
    assert not sampler.started


async def test_no_driver_source_emits_the_state_once_and_ends() -> None:
    err = pynvml.NVMLError_LibraryNotFound(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)
    events = [e async for e in NvmlSampler(nvml=FakeNvml([], init_error=err)).events()]
    assert len(events) == 1
    assert isinstance(events[0], GpuSample) and events[0].state == "no_driver"


async def test_other_init_errors_are_shown_then_raised_for_a_retry() -> None:
    err = nvml_error(pynvml.NVML_ERROR_NO_PERMISSION)
    sampler = NvmlSampler(nvml=FakeNvml([], init_error=err))
    seen = []
    with pytest.raises(TransportError, match="NVML"):
        async for ev in sampler.events():
            seen.append(ev)
    assert [e.state for e in seen if isinstance(e, GpuSample)] == ["error"]


async def test_source_samples_at_its_interval_and_shuts_nvml_down() -> None:
    fake = FakeNvml([h200(0)])
    sampler = NvmlSampler(nvml=fake, interval=0.01)
    got = []
    gen = sampler.events()
    assert isinstance(gen, AsyncGenerator)
    async with contextlib.aclosing(gen) as events:
        async for ev in events:
            got.append(ev)
            if len(got) == 3:
                break
    assert all(isinstance(e, GpuSample) and e.state == "ok" for e in got)
    assert fake.shutdown


def test_real_pynvml_on_this_machine_without_a_driver() -> None:
    """The real path: this machine has no NVIDIA driver; that must be a state, not a crash."""
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        pass
    else:  # pragma: no cover - only on a GPU machine
        pynvml.nvmlShutdown()
        pytest.skip("an NVIDIA driver is present here; the no-driver path cannot be exercised")
    failed = NvmlSampler().start()
    assert failed is not None
    assert failed.state == "no_driver"
    assert "NVML Shared Library Not Found" in failed.error


# --------------------------------------------------------------------------- nvidia-smi


def fixture_lines() -> tuple[list[str], list[str]]:
    text = (FIXTURES / "nvidia-smi-query.txt").read_text().splitlines()
    nounits = [ln for ln in text[1:3]]
    with_units_start = text.index("--- with header:") + 1
    with_units = text[with_units_start:with_units_start + 3]
    return nounits, with_units


def test_smi_nounits_lines_from_real_h200s() -> None:
    nounits, _ = fixture_lines()
    g0 = parse_smi_line(nounits[0])
    assert g0 == GpuInfo(
        index=0, uuid="GPU-2f351d10-ad9d-9be2-a181-942fc6c6671f", name="NVIDIA H200",
        mem_used=0, mem_total=143771 * MIB, util_gpu=0.0, util_mem=0.0, temp_c=33.0,
        power_w=78.60, power_limit_w=700.0, sm_mhz=345.0,
    )
    g1 = parse_smi_line(nounits[1].encode(), host="gpu-box")
    assert g1 is not None and g1.index == 1 and g1.power_w == 80.53 and g1.host == "gpu-box"


def test_smi_lines_with_units_and_header() -> None:
    _, with_units = fixture_lines()
    assert parse_smi_line(with_units[0]) is None  # the header
    g0 = parse_smi_line(with_units[1])
    assert g0 is not None
    assert g0.mem_total == 143771 * MIB and g0.power_w == 77.66 and g0.sm_mhz == 345.0


def test_smi_not_supported_fields_are_none() -> None:
    g = parse_smi_line("3, GPU-x, Tesla T4, 100, 15360, [N/A], [Not Supported], 40, [N/A], "
                       "70.00, 585")
    assert g is not None
    assert g.util_gpu is None and g.util_mem is None and g.power_w is None
    assert g.mem_used == 100 * MIB


@pytest.mark.parametrize("line", ["garbage", "1, 2, 3", "x, GPU-a, n, 1, 2, 3, 4, 5, 6, 7, 8"])
def test_smi_malformed_lines_raise_value_error(line: str) -> None:
    with pytest.raises(ValueError):
        parse_smi_line(line)


class _LinesTransport:
    host = "gpu-box"

    def __init__(self, lines: list[str], error: BaseException | None = None):
        self.lines = lines
        self.error = error
        self.argv: list[str] = []

    async def stream_lines(self, argv: list[str]) -> AsyncIterator[bytes]:
        self.argv = argv
        for ln in self.lines:
            yield ln.encode()
        if self.error is not None:
            raise self.error


async def test_smi_stream_groups_rounds_into_samples() -> None:
    nounits, _ = fixture_lines()
    tr = _LinesTransport(nounits * 3)
    samples = [s async for s in SmiStream(tr, interval=0.5).events()]  # type: ignore[arg-type]
    assert tr.argv == smi_argv(500)
    assert "-lms" in tr.argv and "--format=csv,noheader,nounits" in tr.argv
    assert len(samples) == 3
    for s in samples:
        assert isinstance(s, GpuSample)
        assert s.backend == "nvidia-smi" and s.host == "gpu-box" and s.state == "ok"
        assert [g.index for g in s.gpus] == [0, 1]


@pytest.mark.parametrize(
    ("lines", "error"),
    [
        ([], CommandNotFound("nvidia-smi: command not found")),
        ([], TransportError("nvidia-smi exited with status 9: NVIDIA-SMI has failed because it "
                            "couldn't communicate with the NVIDIA driver.")),
        (["NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."], None),
    ],
)
async def test_smi_without_a_driver_is_a_state(lines: list[str], error: BaseException | None
                                               ) -> None:
    samples = [s async for s in SmiStream(_LinesTransport(lines, error)).events()]  # type: ignore[arg-type]
    assert len(samples) == 1
    assert isinstance(samples[0], GpuSample) and samples[0].state == "no_driver"


async def test_smi_other_failures_raise_for_a_retry() -> None:
    with pytest.raises(TransportError, match="unexpected nvidia-smi output"):
        [s async for s in SmiStream(_LinesTransport(["what is this"])).events()]  # type: ignore[arg-type]


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="nvidia-smi exists here")
async def test_smi_real_local_transport_without_the_binary() -> None:
    samples = [s async for s in SmiStream(LocalTransport()).events()]
    assert len(samples) == 1
    assert isinstance(samples[0], GpuSample) and samples[0].state == "no_driver"
    assert "not found" in samples[0].error


class FakeNvmlV2(FakeNvml):
    """A driver with the v2 memory call: its ``used`` leaves out the driver's reservation."""

    nvmlMemory_v2 = object()

    def nvmlDeviceGetMemoryInfo(self, h: int, version: object = None) -> Any:
        mem = self._get(h, "mem")
        if version is self.nvmlMemory_v2:
            return SimpleNamespace(used=mem.used - 615 * MIB, total=mem.total)
        return mem


def test_memory_v2_is_preferred_so_numbers_match_nvidia_smi() -> None:
    sampler = NvmlSampler(nvml=FakeNvmlV2([h200(0, used_gib=1.0)]))
    assert sampler.start() is None
    (g,) = sampler.sample().gpus
    assert g.mem_used == GIB - 615 * MIB


def test_process_list_is_refreshed_every_nth_sample() -> None:
    fake = FakeNvml([h200(0)])
    sampler = NvmlSampler(nvml=fake, process_every=3)
    assert sampler.start() is None
    for _ in range(7):
        (g,) = sampler.sample().gpus
        assert len(g.processes) == 2  # cached between refreshes, never empty
    assert fake.calls.count("procs") == 3  # samples 1, 4 and 7
    with pytest.raises(ValueError):
        NvmlSampler(process_every=0)
