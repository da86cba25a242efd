"""all_to_all: the spec for the benchmark harness (the counterpart of nccl-tests ``src/alltoall.cu``).

Every rank's send buffer of ``count`` elements holds one chunk of ``count / n`` elements for
each rank (itself included); rank ``q`` receives chunk ``q`` of every rank, in source order.
``count`` is one rank's whole send buffer, as nccl-tests' ``S``
(:mod:`gpucomm.model.collectives.all_to_all`, which also gives the busbw factor). (Newer
nccl-tests also align each chunk to 16 bytes; here a chunk is any whole number of elements.)

In place, input and output are one buffer. nccl-tests times that run but does not check it
(``args->reportErrors = in_place ? 0 : 1`` in ``AlltoAllInitData``): chunks are overwritten while
other ranks may still read them, so its ``#wrong`` is N/A here too.

Check: chunk ``q`` sent by rank ``r`` holds :func:`~gpucomm.measure.spec.tag_value` of source
``r``, chunk ``q``; rank ``q`` must find source ``r``'s chunk ``q`` in slot ``r``.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gpucomm.measure.spec import Buffers, CollectiveSpec, Counts, chunk_tags


def _counts(count: int, num_ranks: int) -> Counts:
    total = count // num_ranks * num_ranks
    return Counts(total, total)


def _run(buffers: Buffers, op) -> None:
    dist.all_to_all_single(buffers.recv, buffers.send)


def _inputs(buffers: Buffers, op: str) -> torch.Tensor:
    chunk = buffers.send.numel() // buffers.num_ranks
    return torch.cat([chunk_tags(buffers.rank, q, chunk, buffers.send) for q in range(buffers.num_ranks)])


def _expected(buffers: Buffers, op: str) -> torch.Tensor:
    chunk = buffers.recv.numel() // buffers.num_ranks
    return torch.cat([chunk_tags(r, buffers.rank, chunk, buffers.recv) for r in range(buffers.num_ranks)])


ALL_TO_ALL = CollectiveSpec(
    name="all_to_all",
    counts=_counts,
    run=_run,
    inputs=_inputs,
    expected=_expected,
    unchecked=("in_place",),
    placement_note="in-place #wrong: N/A, nccl-tests does not check in-place alltoall (src/alltoall.cu)",
)

__all__ = ["ALL_TO_ALL"]
