"""GPU samples from NVML (local) or a streamed ``nvidia-smi -lms`` (remote, demo, fallback).

Rules taken from nvitop/gpustat: every field is read on its own and a field the GPU or driver
does not support becomes ``None`` ("N/A" in the UI), never an exception; one GPU that fails (fell
off the bus, ``GPU is lost``) is reported in its own ``GpuInfo.error`` while the others keep
updating; no driver at all (``NVMLError_LibraryNotFound``, no ``nvidia-smi`` binary) is a state,
``GpuSample(state="no_driver")``, shown to the user once, after which the source ends.

An NVML call costs microseconds, one ``nvidia-smi`` process tens of milliseconds, which is why
the fallback streams it with ``-lms`` instead of spawning one per sample
(``sources/gpu_smi.py``, re-exported here). ``benchmarks/bench_nvml.py`` measures both; the
runs are in docs/gpu.md.

More in docs/architecture.md, "Module notes", ``sources/gpu``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

from eagle_tui.model.buffers.gpuhistory import MEMORY_STEP as GPU_MEMORY_STEP
from eagle_tui.model.events import Event, GpuInfo, GpuProcess, GpuSample, GpuState
from eagle_tui.model.views.ticks import grid_due
from eagle_tui.sources.gpu_smi import (
    DEFAULT_INTERVAL_S,
    MIB,
    SMI_FIELDS,
    SmiStream,
    parse_smi_line,
    smi_argv,
)
from eagle_tui.transport.base import TransportError

MEMORY_INTERVAL_S = 0.1  # memory-only reads between full samples
MEMORY_STEP = GPU_MEMORY_STEP  # a move this large is emitted at once (the pane: 0.1 GiB steps)
# The compute-process list is the one expensive call (more so on a busy GPU): at a full sample
# a second it is read with every one, so it is never older than the memory shown.
PROCESS_EVERY = 1

# --------------------------------------------------------------------------- NVML


def _load_pynvml() -> Any:
    import pynvml

    return pynvml


class NvmlSampler:
    """Reads every GPU through NVML. ``nvml`` is the pynvml module (injectable for tests).

    Use :meth:`start` once, then :meth:`sample` per tick (both synchronous and fast); or run it
    as a source with :meth:`events`.
    """

    def __init__(
        self,
        *,
        nvml: Any = None,
        interval: float = DEFAULT_INTERVAL_S,
        memory_interval: float | None = MEMORY_INTERVAL_S,
        memory_step: int = MEMORY_STEP,
        processes: bool = True,
        process_every: int = PROCESS_EVERY,
        name: str = "gpu",
        clock: Callable[[], float] = time.time,
    ) -> None:
        if process_every < 1:
            raise ValueError("process_every must be >= 1")
        self.name = name
        self.interval = interval
        # None (or not shorter than the interval): full samples only
        self.memory_interval = memory_interval if memory_interval and \
            memory_interval < interval else None
        self.step_bytes = memory_step
        self.processes = processes
        self.process_every = process_every
        self._reads: dict[int, int] = {}  # index -> reads so far (process list cadence)
        self._procs: dict[int, tuple[GpuProcess, ...]] = {}
        self._mem_v2: bool | None = None  # None: not tried yet
        self._nvml = nvml
        self._clock = clock
        self._handles: list[Any] = []
        self._static: dict[int, tuple[str, str]] = {}  # index -> (name, uuid)
        self._pnames: dict[int, str] = {}
        self.started = False

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> GpuSample | None:
        """``nvmlInit`` and enumerate GPUs; a ``no_driver``/``error`` sample if that fails."""
        try:
            nv = self._nvml if self._nvml is not None else _load_pynvml()
        except ImportError:
            return GpuSample(self._clock(), "no_driver", error="nvidia-ml-py is not installed",
                             backend="nvml")
        self._nvml = nv
        try:
            nv.nvmlInit()
        except nv.NVMLError as exc:
            state: GpuState = "no_driver" if self._is_no_driver(exc) else "error"
            return GpuSample(self._clock(), state, error=self._text(exc), backend="nvml")
        except OSError as exc:  # a broken libnvidia-ml.so that fails to load
            return GpuSample(self._clock(), "no_driver", error=str(exc), backend="nvml")
        self.started = True
        try:
            count = int(nv.nvmlDeviceGetCount())
        except nv.NVMLError as exc:
            return GpuSample(self._clock(), "error", error=self._text(exc), backend="nvml")
        self._handles = []
        for i in range(count):
            try:
                self._handles.append(nv.nvmlDeviceGetHandleByIndex(i))
            except nv.NVMLError as exc:
                self._handles.append(exc)  # reported per GPU in every sample
        return None

    def stop(self) -> None:
        if self.started and self._nvml is not None:
            with contextlib.suppress(Exception):
                self._nvml.nvmlShutdown()
        self.started = False

    def _is_no_driver(self, exc: BaseException) -> bool:
        nv = self._nvml
        kinds = tuple(
            getattr(nv, n) for n in ("NVMLError_LibraryNotFound", "NVMLError_DriverNotLoaded")
            if isinstance(getattr(nv, n, None), type)
        )
        return isinstance(exc, kinds)

    @staticmethod
    def _text(exc: BaseException) -> str:
        try:
            text = str(exc)
        except Exception:  # pynvml's __str__ itself calls into NVML
            text = ""
        return text or type(exc).__name__

    # ------------------------------------------------------------------ sampling
    def _field(self, fn: Callable[..., Any], *args: Any) -> Any:
        """One NVML call; ``None`` when unsupported or failing (the N/A rule)."""
        try:
            return fn(*args)
        except self._nvml.NVMLError:
            return None

    @staticmethod
    def _str(v: Any) -> str:
        return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)

    def _process_name(self, pid: int) -> str:
        name = self._pnames.get(pid)
        if name is None:
            try:
                import psutil

                name = psutil.Process(pid).name()
            except Exception:  # gone, other namespace, no permission: no name, not an error
                name = ""
            if len(self._pnames) > 4096:
                self._pnames.clear()
            self._pnames[pid] = name
        return name

    def _memory(self, handle: Any) -> Any:
        """Memory info, v2 when the driver has it: its ``used`` excludes the driver's reserved
        memory, so the numbers match what ``nvidia-smi`` (and the remote fallback) show."""
        nv = self._nvml
        if self._mem_v2 is not False and hasattr(nv, "nvmlMemory_v2"):
            try:
                mem = nv.nvmlDeviceGetMemoryInfo(handle, version=nv.nvmlMemory_v2)
                self._mem_v2 = True
                return mem
            except (nv.NVMLError, TypeError):
                if self._mem_v2 is None:
                    self._mem_v2 = False  # never worked here: stop trying
                else:
                    return None
        return self._field(nv.nvmlDeviceGetMemoryInfo, handle)

    def read_gpu(self, index: int, handle: Any) -> GpuInfo:
        nv = self._nvml
        if isinstance(handle, BaseException):
            return GpuInfo(index=index, error=self._text(handle))
        if index not in self._static:
            name = self._field(nv.nvmlDeviceGetName, handle)
            uuid = self._field(nv.nvmlDeviceGetUUID, handle)
            self._static[index] = (self._str(name) if name is not None else "",
                                   self._str(uuid) if uuid is not None else "")
        name, uuid = self._static[index]
        mem = self._memory(handle)
        if mem is None and self._field(nv.nvmlDeviceGetTemperature, handle,
                                       nv.NVML_TEMPERATURE_GPU) is None:
            # nothing answers: the GPU itself is failing, say so instead of a row of N/A
            try:
                nv.nvmlDeviceGetMemoryInfo(handle)
                err = "no data"
            except nv.NVMLError as exc:
                err = self._text(exc)
            return GpuInfo(index=index, name=name, uuid=uuid, error=err)
        util = self._field(nv.nvmlDeviceGetUtilizationRates, handle)
        power = self._field(nv.nvmlDeviceGetPowerUsage, handle)
        limit = self._field(nv.nvmlDeviceGetEnforcedPowerLimit, handle)
        temp = self._field(nv.nvmlDeviceGetTemperature, handle, nv.NVML_TEMPERATURE_GPU)
        sm = self._field(nv.nvmlDeviceGetClockInfo, handle, nv.NVML_CLOCK_SM)
        procs: tuple[GpuProcess, ...] = ()
        if self.processes:
            reads = self._reads.get(index, 0)
            self._reads[index] = reads + 1
            if reads % self.process_every == 0 or index not in self._procs:
                self._read_processes(index, handle)
            procs = self._procs[index]
        return GpuInfo(
            index=index,
            name=name,
            uuid=uuid,
            mem_used=int(mem.used) if mem is not None else None,
            mem_total=int(mem.total) if mem is not None else None,
            util_gpu=float(util.gpu) if util is not None else None,
            util_mem=float(util.memory) if util is not None else None,
            power_w=power / 1000.0 if power is not None else None,
            power_limit_w=limit / 1000.0 if limit is not None else None,
            temp_c=float(temp) if temp is not None else None,
            sm_mhz=float(sm) if sm is not None else None,
            processes=procs,
        )

    def _read_processes(self, index: int, handle: Any) -> None:
        running = self._field(self._nvml.nvmlDeviceGetComputeRunningProcesses, handle) or []
        self._procs[index] = tuple(
            GpuProcess(
                int(p.pid),
                self._process_name(int(p.pid)),
                int(p.usedGpuMemory) if isinstance(p.usedGpuMemory, int) else None,
            )
            for p in running
        )

    def memory_step(self, last: GpuSample) -> GpuSample | None:
        """A sample with every GPU's memory read now, when one moved by ``step_bytes`` or more
        since ``last`` (the last sample emitted); else ``None``. The process lists are read
        again for it; the other fields are ``last``'s."""
        if last.state != "ok":
            return None
        read: list[tuple[GpuInfo, Any, Any]] = []
        moved = False
        for g in last.gpus:
            handle = self._handles[g.index] if g.index < len(self._handles) else None
            if handle is None or isinstance(handle, BaseException) or g.error:
                read.append((g, None, None))
                continue
            mem = self._memory(handle)
            read.append((g, handle, mem))
            if mem is not None and (g.mem_used is None
                                    or abs(int(mem.used) - g.mem_used) >= self.step_bytes):
                moved = True
        if not moved:
            return None
        gpus = []
        for g, handle, mem in read:
            if mem is None:
                gpus.append(g)
                continue
            procs = g.processes
            if self.processes:
                self._read_processes(g.index, handle)
                procs = self._procs[g.index]
            gpus.append(replace(g, mem_used=int(mem.used), mem_total=int(mem.total),
                                processes=procs))
        return GpuSample(self._clock(), "ok", tuple(gpus), backend="nvml")

    def sample(self) -> GpuSample:
        if not self.started:
            raise RuntimeError("NvmlSampler.sample() before a successful start()")
        gpus = tuple(self.read_gpu(i, h) for i, h in enumerate(self._handles))
        state: GpuState = "error" if gpus and all(g.error for g in gpus) else "ok"
        error = "every GPU failed to answer" if state == "error" else ""
        return GpuSample(self._clock(), state, gpus, error=error, backend="nvml")

    async def events(self) -> AsyncIterator[Event]:
        failed = await asyncio.to_thread(self.start)
        if failed is not None:
            yield failed
            if failed.state == "no_driver":
                return  # a state, not a failure: nothing to retry
            raise TransportError(f"NVML: {failed.error}")
        loop = asyncio.get_running_loop()
        try:
            while True:
                due = grid_due(loop.time(), self.interval)  # (with the log's reads)
                last = self.sample()
                yield last
                while self.memory_interval is not None and \
                        due - loop.time() > self.memory_interval:
                    await asyncio.sleep(self.memory_interval)
                    step = self.memory_step(last)
                    if step is not None:
                        last = step
                        yield step
                await asyncio.sleep(max(0.0, due - loop.time()))
        finally:
            self.stop()



class GpuOff:
    """Says once that GPU sampling is off (``--gpu none``), so the pane does not wait for data
    that will never come."""

    name = "gpu off"

    async def events(self) -> AsyncIterator[Event]:
        yield GpuSample(time.time(), "off", error="GPU sampling is off (--gpu none)")


__all__ = ["MIB", "SMI_FIELDS", "GpuOff", "NvmlSampler", "SmiStream", "parse_smi_line", "smi_argv"]
