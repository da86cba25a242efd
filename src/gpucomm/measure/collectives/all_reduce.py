"""all_reduce: the spec for the benchmark harness (the counterpart of nccl-tests ``src/all_reduce.cu``).

One buffer of ``count`` elements per rank. torch's ``dist.all_reduce`` works in place only, so
nccl-tests' in-place column is measured and its out-of-place column stays empty (NCCL's
out-of-place call, ``ncclAllReduce(sendbuff, recvbuff, ...)``, has no torch.distributed
counterpart; a copy followed by the in-place call would time something else). ``S`` and the
busbw factor: :mod:`gpucomm.model.collectives.all_reduce`.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gpucomm.measure.spec import PATTERN_PERIOD, Buffers, CollectiveSpec, Counts, expected_value, input_value, periodic_tensor


def _counts(count: int, num_ranks: int) -> Counts:
    return Counts(count, count)


def _run(buffers: Buffers, op) -> None:
    dist.all_reduce(buffers.recv, op=op)


def _inputs(buffers: Buffers, op: str) -> torch.Tensor:
    values = [input_value(buffers.rank, k, op) for k in range(PATTERN_PERIOD)]
    return periodic_tensor(values, buffers.send.numel(), buffers.send)


def _expected(buffers: Buffers, op: str) -> torch.Tensor:
    values = [expected_value(k, buffers.num_ranks, op) for k in range(PATTERN_PERIOD)]
    return periodic_tensor(values, buffers.recv.numel(), buffers.recv)


ALL_REDUCE = CollectiveSpec(
    name="all_reduce",
    counts=_counts,
    run=_run,
    inputs=_inputs,
    expected=_expected,
    placements=("in_place",),
    placement_note="out-of-place: not measured, torch.distributed.all_reduce works in place only",
)

__all__ = ["ALL_REDUCE"]
