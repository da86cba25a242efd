"""NCCL's point-to-point path (``ncclSend``/``ncclRecv``), which all_to_all and send_recv run on, inside a node.

NCCL's tuner (:mod:`gpucomm.model.nccl_tuner`) does not price point-to-point operations: a group of sends and
receives is split over channels and given a protocol by fixed rules, which this module follows (NCCL v2.30.7-1):

- channels per peer: ``ncclTopoGetNchannels`` (``src/graph/paths.cc:933-939``) gives twice the NVLinks of the
  path between two GPUs (``2 * std::max(1, (int)(path->bw / nvlBw))`` for ``PATH_NVL``/``PATH_NVB``), 2 otherwise;
  ``ncclTopoComputeP2pChannelsPerPeer`` (``paths.cc:961-975``) takes the minimum over the peers, and
  ``ncclTopoComputeP2pChannels`` (``paths.cc:977-1004``) rounds it up to a power of two, capped at the p2p channel
  count: ``comm->nChannels`` rounded up to a power of two, at most ``MAXCHANNELS`` (and the work-argument limit,
  64 by default, ``paths.cc:991``);
- the channels of one operation (``addP2pToPlan``, ``src/enqueue.cc:909-929``): to start, ``nChannelsMin`` (the
  per-peer count halved until every peer fits in the p2p channels, ``enqueue.cc:1143-1146``) but no more than one
  per ``P2P_CHUNKSIZE / 8`` bytes; then doubled, up to the per-peer count, while a part exceeds 32 chunks (the
  single-node bounds, ``enqueue.cc:919-920``);
- the protocol (``enqueue.cc:932``): LL while the operation's bytes are at most its channels x
  ``NCCL_P2P_LL_THRESHOLD`` (16 KiB, ``enqueue.cc:859``), Simple above;
- the chunk (``src/init.cc:818-820`` for the parameters, ``830-838`` for the choice): ``NCCL_P2P_NVL_CHUNKSIZE``
  512 KiB when every GPU of the communicator is on NVLink (``comm->isAllNvlink``), ``NCCL_P2P_PCI_CHUNKSIZE`` 128 KiB
  otherwise, on one node.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

P2P_LL_THRESHOLD_BYTES = 16384
"""``NCCL_P2P_LL_THRESHOLD`` (``src/enqueue.cc:859``): LL bytes per channel of one send or receive."""

P2P_CHUNK_BYTES = {"nvlink": 512 * 1024, "pci": 128 * 1024}
"""``NCCL_P2P_NVL_CHUNKSIZE`` and ``NCCL_P2P_PCI_CHUNKSIZE`` (``src/init.cc:818-820``): all-NVLink communicators and
the others, on one node."""

MAX_CHANNELS = 64
"""``MAXCHANNELS`` (``src/include/device.h``)."""


@dataclass(frozen=True)
class P2pPlan:
    """How NCCL runs one point-to-point operation (one peer's send or receive) of a group.

    Attributes
    ----------
    channels : int
        Channels the operation is split over.
    protocol : str
        ``"LL"`` or ``"Simple"``.
    p2p_channels : int
        ``comm->p2pnChannels``: the channels all the group's operations share.
    """

    channels: int
    protocol: str
    p2p_channels: int


def _pow2_up(x: int) -> int:
    return 1 << max(0, (int(x) - 1).bit_length())


def p2p_plan(peer_bytes: float, *, num_ranks: int, comm_channels: int, nvlinks: int | None) -> P2pPlan:
    """Channels and protocol NCCL gives one send (or receive) of ``peer_bytes`` inside a node.

    Parameters
    ----------
    peer_bytes : float
        Bytes of this operation (for all_to_all: one peer's share, ``S / n``), >= 0.
    num_ranks : int
        Ranks of the communicator, >= 2.
    comm_channels : int
        ``comm->nChannels`` (:attr:`gpucomm.model.nccl_tuner.Comm.num_channels`), >= 1.
    nvlinks : int or None
        NVLinks on the path between two GPUs (through an NVSwitch: each GPU's count); None over PCIe or host
        memory.

    Returns
    -------
    P2pPlan

    Examples
    --------
    8x H100 through NVSwitch (18 NVLinks, 32 channels): a 16 KiB send runs LL on one channel, 4 MiB Simple on four.

    >>> p2p_plan(16384, num_ranks=8, comm_channels=32, nvlinks=18)
    P2pPlan(channels=1, protocol='LL', p2p_channels=32)
    >>> p2p_plan(4 * 2**20, num_ranks=8, comm_channels=32, nvlinks=18)
    P2pPlan(channels=4, protocol='Simple', p2p_channels=32)
    """
    p2p_channels = _pow2_up(min(comm_channels, MAX_CHANNELS))
    per_peer = min(p2p_channels, _pow2_up(2 * max(1, nvlinks) if nvlinks else 2))
    channels_min = per_peer
    while channels_min * num_ranks > p2p_channels and channels_min > 1:
        channels_min //= 2
    step = P2P_CHUNK_BYTES["nvlink" if nvlinks else "pci"]
    min_part, max_part = step // 8, step * 32
    if peer_bytes <= 0:
        channels = 1
    else:
        channels = min(channels_min, max(1, math.ceil(peer_bytes / min_part)))
        part = max(min_part, peer_bytes / channels)
        while part > max_part and channels <= per_peer // 2:
            channels *= 2
            part = peer_bytes / channels
    protocol = "LL" if peer_bytes <= channels * P2P_LL_THRESHOLD_BYTES else "Simple"
    return P2pPlan(channels, protocol, p2p_channels)


def p2p_channels(peer_bytes: float, *, num_ranks: int, comm_channels: int, nvlinks: int | None) -> float:
    """Channels of one send (or receive) of ``peer_bytes``, as :func:`p2p_plan` counts them but continuous in size.

    NCCL starts from one channel per ``P2P_CHUNKSIZE / 8`` bytes up to ``nChannelsMin`` and doubles the count while a
    channel's part exceeds 32 chunks (:func:`p2p_plan`): a power of two, so at each doubling a channel's part halves
    and the time with it. This returns the count before rounding: ``peer_bytes / (chunk / 8)`` up to ``nChannelsMin``,
    then ``peer_bytes / (32 chunks)`` up to the per-peer count; it equals NCCL's count at the sizes where NCCL's
    changes, and a channel's part never falls as the size grows.

    Parameters
    ----------
    peer_bytes : float
        Bytes of this operation, >= 0.
    num_ranks, comm_channels, nvlinks
        As :func:`p2p_plan`.

    Returns
    -------
    float
        Channels, >= 1.

    Examples
    --------
    >>> p2p_channels(4 * 2**20, num_ranks=8, comm_channels=32, nvlinks=18)
    4.0
    >>> p2p_channels(96 * 2**20, num_ranks=8, comm_channels=32, nvlinks=18)
    6.0
    """
    p2p_channels_ = _pow2_up(min(comm_channels, MAX_CHANNELS))
    per_peer = min(p2p_channels_, _pow2_up(2 * max(1, nvlinks) if nvlinks else 2))
    channels_min = per_peer
    while channels_min * num_ranks > p2p_channels_ and channels_min > 1:
        channels_min //= 2
    step = P2P_CHUNK_BYTES["nvlink" if nvlinks else "pci"]
    min_part, max_part = step // 8, step * 32
    start = min(float(channels_min), max(1.0, peer_bytes / min_part))
    return max(start, min(float(per_peer), peer_bytes / max_part))
