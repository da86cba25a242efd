"""What differs between collectives: one small :class:`CollectiveSpec` per operation.

nccl-tests keeps one harness (``src/common.cu``) and one short file per collective
(``src/all_reduce.cu``, ...) that states only the buffer sizes, the call, how to fill and
check the buffers, and the bus-bandwidth factor. This module is the harness side of that
contract; ``gpucomm.measure.collectives.all_reduce`` is the first collective, and ``all_gather``,
``reduce_scatter``, ``broadcast``, ``all_to_all`` and ``send_recv`` follow it. What is not torch
code (the nccl-tests size convention, whether it reduces, the ranks it needs, the busbw factor) is
the collective's file in :mod:`gpucomm.model.collectives`. To measure one more collective, write
``gpucomm/measure/collectives/<name>.py`` with a spec named ``<NAME>``: :data:`SPEC_MODULES` and
``config.BENCH_COLLECTIVES`` list the modules found there.

Correctness inputs are small integers, periodic in the element index, chosen so that the
reduction over ranks is exact in every supported dtype (float32, float64, float16 and
bfloat16 hold all integers up to 2048, 2**53, 2048 and 256): then "wrong" means "not
bit-equal to the expected value", with no tolerance to argue about. Collectives that only
move data use :func:`tag_value`, which also says where each element came from, so that a
chunk delivered to the wrong place counts as wrong.
"""

from __future__ import annotations

import math
import importlib
from dataclasses import dataclass
from functools import reduce
from typing import Any, Callable

import torch
import torch.distributed as dist

from gpucomm import GpucommError
from gpucomm.measure.collectives import spec_module
from gpucomm.measure.config import BENCH_COLLECTIVES, DTYPE_BYTES
from gpucomm.model.collectives import busbw_factor

#: Period of the correctness pattern along the element index.
PATTERN_PERIOD = 6

#: The torch dtype of each element type the benchmark takes (``config.DTYPE_BYTES``; torch names).
TORCH_DTYPES = {name: getattr(torch, name) for name in DTYPE_BYTES}
REDUCE_OPS = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}
_PY_REDUCE = {"sum": lambda a, b: a + b, "prod": lambda a, b: a * b, "max": max, "min": min}


@dataclass(frozen=True)
class CollectiveSpec:
    """The per-collective part of a benchmark.

    Attributes
    ----------
    name : str
        torch.distributed spelling, a key of :func:`gpucomm.model.collectives.busbw_factor`.
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
    ops_per_run : int
        Operations one ``run`` call performs; the reported time is the time of a call
        divided by it (send_recv: a round trip is two one-way transfers).
    timing_note : str
        A line for the results metadata and table header when the time means something
        other than "one call" (send_recv: one-way time, half the round trip).
    """

    name: str
    alloc: Callable[[int, torch.dtype, torch.device, int], Any]
    run: Callable[[Any, Any], None]
    fill: Callable[[Any, int, int, str], None]
    count_wrong: Callable[[Any, int, int, str], int]
    ops_per_run: int = 1
    timing_note: str = ""

    def busbw_factor(self, num_ranks: int) -> float:
        """``busbw / algbw`` from :func:`gpucomm.model.collectives.busbw_factor`."""
        return busbw_factor(self.name, num_ranks)

    def msg_bytes(self, count: int, elem_bytes: int, num_ranks: int) -> int:
        """The size ``S`` in bytes that nccl-tests reports and divides by time for algbw (``doc/PERFORMANCE.md``).

        Parameters
        ----------
        count : int
            Element count of the sweep size, in the collective's size convention
            (:attr:`gpucomm.model.collectives.Collective.chunked`): per rank, or the total buffer for
            ``config.CHUNKED_COLLECTIVES``.
        elem_bytes : int
            Bytes per element.
        num_ranks : int
            Ranks; a chunked ``count`` is a multiple of it (``config.SweepConfig.sizes``), so ``S``
            does not depend on it.

        Returns
        -------
        int
            ``count * elem_bytes``, in bytes.
        """
        return count * elem_bytes


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


def tag_value(source: int, index: int, chunk: int = 0) -> int:
    """Correctness input of a data-moving collective: element ``index`` of ``chunk`` sent by rank ``source``.

    A small integer from 1 to 240 (exact in every dtype, bfloat16 included) that differs
    between sources and between chunks, so that data from the wrong rank or in the wrong
    place is counted as wrong: distinct for every (source, chunk) pair while
    ``source * 8 + chunk < 60`` (for example all_to_all on up to 7 ranks); beyond that the
    values repeat modulo 240 and the check still catches most misplaced data.

    Examples
    --------
    >>> [tag_value(0, k) for k in range(5)], [tag_value(1, k) for k in range(5)]
    ([1, 2, 3, 4, 1], [33, 34, 35, 36, 33])
    """
    return 1 + ((source * 8 + chunk) * 4 + index % 4) % 240


def periodic_tensor(values: list[int], count: int, like: torch.Tensor, *, start: int = 0) -> torch.Tensor:
    """``count`` elements repeating ``values`` (one period), with ``like``'s dtype and device.

    ``start`` shifts the pattern: element ``i`` is ``values[(start + i) % len(values)]``.
    """
    period = torch.tensor(values, dtype=like.dtype, device=like.device)
    offset = start % len(values)
    return period.repeat(math.ceil((count + offset) / len(values)))[offset:offset + count]


def chunk_tags(source: int, chunk: int, count: int, like: torch.Tensor) -> torch.Tensor:
    """``count`` elements ``tag_value(source, i, chunk)`` for ``i = 0..count-1``."""
    return periodic_tensor([tag_value(source, k, chunk) for k in range(4)], count, like)


def this_rank() -> int:
    """This process's rank in the default group (0 without one: for single-process tests)."""
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


#: Module of each measured collective's spec, and the name of the spec in it (from the modules of
#: ``gpucomm.measure.collectives``).
SPEC_MODULES = {collective: spec_module(collective) for collective in BENCH_COLLECTIVES}


def get_spec(collective: str) -> CollectiveSpec:
    """The spec for ``collective``; raises :class:`GpucommError` if it is not measured yet."""
    if collective not in SPEC_MODULES:
        raise GpucommError(f"collective {collective!r} has no benchmark spec: expected one of {', '.join(SPEC_MODULES)}")
    module, name = SPEC_MODULES[collective]
    return getattr(importlib.import_module(module), name)
