"""broadcast: the spec for the benchmark harness (the counterpart of nccl-tests ``src/broadcast.cu``).

Rank 0 (the root, nccl-tests' default ``-r 0``) sends its ``count`` elements to every other
rank, in place. ``S`` and the busbw factor: :mod:`gpucomm.model.collectives.broadcast`.

Check: the root holds :func:`~gpucomm.measure.spec.tag_value` of source 0, the other ranks
zeros; afterwards every rank must hold the root's values.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gpucomm.measure.spec import CollectiveSpec, chunk_tags

#: The broadcasting rank.
ROOT = 0


def _alloc(count: int, dtype: torch.dtype, device: torch.device, num_ranks: int) -> torch.Tensor:
    return torch.zeros(count, dtype=dtype, device=device)


def _run(buf: torch.Tensor, op) -> None:
    dist.broadcast(buf, src=ROOT)


def _fill(buf: torch.Tensor, rank: int, num_ranks: int, op: str) -> None:
    if rank == ROOT:
        buf.copy_(chunk_tags(ROOT, 0, buf.numel(), buf))
    else:
        buf.zero_()


def _count_wrong(buf: torch.Tensor, rank: int, num_ranks: int, op: str) -> int:
    return int((buf != chunk_tags(ROOT, 0, buf.numel(), buf)).sum().item())


BROADCAST = CollectiveSpec(
    name="broadcast",
    alloc=_alloc,
    run=_run,
    fill=_fill,
    count_wrong=_count_wrong,
)

__all__ = ["BROADCAST", "ROOT"]
