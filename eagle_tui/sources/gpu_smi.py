"""GPU samples from a streamed ``nvidia-smi --query-gpu ... -lms N`` (remote, demo, fallback).

Split from :mod:`eagle_tui.sources.gpu` (which re-exports these names): one ``nvidia-smi``
process costs tens of milliseconds (docs/gpu.md), which is why the fallback streams it with
``-lms`` instead of spawning one per sample.
 A field the GPU or driver does not support becomes ``None``; no driver (no binary,
or nvidia-smi saying it cannot talk to one) is a ``no_driver`` sample, after which the source
ends.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable

from eagle_tui.model.events import Event, GpuInfo, GpuSample
from eagle_tui.transport.base import CommandNotFound, Transport, TransportError

MIB = 1 << 20
DEFAULT_INTERVAL_S = 1.0

SMI_FIELDS = (
    "index,uuid,name,memory.used,memory.total,utilization.gpu,utilization.memory,"
    "temperature.gpu,power.draw,power.limit,clocks.sm"
)
_NO_DRIVER_TEXTS = (
    "couldn't communicate with the nvidia driver",
    "nvml shared library not found",
    "driver not loaded",
    "no devices were found",
)


def smi_argv(interval_ms: int) -> list[str]:
    return [
        "nvidia-smi",
        f"--query-gpu={SMI_FIELDS}",
        "--format=csv,noheader,nounits",
        "-lms",
        str(interval_ms),
    ]


# --------------------------------------------------------------------------- nvidia-smi CSV


def _num(text: str) -> float | None:
    """``"78.60"``, ``"78.60 W"``, ``"[N/A]"``, ``"[Not Supported]"`` → float or None."""
    t = text.strip()
    if not t or t.startswith("[") or t.upper() in ("N/A", "NOT SUPPORTED"):
        return None
    t = t.split()[0]
    try:
        return float(t)
    except ValueError:
        return None


def parse_smi_line(line: str | bytes, host: str = "") -> GpuInfo | None:
    """One CSV line of ``nvidia-smi --query-gpu=<SMI_FIELDS>`` → ``GpuInfo``.

    Accepts ``nounits`` and unit-suffixed values. Returns ``None`` for the header line and blank
    lines; raises ``ValueError`` for a line that is not this query's output.
    """
    if isinstance(line, bytes):
        line = line.decode("utf-8", "replace")
    line = line.strip()
    if not line or line.lower().startswith("index"):
        return None
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != 11:
        raise ValueError(f"expected 11 comma-separated fields, got {len(parts)}: {line[:120]!r}")
    try:
        index = int(parts[0])
    except ValueError:
        raise ValueError(f"GPU index is not a number: {parts[0]!r}") from None
    used, total = _num(parts[3]), _num(parts[4])
    return GpuInfo(
        index=index,
        uuid=parts[1],
        name=parts[2],
        mem_used=int(used * MIB) if used is not None else None,
        mem_total=int(total * MIB) if total is not None else None,
        util_gpu=_num(parts[5]),
        util_mem=_num(parts[6]),
        temp_c=_num(parts[7]),
        power_w=_num(parts[8]),
        power_limit_w=_num(parts[9]),
        sm_mhz=_num(parts[10]),
        host=host,
    )


class SmiStream:
    """Source of ``GpuSample`` from one long-running ``nvidia-smi ... -lms N`` (any transport).

    nvidia-smi prints one line per GPU per interval with no separator, so rounds are found by
    the index going back down; once the GPU count is known, a round is emitted as soon as its
    last line arrives (the very first round is emitted when the second begins).
    """

    def __init__(
        self,
        transport: Transport,
        *,
        interval: float = DEFAULT_INTERVAL_S,
        name: str = "gpu",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name = name
        self.transport = transport
        self.interval_ms = max(50, int(interval * 1000))
        self._clock = clock
        self.count: int | None = None

    def _sample(self, gpus: list[GpuInfo]) -> GpuSample:
        return GpuSample(self._clock(), "ok", tuple(gpus), host=self.transport.host,
                         backend="nvidia-smi")

    async def events(self) -> AsyncIterator[Event]:
        host = self.transport.host
        current: list[GpuInfo] = []
        try:
            async for raw in self.transport.stream_lines(smi_argv(self.interval_ms)):
                try:
                    info = parse_smi_line(raw, host)
                except ValueError as exc:
                    text = raw.decode("utf-8", "replace").lower()
                    if any(s in text for s in _NO_DRIVER_TEXTS):
                        yield self._no_driver(raw.decode("utf-8", "replace").strip())
                        return
                    raise TransportError(f"unexpected nvidia-smi output: {exc}") from None
                if info is None:
                    continue
                if current and info.index <= current[-1].index:
                    self.count = len(current)
                    yield self._sample(current)
                    current = []
                current.append(info)
                if self.count is not None and len(current) >= self.count:
                    yield self._sample(current)
                    current = []
        except CommandNotFound:
            yield self._no_driver("nvidia-smi not found")
            return
        except TransportError as exc:
            if any(s in str(exc).lower() for s in _NO_DRIVER_TEXTS):
                yield self._no_driver(str(exc))
                return
            raise
        if current:
            yield self._sample(current)

    def _no_driver(self, why: str) -> GpuSample:
        return GpuSample(self._clock(), "no_driver", (), error=why, host=self.transport.host,
                         backend="nvidia-smi")


__all__ = ["DEFAULT_INTERVAL_S", "MIB", "SMI_FIELDS", "SmiStream", "parse_smi_line", "smi_argv"]
