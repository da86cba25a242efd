"""send_recv: a ping-pong between ranks 0 and 1; the time reported is one way, half the round trip.

Rank 0 sends ``count`` elements to rank 1, which receives them and sends them back; rank 0
receives them. One ``run`` is that round trip, and the runner divides its time by
:attr:`~gpucomm.measure.spec.CollectiveSpec.ops_per_run` = 2: the reported ``time_s`` is the
**one-way** time of one message, half the round trip, as in OSU's ``osu_latency``
(https://mvapich.cse.ohio-state.edu/benchmarks/). ``S = count * elem_bytes``,
``algbw = S / time_s`` and ``busbw = algbw`` (factor 1): the rate of one direction of the
link, comparable to a per-direction link bandwidth. Ranks 2 and up, if any, wait.

This is **not** nccl-tests' ``sendrecv_perf`` (``src/sendrecv.cu``), where every rank sends
to ``rank + 1`` and receives from ``rank - 1`` at the same time (on 2 ranks: both
directions of the link busy at once) and the time is one such exchange. On a full-duplex
link the two agree on busbw for large messages, since each direction runs at its own rate;
the ping-pong's one-way time is the plainer latency (no concurrent traffic). On gloo,
``dist.send`` returns only when the message is handed over, so one direction is timed at a
time as well.

Check: rank 0 sends :func:`~gpucomm.measure.spec.tag_value` of source 0; rank 1 must receive
them and rank 0 must get them back in a separate, zeroed receive buffer.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gpucomm.measure.spec import CollectiveSpec, chunk_tags, this_rank

PING, PONG = 0, 1


def _alloc(count: int, dtype: torch.dtype, device: torch.device, num_ranks: int):
    send = torch.zeros(count, dtype=dtype, device=device)
    recv = torch.zeros(count, dtype=dtype, device=device)
    return send, recv, this_rank()


def _run(buffers, op) -> None:
    send, recv, rank = buffers
    if rank == PING:
        dist.send(send, dst=PONG)
        dist.recv(recv, src=PONG)
    elif rank == PONG:
        dist.recv(recv, src=PING)
        dist.send(recv, dst=PING)


def _fill(buffers, rank: int, num_ranks: int, op: str) -> None:
    send, recv, _ = buffers
    if rank == PING:
        send.copy_(chunk_tags(PING, 0, send.numel(), send))
    else:
        send.zero_()
    recv.zero_()


def _count_wrong(buffers, rank: int, num_ranks: int, op: str) -> int:
    send, recv, _ = buffers
    if rank not in (PING, PONG):
        return 0
    return int((recv != chunk_tags(PING, 0, recv.numel(), recv)).sum().item())


SEND_RECV = CollectiveSpec(
    name="send_recv",
    alloc=_alloc,
    run=_run,
    fill=_fill,
    count_wrong=_count_wrong,
    ops_per_run=2,
    timing_note="send_recv: ping-pong between ranks 0 and 1; time = one way, half the round trip",
)

__all__ = ["SEND_RECV"]
