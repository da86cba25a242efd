"""Checks that a measurement fits this machine before any buffer is allocated or rank started.

A typo such as ``-e 64T`` must end in one clear line, not in the out-of-memory killer; a rank count
far above the CPU cores measures the scheduler, not the interconnect. torch is imported lazily.
"""

from __future__ import annotations

import os

from gpucomm import GpucommError
from gpucomm.model.units import format_size

HEADROOM = 0.8
"""Use at most this share of the available memory (the OS, Python and torch need the rest)."""


def available_host_bytes() -> int:
    """Memory available to new allocations on this host, in bytes (``MemAvailable`` in /proc/meminfo)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def available_device_bytes(device: int = 0) -> int:
    """Free memory on CUDA device ``device``, in bytes (``torch.cuda.mem_get_info``)."""
    import torch

    return int(torch.cuda.mem_get_info(device)[0])


def check_fits_memory(need_bytes: float, *, where: str, available_bytes: int, flag: str, max_bytes: int,
                      copies: float) -> None:
    """Raise if ``need_bytes`` exceeds :data:`HEADROOM` of ``available_bytes``.

    Parameters
    ----------
    need_bytes : float
        Bytes the run will allocate at its largest size.
    where : str
        ``"host memory"`` or ``"GPU 0"``, for the message.
    available_bytes : int
        What is free there.
    flag : str
        The flag that sets the size (``"-e"``), for the message.
    max_bytes : int
        The largest size asked for.
    copies : float
        ``need_bytes / max_bytes``: how many buffers of the largest size are held at once.

    Raises
    ------
    GpucommError
        Naming the size, the need, what is available and the largest size that would fit.
    """
    budget = HEADROOM * available_bytes
    if need_bytes > budget:
        largest = 1 << max(int(budget / copies).bit_length() - 1, 0)
        raise GpucommError(
            f"maximum size {flag} {format_size(max_bytes)} needs about {format_size(need_bytes)} of {where} "
            f"({copies:g} buffers of that size), but {format_size(available_bytes)} is available: "
            f"expected {flag} at most {format_size(largest)}")


def check_local_ranks(num_ranks: int, backend: str) -> None:
    """Refuse gloo rank counts far above the CPU cores (each rank is a busy process).

    Raises
    ------
    GpucommError
        If ``backend`` is gloo and ``num_ranks`` exceeds ``max(8, 4 x cores)``.
    """
    cores = os.cpu_count() or 1
    limit = max(8, 4 * cores)
    if backend == "gloo" and num_ranks > limit:
        raise GpucommError(f"{num_ranks} gloo ranks on {cores} CPU cores: expected at most {limit} "
                           "(more ranks than that measure the scheduler, not the interconnect)")
