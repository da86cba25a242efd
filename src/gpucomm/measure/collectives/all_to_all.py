"""all_to_all: the spec for the benchmark harness (the counterpart of nccl-tests ``src/alltoall.cu``).

Every rank's send buffer of ``count`` elements holds one chunk of ``count / n`` elements for
each rank (itself included); rank ``q`` receives chunk ``q`` of every rank, in source order.
``count`` is one rank's whole send buffer, as nccl-tests' ``S``
(:mod:`gpucomm.model.collectives.all_to_all`, which also gives the busbw factor). (Newer
nccl-tests also align each chunk to 16 bytes; here a chunk is any whole number of elements.)

Check: chunk ``q`` sent by rank ``r`` holds :func:`~gpucomm.measure.spec.tag_value` of source
``r``, chunk ``q``; rank ``q`` must find source ``r``'s chunk ``q`` in slot ``r``.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gpucomm.measure.spec import CollectiveSpec, chunk_tags


def _alloc(count: int, dtype: torch.dtype, device: torch.device, num_ranks: int):
    total = count // num_ranks * num_ranks
    return torch.zeros(total, dtype=dtype, device=device), torch.zeros(total, dtype=dtype, device=device)


def _run(buffers, op) -> None:
    send, recv = buffers
    dist.all_to_all_single(recv, send)


def _fill(buffers, rank: int, num_ranks: int, op: str) -> None:
    send, recv = buffers
    chunk = send.numel() // num_ranks
    send.copy_(torch.cat([chunk_tags(rank, q, chunk, send) for q in range(num_ranks)]))
    recv.zero_()


def _count_wrong(buffers, rank: int, num_ranks: int, op: str) -> int:
    send, recv = buffers
    chunk = recv.numel() // num_ranks
    expected = torch.cat([chunk_tags(r, rank, chunk, recv) for r in range(num_ranks)])
    return int((recv != expected).sum().item())


ALL_TO_ALL = CollectiveSpec(
    name="all_to_all",
    alloc=_alloc,
    run=_run,
    fill=_fill,
    count_wrong=_count_wrong,
)

__all__ = ["ALL_TO_ALL"]
