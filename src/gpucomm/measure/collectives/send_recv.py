"""send_recv: a ring, as nccl-tests' ``sendrecv_perf`` (``src/sendrecv.cu``, v2.19.6).

Every rank sends its ``count`` elements to rank ``r + 1`` and receives ``count`` elements from
rank ``r - 1`` (modulo the number of ranks), both in one group of calls (nccl-tests:
``ncclGroupStart(); ncclSend(..., sendPeer); ncclRecv(..., recvPeer); ncclGroupEnd()``; here
``dist.batch_isend_irecv``, which NCCL runs as one group too). The time is that of one such
exchange, ``S = count * elem_bytes``, ``algbw = S / time_s`` and ``busbw = algbw`` (factor 1,
``SendRecvGetBw``). On 2 ranks both directions of the link carry data at once.

In place, one buffer is sent and received into: nccl-tests times that run but does not check it
(``args->reportErrors = in_place ? 0 : 1`` in ``SendRecvInitData``), so its ``#wrong`` is N/A.

Check: rank ``r`` sends :func:`~gpucomm.measure.spec.tag_value` of source ``r``; it must
receive the tags of source ``r - 1``, so data from the wrong neighbour is wrong.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gpucomm.measure.spec import Buffers, CollectiveSpec, Counts, chunk_tags


def send_peer(rank: int, num_ranks: int) -> int:
    """The rank this rank sends to: the next one round the ring (``sendPeer`` in nccl-tests)."""
    return (rank + 1) % num_ranks


def recv_peer(rank: int, num_ranks: int) -> int:
    """The rank this rank receives from: the previous one round the ring (``recvPeer``)."""
    return (rank - 1) % num_ranks


def _counts(count: int, num_ranks: int) -> Counts:
    return Counts(count, count)


def _run(buffers: Buffers, op) -> None:
    rank, n = buffers.rank, buffers.num_ranks
    ops = [dist.P2POp(dist.isend, buffers.send, send_peer(rank, n)),
           dist.P2POp(dist.irecv, buffers.recv, recv_peer(rank, n))]
    for request in dist.batch_isend_irecv(ops):
        request.wait()


def _inputs(buffers: Buffers, op: str) -> torch.Tensor:
    return chunk_tags(buffers.rank, 0, buffers.send.numel(), buffers.send)


def _expected(buffers: Buffers, op: str) -> torch.Tensor:
    return chunk_tags(recv_peer(buffers.rank, buffers.num_ranks), 0, buffers.recv.numel(), buffers.recv)


SEND_RECV = CollectiveSpec(
    name="send_recv",
    counts=_counts,
    run=_run,
    inputs=_inputs,
    expected=_expected,
    unchecked=("in_place",),
    placement_note="in-place #wrong: N/A, nccl-tests does not check in-place sendrecv (src/sendrecv.cu)",
    timing_note="send_recv: every rank sends to rank + 1 and receives from rank - 1 at once, a ring "
                "(nccl-tests sendrecv_perf)",
)

__all__ = ["SEND_RECV", "send_peer", "recv_peer"]
