"""The named terms of a collective's cost: NCCL's estimate, made continuous in size, and each correction the model adds.

:func:`gpucomm.model.cost.collective_cost` reports ``time_s`` as the sum of the terms of
:attr:`~gpucomm.model.cost.CollectiveCost.terms`. Every term here is a small function of the message size that is
continuous in it (one byte more never moves it by a step) and returns seconds:

============================ ==================================================================================
``nccl_latency``             NCCL's tuner latency of the (algorithm, protocol) (``tuning.cc``), its across-nodes
                             Ring/Simple "plateau" factor ramped in (:func:`nccl_latency_s`)
``nccl_bandwidth``           NCCL's ``nBytes / bw``, its Tree correction factor interpolated between NCCL's
                             power-of-two buckets (:func:`nccl_bandwidth_s`)
``transport_latency``        the fitted latency scale of the hops' transport, minus NCCL's own
                             (:data:`~gpucomm.model.hardware.calibration.TUNER_LATENCY_SCALE`)
``delivered_bandwidth``      the links deliver nominal x measured efficiency, not the bandwidth NCCL plans with
``channel_ramp``             a small message runs on fewer channels than NCCL's estimate assumes
                             (:func:`continuous_channels`)
``pipeline_fill``            NVLS's first chunks go up to the switch and back before every stage is busy; a
                             ring's Simple steps over NVLink 3 each wait a share of a step (:func:`ring_fill_s`;
                             the same for every transport was fitted to zero, and removed)
``cut_through``              LL's ring steps move their data while their latency elapses (negative)
``launch``                   the host's launch of one call (:data:`~gpucomm.model.hardware.calibration.LAUNCH_S`)
``host_floor``               what one host thread driving several GPUs adds above the GPUs' time
============================ ==================================================================================

The algorithms NCCL does not run have ``alpha_beta_latency`` and ``alpha_beta_bandwidth``; all_to_all and
send_recv inside a node ``p2p_latency``, ``transport_latency`` and ``p2p_transfer``.

Where NCCL's own estimate steps (the Tree correction per power of two of the size, the plateau factor at 64 bytes
per rank and channel, the channel count NCCL rounds down), NCCL uses the step to *choose*; the time a GPU takes does
not jump there (the bundled sweeps rise smoothly through those sizes), so the terms follow NCCL through the step
points and join them continuously. NCCL's stepped estimate stays in ``CollectiveCost.nccl_time_s`` and
``alternatives``.

These functions define the terms. :func:`gpucomm.model.cost.collective_cost` prices about seven (algorithm, protocol)
pairs per call, so it computes what does not depend on the size once per communicator and does each pair's
size-dependent arithmetic inline, in the order these functions do it; ``tests/model/test_cost_fast_path.py`` checks
that the two agree to the bit, term by term.
"""

from __future__ import annotations

import math

from gpucomm.model import nccl_tuner as nt
from gpucomm.model.hardware import calibration as cal

__all__ = ["tree_correction_factor", "nccl_latency_s", "nccl_bandwidth_s", "continuous_channels",
           "nvls_fill_s", "ring_fill_s", "host_floor_s"]


def tree_correction_factor(protocol: str, nccl_bytes: float, *, last_index: int = 22) -> float:
    """NCCL's Tree all_reduce bandwidth factor (``treeCorrectionFactor``, ``tuning.cc:620-627``), continuous in size.

    NCCL reads ``treeCorrectionFactor[p][log2(nBytes / 64)]`` for ``0 <= log2(nBytes/64) <= last_index`` and 1.0
    outside, a step at every power of two. This returns NCCL's value at every power of two of ``nBytes / 64`` and
    interpolates linearly in ``log2(nBytes / 64)`` between them (from 1.0 at 32 B to the first entry at 64 B, and from
    the last entry to 1.0 one power of two later).

    Parameters
    ----------
    protocol : {"LL", "LL128", "Simple"}
        NCCL protocol.
    nccl_bytes : float
        NCCL's byte count (:func:`gpucomm.model.nccl_tuner.nccl_bytes`), >= 0.
    last_index : int
        The last bucket NCCL reads: 22 for Tree (``logSize < 23``), 23 for NVLS Tree (``logSize < 24``).

    Returns
    -------
    float
        A factor in (0, 1] that multiplies NCCL's bandwidth.

    Examples
    --------
    >>> tree_correction_factor("Simple", 64 * 2**14), tree_correction_factor("Simple", 64 * 2**14 * 2**0.5)
    (0.5, 0.55)
    """
    table = nt.TREE_CORRECTION_FACTOR[protocol]

    def at(i: int) -> float:
        return table[i] if 0 <= i <= last_index else 1.0

    if nccl_bytes <= 32:
        return 1.0
    x = math.log2(nccl_bytes / 64)
    i = math.floor(x)
    frac = x - i
    return at(i) + (at(i + 1) - at(i)) * frac


