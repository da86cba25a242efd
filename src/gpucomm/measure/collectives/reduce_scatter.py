"""reduce_scatter: the spec for the benchmark harness (the counterpart of nccl-tests ``src/reduce_scatter.cu``).

Every rank holds ``count`` elements in ``n`` chunks; rank ``r`` receives chunk ``r`` reduced
over all ranks: ``count`` is the *total* input buffer, as nccl-tests' ``S``
(:mod:`gpucomm.model.collectives.reduce_scatter`, which also gives the busbw factor).

Not on gloo: gloo has no reduce-scatter algorithm, and torch's gloo fallback is a full
all_reduce (``config.UNSUPPORTED``), so the runner refuses it there instead of timing it.

Check: the inputs are :func:`~gpucomm.measure.spec.input_value` at a pattern index shifted by
one per chunk (index ``i + i // chunk``), so neighbouring chunks hold different values and a
chunk delivered to the wrong rank is wrong; the reduction over ranks is exact.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from gpucomm.measure.spec import (PATTERN_PERIOD, CollectiveSpec, expected_value, input_value,
                                periodic_tensor)

# torch >= 2.13 names it reduce_scatter_single (reduce_scatter_tensor is deprecated there).
_reduce_scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


def _alloc(count: int, dtype: torch.dtype, device: torch.device, num_ranks: int):
    chunk = count // num_ranks
    return torch.zeros(chunk * num_ranks, dtype=dtype, device=device), torch.zeros(chunk, dtype=dtype, device=device)


def _run(buffers, op) -> None:
    send, recv = buffers
    _reduce_scatter(recv, send, op=op)


def _fill(buffers, rank: int, num_ranks: int, op: str) -> None:
    send, recv = buffers
    chunk = recv.numel()
    values = [input_value(rank, k, op) for k in range(PATTERN_PERIOD)]
    for q in range(num_ranks):
        send[q * chunk:(q + 1) * chunk] = periodic_tensor(values, chunk, send, start=q * chunk + q)
    recv.zero_()


def _count_wrong(buffers, rank: int, num_ranks: int, op: str) -> int:
    send, recv = buffers
    chunk = recv.numel()
    values = [expected_value(k, num_ranks, op) for k in range(PATTERN_PERIOD)]
    expected = periodic_tensor(values, chunk, recv, start=rank * chunk + rank)
    return int((recv != expected).sum().item())


REDUCE_SCATTER = CollectiveSpec(
    name="reduce_scatter",
    alloc=_alloc,
    run=_run,
    fill=_fill,
    count_wrong=_count_wrong,
)

__all__ = ["REDUCE_SCATTER"]
