"""Small, exact text formats shared by both engines' logs: tqdm bars, timestamps, torch errors.

Each function reproduces a format a real server prints byte for byte (tqdm's ``format_meter``
conventions, PyTorch's CUDA OOM message, c10d's NCCL watchdog lines), because the parsers this
simulator exists to exercise are written against those exact strings.
"""

from __future__ import annotations

import time

_PARTIAL = " ▏▎▍▌▋▊▉"


def tqdm_clock(seconds: float) -> str:
    """tqdm's ``format_interval``: ``mm:ss`` below an hour, ``h:mm:ss`` above."""
    s = int(max(0.0, seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h:d}:{m:02d}:{sec:02d}" if h else f"{m:02d}:{sec:02d}"


def tqdm_rate(n: int, elapsed: float) -> str:
    """``1.95it/s`` or, below one item per second, ``3.12s/it`` (tqdm's ``{0:5.2f}`` width)."""
    if n <= 0 or elapsed <= 0:
        return "?it/s"
    rate = n / elapsed
    if rate < 1.0:
        return f"{1.0 / rate:5.2f}s/it"
    return f"{rate:5.2f}it/s"


def _times(n: int, total: int, elapsed: float) -> str:
    if n <= 0 or elapsed <= 0:
        return f"[{tqdm_clock(elapsed)}<?, ?it/s]"
    remaining = elapsed / n * (total - n)
    return f"[{tqdm_clock(elapsed)}<{tqdm_clock(remaining)}, {tqdm_rate(n, elapsed)}]"


def shard_bar(desc: str, n: int, total: int, elapsed: float) -> str:
    """The weight loaders' bar (``_BAR_FORMAT``, identical in SGLang and vLLM)."""
    pct = 100.0 * n / total if total else 100.0
    return f"{desc}: {pct:3.0f}% Completed | {n}/{total} {_times(n, total, elapsed)}"


def block_bar(desc: str, n: int, total: int, elapsed: float, width: int = 10) -> str:
    """A default tqdm bar: ``desc:  50%|█████     | 7/14 [00:02<00:02,  3.21it/s]``."""
    frac = n / total if total else 1.0
    filled = frac * width
    full = int(filled)
    bar = "█" * full
    if full < width:
        bar += _PARTIAL[int((filled - full) * len(_PARTIAL))]
        bar += " " * (width - full - 1)
    return f"{desc}: {100 * frac:3.0f}%|{bar}| {n}/{total} {_times(n, total, elapsed)}"


def sglang_time(epoch: float) -> str:
    """SGLang's logger datefmt ``%Y-%m-%d %H:%M:%S`` (local time, no zone)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def vllm_time(epoch: float) -> str:
    """vLLM's ``_DATE_FORMAT`` ``%m-%d %H:%M:%S`` (no year)."""
    return time.strftime("%m-%d %H:%M:%S", time.localtime(epoch))


def c10d_time(epoch: float) -> str:
    """PyTorch c10 logging's ``E1130 10:02:11.482913021`` (month, day, time, nanoseconds)."""
    ns = int((epoch % 1.0) * 1e9)
    return time.strftime("%m%d %H:%M:%S", time.localtime(epoch)) + f".{ns:09d}"


def torch_oom(gpu: int, tried_gib: float, total_gib: float, free_gib: float,
              reserved_mib: float) -> str:
    """The exact ``torch.OutOfMemoryError`` text of torch 2.x (fixtures/nvml/torch-cuda-oom.txt)."""
    in_use = total_gib - free_gib
    allocated = in_use - reserved_mib / 1024 - 0.55
    return (
        f"CUDA out of memory. Tried to allocate {tried_gib:.2f} GiB. GPU {gpu} has a total "
        f"capacity of {total_gib:.2f} GiB of which {free_gib:.2f} GiB is free. Including "
        f"non-PyTorch memory, this process has {in_use:.2f} GiB memory in use. Of the allocated "
        f"memory {allocated:.2f} GiB is allocated by PyTorch, and {reserved_mib:.2f} MiB is "
        "reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
        "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
        "documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/"
        "cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"
    )


def nccl_timeout_text(rank: int, timeout_ms: int) -> str:
    """The exception text c10d's watchdog raises (and vLLM relays as the worker's error)."""
    return (f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}] Process group watchdog thread "
            f"terminated with exception: [Rank {rank}] Watchdog caught collective operation "
            f"timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
            f"Timeout(ms)={timeout_ms}) ran for {timeout_ms + 43} milliseconds before timing out.")


def nccl_watchdog(rank: int, epoch: float, timeout_ms: int) -> list[str]:
    """What c10d's ProcessGroupNCCL watchdog prints when a collective never completes.

    The process then aborts (``std::terminate``), so no Python traceback follows these lines.
    """
    pg = f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}]"
    full = nccl_timeout_text(rank, timeout_ms)
    caught = full.split("exception: ", 1)[1]
    tag = f"[rank{rank}]:[E{c10d_time(epoch)} ProcessGroupNCCL.cpp"
    return [
        f"{tag}:685] {caught}",
        f"{tag}:2252] {pg}  failure detected by watchdog at work sequence id: 1 PG status: "
        "last enqueued work: 1, last completed work: -1",
        f"{tag}:732] Stack trace of the failed collective not found, potentially because "
        "FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE "
        "to a non-zero value.",
        f"{tag}:746] [Rank {rank}] Some NCCL operations have failed or timed out. Due to the "
        "asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
        "corrupted/incomplete data.",
        f"{tag}:760] [Rank {rank}] To avoid data inconsistency, we are taking the entire "
        "process down.",
        f"{tag}:2068] {full}",
        "terminate called after throwing an instance of 'c10::DistBackendError'",
        f"  what():  {full}",
    ]


NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                "seventeen", "eighteen", "nineteen")
TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def number_tokens(n: int) -> list[str]:
    """Word tokens for ``n`` (1..999) the way the tiny counting model of tests/realserver emits
    them: ``[" six", " hundred", " five", ","]``. Used as the simulated completion text."""
    words: list[str] = []
    hundreds, rest = divmod(n % 1000, 100)
    if hundreds:
        words += [NUMBER_WORDS[hundreds], "hundred"]
    if rest >= 20:
        tens, ones = divmod(rest, 10)
        words.append(TENS[tens - 2] + (f"-{NUMBER_WORDS[ones]}" if ones else ""))
    elif rest or not words:
        words.append(NUMBER_WORDS[rest])
    return [" " + w for w in words] + [","]
