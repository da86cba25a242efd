"""The trace reader (``gpucomm.model.trace_overlap``): interval arithmetic and the overlapped/exposed split."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpucomm import GpucommError
from gpucomm.model.trace_overlap import complete_events, intersection_s, is_communication, overlap_summary, union_s

intervals = st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 100)).map(lambda t: (float(t[0]), float(t[0] + t[1]))),
                     max_size=12)


def _covered(ivs, grid):
    return {x for x in grid if any(a <= x + 0.5 < b for a, b in ivs)}


@given(intervals, intervals)
def test_union_and_intersection_agree_with_counting_unit_cells(a, b):
    grid = range(0, 1100)
    assert union_s(a) == len(_covered(a, grid))
    assert intersection_s(a, b) == len(_covered(a, grid) & _covered(b, grid))
    assert intersection_s(a, b) <= min(union_s(a), union_s(b))


def _ev(name, ts, dur, **kw):
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, **kw}


def test_exposed_is_communication_outside_compute_inside_the_steps():
    trace = {"traceEvents": [
        _ev("gloo:barrier", -500, 400),              # before the steps: ignored
        _ev("step", 0, 100), _ev("step", 200, 100),
        _ev("compute", 0, 50), _ev("gloo:all_reduce", 10, 60),       # 40 under compute, 20 alone
        _ev("gloo:all_reduce", 200, 30), _ev("compute", 230, 60),    # 30 alone
        {"ph": "i", "name": "marker", "ts": 5},
    ]}
    s = overlap_summary(trace)
    assert round(s.comm_s * 1e6) == 90 and round(s.overlapped_s * 1e6) == 40 and round(s.exposed_comm_s * 1e6) == 50
    assert round(s.window_s * 1e6) == 200 and round(s.compute_s * 1e6) == 110
    assert s.overlap_fraction == pytest.approx(40 / 90) and s.exposed_share == pytest.approx(50 / 200)


def test_gpu_trace_uses_kernels_as_compute():
    trace = [_ev("ProfilerStep#1", 0, 1000, cat="user_annotation"),
             _ev("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 100, 300, cat="kernel"),
             _ev("sm90_xmma_gemm_bf16", 0, 250, cat="kernel"),
             _ev("compute", 0, 1000, cat="user_annotation")]   # a CPU-side label: not GPU compute
    s = overlap_summary(trace, step_label="ProfilerStep")
    assert round(s.overlapped_s * 1e6) == 150 and round(s.exposed_comm_s * 1e6) == 150


def test_enqueue_events_are_not_communication():
    assert not is_communication({"name": "c10d::allreduce_"}) and not is_communication({"name": "nccl:all_reduce"})
    assert is_communication({"name": "ncclKernel_AllReduce_RING_LL_Sum_float"})
    # NCCL 2.27+ symmetric-memory kernels (src/device/symmetric/generate.py, kernel_cname) are communication too
    assert is_communication({"name": "ncclSymkDevKernel_AllReduce_AGxLLMC_R_sum_bf16"})


@pytest.mark.parametrize("bad", [{"events": []}, 3, [{"ph": "X", "name": "a", "ts": "0", "dur": 1}]])
def test_malformed_traces_are_refused(bad):
    with pytest.raises(GpucommError):
        complete_events(bad)


def test_a_trace_without_communication_is_refused():
    with pytest.raises(GpucommError, match="no communication"):
        overlap_summary([_ev("compute", 0, 10)])


def test_backwards_interval_is_refused():
    with pytest.raises(GpucommError):
        union_s([(2.0, 1.0)])