def nccl_latency_s(comm: nt.Comm, table: nt.TunerTable, collective: str, algorithm: str, protocol: str,
                   nccl_bytes: float) -> float:
    """NCCL's latency of one (algorithm, protocol), in s: the tuner table's, with the Ring plateau factor ramped in.

    Parameters
    ----------
    comm, table
        The communicator and its :func:`~gpucomm.model.nccl_tuner.tuner_table`.
    collective, algorithm, protocol : str
        NCCL names.
    nccl_bytes : float
        NCCL's byte count, >= 0.

    Returns
    -------
    float
        ``table.latency_s``; for Ring/Simple all_reduce across nodes NCCL multiplies it by
        :data:`~gpucomm.model.nccl_tuner.RING_PLATEAU_FACTOR` once each rank's share of a channel reaches 64 bytes
        (``tuning.cc:647-650``); here the factor grows linearly from 1 at 0 bytes to NCCL's value at 64 bytes, so the
        two agree from 64 bytes on.
    """
    lat = table.latency_s[(collective, algorithm, protocol)]
    if algorithm == "ring" and protocol == "Simple" and comm.num_nodes > 1 and collective == "all_reduce":
        factor = nt.RING_PLATEAU_FACTOR["pre_ampere" if comm.compute_capability < 80 else "ampere_and_later"]
        share = nccl_bytes / (comm.num_channels * comm.num_ranks)
        lat *= 1 + (factor - 1) * min(1.0, share / 64)
    return lat


def nccl_bandwidth_s(comm: nt.Comm, table: nt.TunerTable, collective: str, algorithm: str, protocol: str,
                     nccl_bytes: float) -> float:
    """NCCL's bandwidth term ``nBytes / bw`` of one (algorithm, protocol), in s, continuous in size.

    Parameters
    ----------
    comm, table
        The communicator and its :func:`~gpucomm.model.nccl_tuner.tuner_table`.
    collective, algorithm, protocol : str
        NCCL names; the pair must be enabled (a bandwidth in the table).
    nccl_bytes : float
        NCCL's byte count, >= 0.

    Returns
    -------
    float
        ``nBytes / bw`` with the Tree (and, on Blackwell x86 hosts, NVLS Tree) all_reduce correction factor of
        :func:`tree_correction_factor`: equal to NCCL's at every power of two of ``nBytes / 64``.
    """
    bw = table.bw_bytes_per_s[(collective, algorithm, protocol)]
    if collective == "all_reduce" and algorithm == "tree":
        bw *= tree_correction_factor(protocol, nccl_bytes, last_index=22)
    elif (collective == "all_reduce" and algorithm == "nvls_tree" and comm.compute_capability >= 100
          and comm.cpu_arch == "x86"):
        bw *= tree_correction_factor(protocol, nccl_bytes, last_index=23)
    return nccl_bytes / bw


def continuous_channels(comm: nt.Comm, table: nt.TunerTable, algorithm: str, protocol: str, nccl_bytes: float) -> float:
    """Channels a Ring or Tree call runs on, as a continuous function of size (NCCL's count without its rounding down).

    NCCL drops channels while ``nBytes < nc x nThreads x threadThreshold`` (``topoGetAlgoInfo``,
    :func:`~gpucomm.model.nccl_tuner.channels_and_threads`): it runs ``floor(nBytes / (nThreads x threshold))``
    channels, between 1 and ``comm->nChannels``, so every channel carries at least ``nThreads x threshold`` bytes.
    Rounded down, the count makes the time fall by up to half at each added channel; this returns the same count
    before rounding, so the two agree at each size where NCCL adds a channel and a channel's share never falls as the
    message grows.

    Parameters
    ----------
    comm, table
        The communicator and its tuner table.
    algorithm, protocol : str
        ``"ring"`` or ``"tree"``, and the protocol.
    nccl_bytes : float
        NCCL's byte count, >= 0.

    Returns
    -------
    float
        ``min(nChannels, max(1, nBytes / (nThreads x threshold)))``.
    """
    per_channel = table.max_threads[(algorithm, protocol)] * table.thread_thresholds[(algorithm, protocol)]
    return min(float(comm.num_channels), max(1.0, nccl_bytes / per_channel))


