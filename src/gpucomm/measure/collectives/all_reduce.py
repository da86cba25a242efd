"""all_reduce: the spec for the benchmark harness (the counterpart of nccl-tests ``src/all_reduce.cu``).

torch's ``dist.all_reduce`` works in place, so there is one buffer of ``count`` elements
per rank and nccl-tests' in-place column is what is measured. ``S`` and the busbw factor:
:mod:`gpucomm.model.collectives.all_reduce`.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gpucomm.measure.spec import PATTERN_PERIOD, CollectiveSpec, expected_value, input_value, periodic_tensor


def _alloc(count: int, dtype: torch.dtype, device: torch.device, num_ranks: int) -> torch.Tensor:
    return torch.zeros(count, dtype=dtype, device=device)


def _run(buf: torch.Tensor, op) -> None:
    dist.all_reduce(buf, op=op)


def _fill(buf: torch.Tensor, rank: int, num_ranks: int, op: str) -> None:
    buf.copy_(periodic_tensor([input_value(rank, k, op) for k in range(PATTERN_PERIOD)], buf.numel(), buf))


def _count_wrong(buf: torch.Tensor, rank: int, num_ranks: int, op: str) -> int:
    expected = periodic_tensor([expected_value(k, num_ranks, op) for k in range(PATTERN_PERIOD)], buf.numel(), buf)
    return int((buf != expected).sum().item())


ALL_REDUCE = CollectiveSpec(
    name="all_reduce",
    alloc=_alloc,
    run=_run,
    fill=_fill,
    count_wrong=_count_wrong,
)

__all__ = ["ALL_REDUCE"]
