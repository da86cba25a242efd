"""reduce_scatter: the spec for the benchmark harness (the counterpart of nccl-tests ``src/reduce_scatter.cu``).

Every rank holds ``count`` elements in ``n`` chunks; rank ``r`` receives chunk ``r`` reduced
over all ranks: ``count`` is the *total* input buffer, as nccl-tests' ``S``
(:mod:`gpucomm.model.collectives.reduce_scatter`, which also gives the busbw factor). In place,
each rank's output is its own chunk of the input (``recvInplaceOffset = count / n``).

Not on gloo: gloo has no reduce-scatter algorithm, and torch's gloo fallback is a full
all_reduce (``config.UNSUPPORTED``), so the runner refuses it there instead of timing it.

Check: the inputs are :func:`~gpucomm.measure.spec.input_value` at a pattern index shifted by
one per chunk (index ``i + i // chunk``), so neighbouring chunks hold different values and a
chunk delivered to the wrong rank is wrong; the reduction over ranks is exact.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gpucomm.measure.spec import PATTERN_PERIOD, Buffers, CollectiveSpec, Counts, expected_value, input_value, periodic_tensor

# torch >= 2.13 names it reduce_scatter_single (reduce_scatter_tensor is deprecated there).
_reduce_scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


def _counts(count: int, num_ranks: int) -> Counts:
    chunk = count // num_ranks
    return Counts(chunk * num_ranks, chunk, recv_in_place_offset=chunk)


def _run(buffers: Buffers, op) -> None:
    _reduce_scatter(buffers.recv, buffers.send, op=op)


def _inputs(buffers: Buffers, op: str) -> torch.Tensor:
    chunk = buffers.send.numel() // buffers.num_ranks
    values = [input_value(buffers.rank, k, op) for k in range(PATTERN_PERIOD)]
    return torch.cat([periodic_tensor(values, chunk, buffers.send, start=q * chunk + q)
                      for q in range(buffers.num_ranks)])


def _expected(buffers: Buffers, op: str) -> torch.Tensor:
    chunk, rank = buffers.recv.numel(), buffers.rank
    values = [expected_value(k, buffers.num_ranks, op) for k in range(PATTERN_PERIOD)]
    return periodic_tensor(values, chunk, buffers.recv, start=rank * chunk + rank)


REDUCE_SCATTER = CollectiveSpec(
    name="reduce_scatter",
    counts=_counts,
    run=_run,
    inputs=_inputs,
    expected=_expected,
)

__all__ = ["REDUCE_SCATTER"]
