"""GPU memory that NCCL's NVLink SHARP (NVLS) buffers take, per GPU and per communicator.

NVLS (NVLink SHARP: the NVSwitch reduces and multicasts) needs staging buffers mapped both as ordinary (unicast)
and as multicast memory. ``ncclNvlsBufferSetup`` (NCCL v2.30.7-1 ``src/transport/nvls.cc`` l. 409-436) allocates,
on every GPU of a communicator that runs NVLS::

    buffSize        = nvlsChunkSize x NCCL_STEPS
    nvlsPerRankSize = nvlsChannels x 2 x buffSize          (one buffer to reduce into, one to broadcast from)
    nvlsTotalSize   = nvlsPerRankSize x nHeads

with ``NCCL_STEPS`` = 8 (``src/include/device.h`` l. 26), ``nvlsChunkSize`` = ``NCCL_NVLS_CHUNKSIZE`` = 128 KiB by
default (``nvls.cc`` l. 160), ``nvlsChannels`` = 16 below compute capability 10.0, 24 from it on one node and 32
across nodes (``NVLS_NCHANNELS_SM90``, ``_SM100_NVL``, ``_SM100``, l. 155-157, ``ncclNvlsTuning`` l. 202-243), and
``nHeads`` the NVLS graph's heads: inside one node NCCL forces one head per GPU (``ncclTopoCompute``,
``src/graph/search.cc`` l. 1126-1137: ``maxChannels = min(NCCL_MAX_NVLS_ARITY, GPUs)``, ``minChannels =
maxChannels``). The buffer is allocated once and mapped twice, so the physical memory is ``nvlsTotalSize``
(rounded up to the multicast granularity, ``nvlsAllocateMem`` l. 304-330). NCCL prints the three sizes at
``NCCL_DEBUG=INFO`` (``NVLS comm ... buffSize ... nvlsPerRankSize ... nvlsTotalSize``).

Each communicator that uses NVLS pays it again: a process with a TP group, a DP group and the world communicator
on the same 8 GPUs may hold three. ``NCCL_NVLS_ENABLE=0`` frees it (and loses NVLS).
Multi-node heads (NVLSTree) depend on the NICs and are not modelled here. Standard library only.
"""

from __future__ import annotations

from gpucomm import GpucommError

__all__ = ["NCCL_STEPS", "NVLS_CHUNK_BYTES", "nvls_buffer_bytes", "nvls_channels", "SOURCE"]

SOURCE = "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/nvls.cc"
"""NCCL v2.30.7-1 ``src/transport/nvls.cc``: ``ncclNvlsTuning`` and ``ncclNvlsBufferSetup``."""
NCCL_STEPS = 8
"""Slots per connection (``src/include/device.h`` l. 26 at v2.30.7-1)."""
NVLS_CHUNK_BYTES = 128 * 1024
"""``NCCL_NVLS_CHUNKSIZE`` default (``src/transport/nvls.cc`` l. 160 at v2.30.7-1)."""
_MAX_NVLS_ARITY = 32  # NCCL_MAX_NVLS_ARITY, src/include/device.h l. 213


def nvls_channels(compute_capability: int, *, num_nodes: int = 1) -> int:
    """NCCL's default number of NVLS channels (``ncclNvlsTuning``, before ``NCCL_NVLS_NCHANNELS`` or the config).

    Parameters
    ----------
    compute_capability : int
        90 for Hopper, 100 for Blackwell.
    num_nodes : int
        Nodes in the communicator, >= 1.

    Returns
    -------
    int
        16 below compute capability 10.0; from 10.0, 24 on one node and 32 across nodes. (NCCL may retune the
        multi-node Blackwell case from the NIC bandwidth, ``ncclNvlsTreeSm100Tuning``; not modelled.)

    Raises
    ------
    GpucommError
        For NVLS's absence below compute capability 9.0, or a bad node count.

    Examples
    --------
    >>> nvls_channels(90), nvls_channels(100), nvls_channels(100, num_nodes=2)
    (16, 24, 32)
    """
    if not isinstance(compute_capability, int) or compute_capability < 90:
        raise GpucommError(f"NVLS needs compute capability 9.0 or newer (an integer such as 90), got {compute_capability!r}")
    if not isinstance(num_nodes, int) or num_nodes < 1:
        raise GpucommError(f"num_nodes must be a positive integer, got {num_nodes!r}")
    if compute_capability < 100:
        return 16
    return 24 if num_nodes == 1 else 32


def nvls_buffer_bytes(compute_capability: int, local_ranks: int, *, chunk_bytes: int = NVLS_CHUNK_BYTES,
                      channels: int | None = None) -> int:
    """Bytes of NVLS buffer one GPU holds for one single-node communicator.

    Parameters
    ----------
    compute_capability : int
        90 for Hopper, 100 for Blackwell.
    local_ranks : int
        GPUs of the communicator in the NVLink domain (the heads, one per GPU), 2 to 32.
    chunk_bytes : int
        ``NCCL_NVLS_CHUNKSIZE``, bytes (default 128 KiB).
    channels : int, optional
        ``NCCL_NVLS_NCHANNELS``; default :func:`nvls_channels`.

    Returns
    -------
    int
        ``heads x channels x 2 x chunk_bytes x NCCL_STEPS`` (``ncclNvlsBufferSetup``), bytes, before the rounding
        to the multicast granularity (2 MiB on the systems NCCL aligns to, ``NVLS_MEM_ALIGN_SIZE``).

    Raises
    ------
    GpucommError
        For a value out of range.

    Examples
    --------
    >>> nvls_buffer_bytes(90, 8) // 2**20   # 8x H100: NCCL logs nvlsTotalSize 268435456
    256
    """
    if not isinstance(local_ranks, int) or not 2 <= local_ranks <= _MAX_NVLS_ARITY:
        raise GpucommError(f"local_ranks must be an integer from 2 to {_MAX_NVLS_ARITY}, got {local_ranks!r}")
    if not isinstance(chunk_bytes, int) or chunk_bytes <= 0:
        raise GpucommError(f"chunk_bytes must be a positive integer, got {chunk_bytes!r}")
    n_channels = nvls_channels(compute_capability) if channels is None else channels
    if not isinstance(n_channels, int) or n_channels <= 0:
        raise GpucommError(f"channels must be a positive integer, got {channels!r}")
    return local_ranks * n_channels * 2 * chunk_bytes * NCCL_STEPS
