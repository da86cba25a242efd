"""broadcast: the spec for the benchmark harness (the counterpart of nccl-tests ``src/broadcast.cu``).

Rank 0 (the root, nccl-tests' default ``-r 0``) sends its ``count`` elements to every other
rank. torch's ``dist.broadcast`` works in place only (one buffer per rank), so nccl-tests'
in-place column is measured and its out-of-place column stays empty. ``S`` and the busbw
factor: :mod:`gpucomm.model.collectives.broadcast`.

Check: the root holds :func:`~gpucomm.measure.spec.tag_value` of source 0, the other ranks
zeros; afterwards every rank must hold the root's values.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gpucomm.measure.config import ROOT_RANK
from gpucomm.measure.spec import Buffers, CollectiveSpec, Counts, chunk_tags

#: The broadcasting rank.
ROOT = ROOT_RANK


def _counts(count: int, num_ranks: int) -> Counts:
    return Counts(count, count)


def _run(buffers: Buffers, op) -> None:
    dist.broadcast(buffers.recv, src=ROOT)


def _inputs(buffers: Buffers, op: str) -> torch.Tensor:
    tags = chunk_tags(ROOT, 0, buffers.send.numel(), buffers.send)
    return tags if buffers.rank == ROOT else torch.zeros_like(tags)


def _expected(buffers: Buffers, op: str) -> torch.Tensor:
    return chunk_tags(ROOT, 0, buffers.recv.numel(), buffers.recv)


BROADCAST = CollectiveSpec(
    name="broadcast",
    counts=_counts,
    run=_run,
    inputs=_inputs,
    expected=_expected,
    placements=("in_place",),
    placement_note="out-of-place: not measured, torch.distributed.broadcast works in place only",
)

__all__ = ["BROADCAST", "ROOT"]
