"""all_gather: the spec for the benchmark harness (the counterpart of nccl-tests ``src/all_gather.cu``).

Each of the ``n`` ranks contributes a chunk of ``count / n`` elements and receives all
``n`` chunks: ``count`` is the *total* output buffer, as nccl-tests' ``S``
(:mod:`gpucomm.model.collectives.all_gather`, which also gives the busbw factor). In place,
each rank's input is its own chunk of the output (``sendInplaceOffset = count / n``).

Check: rank ``r`` sends :func:`~gpucomm.measure.spec.tag_value` of source ``r``; chunk ``q``
of every output must hold source ``q``'s tags, so a chunk in the wrong slot is wrong.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gpucomm.measure.spec import Buffers, CollectiveSpec, Counts, chunk_tags

# torch >= 2.13 names it all_gather_single (all_gather_into_tensor is deprecated there).
_all_gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor


def _counts(count: int, num_ranks: int) -> Counts:
    chunk = count // num_ranks
    return Counts(chunk, chunk * num_ranks, send_in_place_offset=chunk)


def _run(buffers: Buffers, op) -> None:
    _all_gather(buffers.recv, buffers.send)


def _inputs(buffers: Buffers, op: str) -> torch.Tensor:
    return chunk_tags(buffers.rank, 0, buffers.send.numel(), buffers.send)


def _expected(buffers: Buffers, op: str) -> torch.Tensor:
    chunk = buffers.recv.numel() // buffers.num_ranks
    return torch.cat([chunk_tags(q, 0, chunk, buffers.recv) for q in range(buffers.num_ranks)])


ALL_GATHER = CollectiveSpec(
    name="all_gather",
    counts=_counts,
    run=_run,
    inputs=_inputs,
    expected=_expected,
)

__all__ = ["ALL_GATHER"]