def nvls_fill_s(nccl_bytes: float, channels: int, bw_per_channel: float) -> float:
    """NVLS pipeline fill, in s: the first chunks go up to the switch and back before every stage is busy.

    Once a channel's share spans more than one chunk (:data:`~gpucomm.model.hardware.calibration.NVLS_CHUNK_BYTES`),
    the fill is ``min(NVLS_PIPELINE_FILL_CHUNKS, chunks - 1)`` chunk times at the channel's bandwidth: 0 up to one
    chunk, continuous, never falling.

    Parameters
    ----------
    nccl_bytes : float
        NCCL's byte count, >= 0.
    channels : int
        NVLS channels (a constant of the communicator).
    bw_per_channel : float
        Delivered bandwidth of one channel, bytes/s.

    Returns
    -------
    float
        Seconds.
    """
    chunk_bytes = cal.NVLS_CHUNK_BYTES.value
    chunks = nccl_bytes / (channels * chunk_bytes)
    return max(0.0, min(cal.NVLS_PIPELINE_FILL_CHUNKS.value, chunks - 1)) * chunk_bytes / bw_per_channel


def ring_fill_s(nccl_bytes: float, steps: int, num_ranks: int, channels: int, bw_per_channel: float) -> float:
    """A ring's Simple pipeline fill over NVLink 3, in s: each step waits a share of one step's transfer.

    ``RING_FILL_STEPS_NVLINK3 x steps x min(RING_SIMPLE_STEP_BYTES, nBytes / (ranks x channels)) / bw_per_channel``:
    a step moves a rank's share of a channel's data, at most one Simple step of NCCL's buffer; 0 at 0 bytes,
    continuous, never falling, constant once a rank's share of a channel reaches a step.

    Parameters
    ----------
    nccl_bytes : float
        NCCL's byte count, >= 0.
    steps : int
        The ring's steps (``2(n-1)`` for all_reduce, ``n-1`` otherwise).
    num_ranks, channels : int
        Ranks and the communicator's channels.
    bw_per_channel : float
        A channel's delivered bus bandwidth, bytes/s.

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> ring_fill_s(0, 14, 8, 24, 10e9)
    0.0
    """
    share = min(cal.RING_SIMPLE_STEP_BYTES.value, nccl_bytes / (num_ranks * channels))
    return cal.RING_FILL_STEPS_NVLINK3.value * steps / bw_per_channel * share


def host_floor_s(gpus_per_thread: int, launch: str, channels: float, nccl_version: tuple) -> float:
    """What one host thread spends launching a call on every GPU it drives, in s.

    Back-to-back calls are paced by the slower of the thread and the GPUs (eager launch, more than one GPU per thread;
    a CUDA graph or ``sync`` has none: its launch term holds the whole dispatch).

    Parameters
    ----------
    gpus_per_thread : int
        GPUs one host thread drives, >= 1.
    launch : str
        ``"eager"``, ``"graph"`` or ``"sync"``.
    channels : float
        Channels in use (releases before 2.13 add a work slot per channel,
        :data:`~gpucomm.model.hardware.calibration.HOST_LAUNCH_PER_CHANNEL_S`); continuous for Ring and Tree.
    nccl_version : tuple of int
        The release followed.

    Returns
    -------
    float
        ``gpus_per_thread x (HOST_LAUNCH_PER_GPU_S + channels x HOST_LAUNCH_PER_CHANNEL_S before 2.13)``, or 0.
    """
    if launch != "eager" or gpus_per_thread <= 1:
        return 0.0
    per_gpu = cal.HOST_LAUNCH_PER_GPU_S.value
    if tuple(nccl_version) < cal.PER_CHANNEL_ENQUEUE_UNTIL:
        per_gpu += channels * cal.HOST_LAUNCH_PER_CHANNEL_S.value
    return gpus_per_thread * per_gpu
