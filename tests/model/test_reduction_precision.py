"""Rounding of low-precision all_reduces (``gpucomm.model.reduction_precision``)."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpucomm import GpucommError
from gpucomm.model import reduction_precision as rp


def _bf16_by_bits(x: float) -> float:
    """bfloat16 rounding the way hardware does it: the top 16 bits of the float32, rounded to nearest even."""
    (bits,) = struct.unpack("<I", struct.pack("<f", x))
    bits += 0x7FFF + ((bits >> 16) & 1)
    return struct.unpack("<f", struct.pack("<I", (bits >> 16) << 16))[0]


@given(st.floats(min_value=-1e30, max_value=1e30, allow_nan=False).filter(lambda x: abs(x) > 1e-30))
def test_bf16_rounding_matches_the_bit_level_rounding(x):
    x32 = struct.unpack("<f", struct.pack("<f", x))[0]  # a float32 input, as on the GPU
    assert rp.round_to(x32, "bf16") == _bf16_by_bits(x32)


def test_fp8_e4m3_grid():
    assert rp.round_to(448.0, "fp8") == 448.0 and rp.round_to(1e6, "fp8") == 448.0
    assert rp.round_to(1.0625, "fp8") == 1.0  # step 1/8 near 1: ties to even
    assert rp.round_to(2.0**-9, "fp8") == 2.0**-9  # smallest subnormal
    assert rp.round_to(2.0**-11, "fp8") == 0.0


def test_fp16_rounding_is_idempotent_and_monotone():
    xs = [i / 997 for i in range(-2000, 2000)]
    ys = [rp.round_to(x, "fp16") for x in xs]
    assert all(rp.round_to(y, "fp16") == y for y in ys)
    assert all(b >= a for a, b in zip(ys, ys[1:]))


def test_ring_loses_more_than_one_rounding_and_more_with_more_ranks():
    ring8, ring64 = (rp.all_reduce_error("bf16", "ring", num_ranks=n, num_elements=512) for n in (8, 64))
    once8 = rp.all_reduce_error("bf16", "accumulate_fp32", num_ranks=8, num_elements=512)
    assert ring64 > ring8 > once8 > 0
    # one rounding to bf16 costs at most half a unit in the last place: relative RMS below 2**-8
    assert once8 < 2**-8


def test_two_ranks_round_once_in_every_order():
    errs = {o: rp.all_reduce_error("bf16", o, num_ranks=2, num_elements=256) for o in ("ring", "accumulate_fp32")}
    assert len({round(e, 12) for e in errs.values()}) == 1


def test_same_seed_same_number():
    a = rp.all_reduce_error("fp8", "ring", num_ranks=4, num_elements=64, seed=3)
    assert a == rp.all_reduce_error("fp8", "ring", num_ranks=4, num_elements=64, seed=3)
    assert math.isfinite(a)


@pytest.mark.parametrize("call", [lambda: rp.round_to(1.0, "int4"), lambda: rp.round_to(math.inf, "bf16"),
                                  lambda: rp.reduce_values([1.0], "bf16", "ring"),
                                  lambda: rp.reduce_values([1.0, 2.0], "bf16", "tree"),
                                  lambda: rp.all_reduce_error("bf16", "ring", num_ranks=1)])
def test_bad_input_is_refused(call):
    with pytest.raises(GpucommError):
        call()
