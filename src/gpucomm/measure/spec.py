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

Buffers follow nccl-tests' ``*GetCollByteCount``: a collective states its send and receive
element counts and, for the in-place run, where in one shared buffer its input and output
begin (:class:`Counts`); :meth:`CollectiveSpec.alloc` builds either placement from that
(``startColl`` in ``src/common.cu``: in place, the send buffer is the receive buffer plus
``sendInplaceOffset * rank``). A collective states which placements torch.distributed can run
(all_reduce and broadcast exist in place only there) and which nccl-tests does not check.

Correctness inputs are small integers, periodic in the element index, chosen so that the
reduction over ranks is exact in every supported dtype (float32, float64, float16 and
bfloat16 hold all integers up to 2048, 2**53, 2048 and 256): then "wrong" means "not
bit-equal to the expected value", with no tolerance to argue about. Collectives that only
move data use :func:`tag_value`, which also says where each element came from, so that a
chunk delivered to the wrong place counts as wrong.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce
from typing import Any, NamedTuple

import torch
import torch.distributed as dist

from gpucomm import GpucommError
from gpucomm.measure.collectives import spec_module
from gpucomm.measure.config import BENCH_COLLECTIVES, DTYPE_BYTES, PLACEMENTS
from gpucomm.model.collectives import busbw_factor

#: Period of the correctness pattern along the element index.
PATTERN_PERIOD = 6

#: The torch dtype of each element type the benchmark takes (``config.DTYPE_BYTES``; torch names).
TORCH_DTYPES = {name: getattr(torch, name) for name in DTYPE_BYTES}
REDUCE_OPS = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}
_PY_REDUCE = {"sum": lambda a, b: a + b, "prod": lambda a, b: a * b, "max": max, "min": min}


class Counts(NamedTuple):
    """Element counts of one rank's buffers (nccl-tests ``*GetCollByteCount``).

    Attributes
    ----------
    send, recv : int
        Elements of the input and of the output.
    send_in_place_offset, recv_in_place_offset : int
        In place, the input begins ``send_in_place_offset * rank`` elements into the shared
        buffer and the output ``recv_in_place_offset * rank`` (all_gather: the input is this
        rank's chunk of the output; reduce_scatter: the output is this rank's chunk of the input).
    """

    send: int
    recv: int
    send_in_place_offset: int = 0
    recv_in_place_offset: int = 0


class Buffers(NamedTuple):
    """One rank's buffers for one measurement.

    Attributes
    ----------
    send, recv : torch.Tensor
        Input and output; in place, views of one buffer (the same view where the offsets are 0).
    rank, num_ranks : int
        The rank that owns them and the number of ranks.
    in_place : bool
        Which placement they were built for.
    """

    send: torch.Tensor
    recv: torch.Tensor
    rank: int
    num_ranks: int
    in_place: bool


@dataclass(frozen=True)
class CollectiveSpec:
    """The per-collective part of a benchmark.

    Attributes
    ----------
    name : str
        torch.distributed spelling, a key of :func:`gpucomm.model.collectives.busbw_factor`.
    counts : callable
        ``counts(count, num_ranks) -> Counts`` for a sweep size of ``count`` elements in the
        collective's size convention (per rank, or the total where chunked).
    run : callable
        ``run(buffers, op) -> None``: one blocking call from ``buffers.send`` into
        ``buffers.recv`` (op is a ``ReduceOp``, ignored where nothing is reduced).
    inputs : callable
        ``inputs(buffers, op_name) -> tensor``: the exact inputs of the check, for ``buffers.send``.
    expected : callable
        ``expected(buffers, op_name) -> tensor``: what ``buffers.recv`` must hold after one ``run``.
    placements : tuple of str
        The placements of ``config.PLACEMENTS`` that torch.distributed can run.
    unchecked : tuple of str
        Placements that are timed but not checked, as in nccl-tests (``reportErrors = in_place ?
        0 : 1`` in ``src/alltoall.cu`` and ``src/sendrecv.cu``): their ``#wrong`` is N/A.
    placement_note : str
        A line for the table header when a placement is missing or unchecked, saying why.
    timing_note : str
        A line for the results metadata and table header when the time means something
        other than "one call of the collective" (empty otherwise).
    """

    name: str
    counts: Callable[[int, int], Counts]
    run: Callable[[Buffers, Any], None]
    inputs: Callable[[Buffers, str], torch.Tensor]
    expected: Callable[[Buffers, str], torch.Tensor]
    placements: tuple[str, ...] = PLACEMENTS
    unchecked: tuple[str, ...] = ()
    placement_note: str = ""
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

    def alloc(self, count: int, dtype: torch.dtype, device: torch.device, num_ranks: int, *,
              rank: int | None = None, in_place: bool = False) -> Buffers:
        """Zero-filled buffers for one measurement (zeros stay zeros under every reduction, so
        timed iterations never overflow or produce denormals).

        Parameters
        ----------
        count : int
            The sweep size in elements (see :meth:`msg_bytes`).
        dtype, device
            Element type and where the buffers live.
        num_ranks : int
            Ranks in the group.
        rank : int or None
            The rank that owns the buffers (None: this process's rank in the default group).
        in_place : bool
            Build the in-place placement: input and output are views of one buffer.

        Raises
        ------
        GpucommError
            The placement is not one of :attr:`placements`.
        """
        placement = PLACEMENTS[1] if in_place else PLACEMENTS[0]
        if placement not in self.placements:
            raise GpucommError(f"{self.name} has no {placement.replace('_', '-')} call in torch.distributed: "
                               f"expected one of {', '.join(self.placements)}")
        rank = this_rank() if rank is None else rank
        c = self.counts(count, num_ranks)
        if not in_place:
            send = torch.zeros(c.send, dtype=dtype, device=device)
            recv = torch.zeros(c.recv, dtype=dtype, device=device)
            return Buffers(send, recv, rank, num_ranks, False)
        send_at, recv_at = c.send_in_place_offset * rank, c.recv_in_place_offset * rank
        shared = torch.zeros(max(send_at + c.send, recv_at + c.recv), dtype=dtype, device=device)
        return Buffers(shared[send_at:send_at + c.send], shared[recv_at:recv_at + c.recv], rank, num_ranks, True)

    def fill(self, buffers: Buffers, op: str) -> None:
        """Zero the output, then write the exact inputs (in that order: in place they overlap)."""
        buffers.recv.zero_()
        buffers.send.copy_(self.inputs(buffers, op))

    def count_wrong(self, buffers: Buffers, op: str) -> int:
        """Elements of this rank's output that differ from the exact expected value."""
        return int((buffers.recv != self.expected(buffers, op)).sum().item())

    def checked(self, placement: str) -> bool:
        """Whether nccl-tests checks the result of ``placement`` (else its ``#wrong`` is N/A)."""
        return placement not in self.unchecked


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
