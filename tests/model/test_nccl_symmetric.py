"""NCCL's symmetric-kernel picker (``gpucomm.model.nccl_symmetric``) against the rules of ``src/sym_kernels.cc``."""

from __future__ import annotations

import math

import pytest

from gpucomm import GpucommError
from gpucomm.model import nccl_symmetric as sym

MiB = 2**20


def test_small_messages_take_an_ll_kernel_large_ones_the_multimem_two_shot():
    small = sym.pick_all_reduce_kernel(4096, num_ranks=8, compute_capability=90)
    large = sym.pick_all_reduce_kernel(64 * MiB, num_ranks=8, compute_capability=90)
    assert small.kernel.startswith("AGxLL")
    assert large.kernel == "RSxLDMC_AGxSTMC"


def test_the_choice_minimises_time_with_nccls_per_sm_penalty():
    for size in (1024, 65536, 4 * MiB, 256 * MiB):
        c = sym.pick_all_reduce_kernel(size, num_ranks=8, compute_capability=100)
        score = {k: t * (1 + 0.025 * b) for k, (t, b) in c.candidates.items()}
        assert score[c.kernel] == min(score.values())
        assert c.time_s == c.candidates[c.kernel][0]


def test_no_multimem_without_nvls_or_on_two_ranks():
    for kw in ({"num_ranks": 8, "multimem": False}, {"num_ranks": 2, "multimem": True}):
        c = sym.pick_all_reduce_kernel(64 * MiB, compute_capability=90, **kw)
        assert not any(k.endswith("MC") or "MC_" in k for k in c.candidates), c.candidates
        assert c.kernel == "RSxLD_AGxST"


def test_fp8_switch_reduction_only_from_blackwell():
    hopper = sym.pick_all_reduce_kernel(64 * MiB, num_ranks=8, compute_capability=90, dtype="fp8")
    blackwell = sym.pick_all_reduce_kernel(64 * MiB, num_ranks=8, compute_capability=100, dtype="fp8")
    assert "RSxLDMC_AGxSTMC" not in hopper.candidates
    assert blackwell.kernel == "RSxLDMC_AGxSTMC"


def test_unregistered_buffers_leave_only_ll_kernels():
    c = sym.pick_all_reduce_kernel(MiB, num_ranks=4, compute_capability=90, both_registered=False)
    assert set(c.candidates) <= {"AGxLL_R", "AGxLLMC_R"}


def test_model_shape_latency_floor_and_bandwidth_slope():
    # the time never falls below the base latency and grows with the bytes (NCCL's softplus of bytes / bandwidth)
    times = [sym.kernel_time_us("RSxLD_AGxST", s, num_ranks=8, compute_capability=90)[0] for s in (2**k for k in range(10, 30))]
    assert all(t >= 7.8 for t in times)
    assert all(b >= a for a, b in zip(times, times[1:]))
    # far above the knee: bytes / peak bandwidth (320 GiB/s below sm_100, NCCL's GBps = 2**30 / 1e6 bytes per us),
    # within the 2.5 % NCCL gives up to use fewer blocks
    t_us, _ = sym.kernel_time_us("RSxLD_AGxST", 2**30, num_ranks=8, compute_capability=90)
    bus = 2 * 2**30 * 7 // 8
    assert math.isclose(t_us, 7.8 + bus / (320 * 2**30 / 1e6) - 1, rel_tol=0.026)
    assert t_us >= 7.8 + bus / (320 * 2**30 / 1e6) - 1


def test_ll_kernels_off_from_2_gib():
    c = sym.pick_all_reduce_kernel(2 << 30, num_ranks=8, compute_capability=90)
    assert not any(k.startswith("AGxLL") for k in c.candidates)


@pytest.mark.parametrize("kwargs", [{"msg_bytes": 0}, {"num_ranks": 1}, {"compute_capability": 9}, {"dtype": "int4"}])
def test_bad_values_are_refused(kwargs):
    args = {"msg_bytes": 1024, "num_ranks": 8, "compute_capability": 90, **kwargs}
    size = args.pop("msg_bytes")
    with pytest.raises(GpucommError):
        sym.pick_all_reduce_kernel(size, **args)


def test_unknown_kernel_is_refused():
    with pytest.raises(GpucommError, match="unknown symmetric"):
        sym.kernel_time_us("Ring", 1024, num_ranks=8, compute_capability=90)
