"""What differs between collectives: one small :class:`CollectiveSpec` per operation.

nccl-tests keeps one harness (``src/common.cu``) and one short file per collective
(``src/all_reduce.cu``, ...) that states only the buffer sizes, the call, how to fill and
check the buffers, and the bus-bandwidth factor. This module is the harness side of that
contract; ``gpucomm.bench.all_reduce`` is the first collective. To add one, write a module
with a spec, list it in :func:`get_spec` and in ``config.BENCH_COLLECTIVES``.

Correctness inputs are small integers, periodic in the element index, chosen so that the
reduction over ranks is exact in every supported dtype (float32, float64, float16 and
bfloat16 hold all integers up to 2048, 2**53, 2048 and 256): then "wrong" means "not
bit-equal to the expected value", with no tolerance to argue about.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import reduce
from typing import Any, Callable

import torch
import torch.distributed as dist

from gpucomm import GpucommError
from gpucomm.collectives import busbw_factor

#: Period of the correctness pattern along the element index.
PATTERN_PERIOD = 6

TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16}
REDUCE_OPS = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}
_PY_REDUCE = {"sum": lambda a, b: a + b, "prod": lambda a, b: a * b, "max": max, "min": min}


@dataclass(frozen=True)
class CollectiveSpec:
    """The per-collective part of a benchmark.

    Attributes
    ----------
    name : str
        torch.distributed spelling, a key of :func:`gpucomm.collectives.busbw_factor`.
    alloc : callable
        ``alloc(count, dtype, device, num_ranks) -> buffers``: zero-filled buffers for
        ``count`` elements per rank (zeros stay zeros under every reduction, so timed
        iterations never overflow or produce denormals).
    run : callable
        ``run(buffers, op) -> None``: one blocking collective call (op is a ``ReduceOp``).
    fill : callable
        ``fill(buffers, rank, num_ranks, op_name) -> None``: exact inputs for the check.
    count_wrong : callable
        ``count_wrong(buffers, rank, num_ranks, op_name) -> int``: elements of this rank's
        output that differ from the exact expected value.
    msg_bytes : callable
        ``msg_bytes(count, elem_bytes, num_ranks) -> int``: the size ``S`` nccl-tests
        reports and divides by time for algbw (``doc/PERFORMANCE.md``).
    """

    name: str
    alloc: Callable[[int, torch.dtype, torch.device, int], Any]
    run: Callable[[Any, Any], None]
    fill: Callable[[Any, int, int, str], None]
    count_wrong: Callable[[Any, int, int, str], int]
    msg_bytes: Callable[[int, int, int], int]

    def busbw_factor(self, num_ranks: int) -> float:
        """``busbw / algbw`` from :func:`gpucomm.collectives.busbw_factor`."""
        return busbw_factor(self.name, num_ranks)


def input_value(rank: int, index: int, op: str) -> int:
    """Correctness input of ``rank`` at element ``index`` for reduction ``op`` (a small integer).

    sum: 1..3, so a sum over ``n`` ranks is at most ``3n`` (exact in bfloat16 up to 85 ranks);
    prod: 1 or 2, with at most ``ceil(n/3)`` twos (exact up to float16's 2**15: 45 ranks);
    max/min: 0..5.
    """
    k = index % PATTERN_PERIOD
    if op == "sum":
        return 1 + (rank + k) % 3
    if op == "prod":
        return 2 if (rank + k) % 3 == 0 else 1
    return (rank + k) % PATTERN_PERIOD


def expected_value(index: int, num_ranks: int, op: str) -> int:
    """The exact reduction over ranks ``0..num_ranks-1`` of :func:`input_value`."""
    return reduce(_PY_REDUCE[op], (input_value(r, index, op) for r in range(num_ranks)))


def periodic_tensor(values: list[int], count: int, like: torch.Tensor) -> torch.Tensor:
    """``count`` elements repeating ``values`` (one period), with ``like``'s dtype and device."""
    period = torch.tensor(values, dtype=like.dtype, device=like.device)
    return period.repeat(math.ceil(count / len(values)))[:count]


def get_spec(collective: str) -> CollectiveSpec:
    """The spec for ``collective``; raises :class:`GpucommError` if it is not measured yet."""
    if collective == "all_reduce":
        from gpucomm.bench.all_reduce import ALL_REDUCE

        return ALL_REDUCE
    raise GpucommError(f"collective {collective!r} has no benchmark spec: expected all_reduce")
