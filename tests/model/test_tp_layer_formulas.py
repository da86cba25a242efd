"""The measured TP layer's formulas (gpucomm.model.tp): FLOPs per rank, the all_reduce's size, the overlapped layer.

gpucomm.measure.tp_layer measures the layer and computes its rates with these; no torch here.
"""

from __future__ import annotations

import math

import pytest

from gpucomm import GpucommError
from gpucomm.model.dtypes import element_type
from gpucomm.model.tp import overlapped_time_s, tp_all_reduce_bytes, tp_layer_all_reduce_bytes, tp_layer_flops_per_rank


def test_flops_and_bytes():
    # MLP: two linears of 2 T h f / N FLOPs each
    assert tp_layer_flops_per_rank(1024, 4096, 256, num_ranks=2) == 4 * 256 * 1024 * 4096 / 2
    # attention adds QKV + output projection (8 T h^2 / N) and scores + weighted sum (4 T S h / N)
    with_attn = tp_layer_flops_per_rank(1024, 4096, 256, num_ranks=2, attention=True, seq_len=64)
    assert with_attn - 4 * 256 * 1024 * 4096 / 2 == 8 * 256 * 1024**2 / 2 + 4 * 256 * 64 * 1024 / 2
    # without seq_len the attention scores count min(tokens, 64) tokens per sequence
    assert tp_layer_flops_per_rank(1024, 4096, 32, num_ranks=2, attention=True) == tp_layer_flops_per_rank(
        1024, 4096, 32, num_ranks=2, attention=True, seq_len=32)
    assert tp_layer_all_reduce_bytes(1024, 256) == 1 << 20
    assert tp_layer_all_reduce_bytes(8192, 4096, dtype="bf16") == 64 << 20


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16", "BF16", "half", "double"])
def test_layer_all_reduce_takes_every_spelling_of_the_dtype_table(dtype):
    # one table of element sizes (gpucomm.model.dtypes), one formula shared with the inference model's all_reduce
    size = element_type(dtype.lower()).size_bytes
    assert tp_layer_all_reduce_bytes(512, 96, dtype=dtype) == 96 * 512 * size
    if dtype in ("float32", "float16", "bfloat16"):
        assert tp_layer_all_reduce_bytes(512, 96, dtype=dtype) == tp_all_reduce_bytes(96, 512, dtype=dtype)


@pytest.mark.parametrize("kwargs, match", [
    (dict(hidden=0, tokens=8), "hidden size 0"),
    (dict(hidden=8, tokens=True), "number of tokens True"),
    (dict(hidden=8, tokens=8, dtype="float12"), "unknown element type 'float12'"),
])
def test_layer_all_reduce_refuses_bad_input(kwargs, match):
    with pytest.raises(GpucommError, match=match):
        tp_layer_all_reduce_bytes(**kwargs)


def test_flops_refuse_a_bad_rank_count():
    with pytest.raises(GpucommError, match="ranks"):
        tp_layer_flops_per_rank(1024, 4096, 256, num_ranks=0)


def test_overlapped_time_is_a_two_stage_pipeline():
    assert overlapped_time_s(8.0, 2.0, chunks=1) == 10.0  # serial
    assert overlapped_time_s(8.0, 2.0, chunks=4) == 8.5   # the last chunk's all_reduce stays exposed
    assert overlapped_time_s(2.0, 8.0, chunks=4) == 8.5   # communication-bound: the first chunk's compute
    assert math.isclose(overlapped_time_s(8.0, 2.0, chunks=10**6), 8.0, rel_tol=1e-6)
    with pytest.raises(GpucommError, match="chunks 0"):
        overlapped_time_s(1.0, 1.0, chunks=0)
    with pytest.raises(GpucommError, match=">= 0 s"):
        overlapped_time_s(-1.0, 1.0, chunks=2)
