"""all_gather: the spec for the benchmark harness (the counterpart of nccl-tests ``src/all_gather.cu``).

Each of the ``n`` ranks contributes a chunk of ``count / n`` elements and receives all
``n`` chunks: ``count`` is the *total* output buffer, as nccl-tests' ``S``
(:mod:`gpucomm.model.collectives.all_gather`, which also gives the busbw factor).

Check: rank ``r`` sends :func:`~gpucomm.measure.spec.tag_value` of source ``r``; chunk ``q``
of every output must hold source ``q``'s tags, so a chunk in the wrong slot is wrong.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gpucomm.measure.spec import CollectiveSpec, chunk_tags

# torch >= 2.13 names it all_gather_single (all_gather_into_tensor is deprecated there).
_all_gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor


def _alloc(count: int, dtype: torch.dtype, device: torch.device, num_ranks: int):
    chunk = count // num_ranks
    return torch.zeros(chunk, dtype=dtype, device=device), torch.zeros(chunk * num_ranks, dtype=dtype, device=device)


def _run(buffers, op) -> None:
    send, recv = buffers
    _all_gather(recv, send)


def _fill(buffers, rank: int, num_ranks: int, op: str) -> None:
    send, recv = buffers
    send.copy_(chunk_tags(rank, 0, send.numel(), send))
    recv.zero_()


def _count_wrong(buffers, rank: int, num_ranks: int, op: str) -> int:
    send, recv = buffers
    expected = torch.cat([chunk_tags(q, 0, send.numel(), recv) for q in range(num_ranks)])
    return int((recv != expected).sum().item())


ALL_GATHER = CollectiveSpec(
    name="all_gather",
    alloc=_alloc,
    run=_run,
    fill=_fill,
    count_wrong=_count_wrong,
)

__all__ = ["ALL_GATHER"]
