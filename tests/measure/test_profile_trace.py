"""The profiler lab's worker (``gpucomm.measure.profile_trace``): real traces from 2 gloo ranks, read by the model."""

from __future__ import annotations

import json

import pytest

from gpucomm import GpucommError
from gpucomm.measure.profile_trace import VARIANTS, ProfileConfig, profile_all_reduce
from gpucomm.model.trace_overlap import overlap_summary


@pytest.mark.parametrize("kwargs", [{"msg_bytes": 6}, {"steps": 0}, {"matmuls": -1}, {"timeout_s": 0}])
def test_bad_config_is_refused_before_any_process(kwargs):
    with pytest.raises(GpucommError):
        ProfileConfig(**kwargs).validate()


def test_bad_rank_count_and_missing_dir_are_refused(tmp_path):
    with pytest.raises(GpucommError, match="num_ranks"):
        profile_all_reduce(1)
    with pytest.raises(GpucommError, match="trace_dir"):
        profile_all_reduce(2, trace_dir=tmp_path / "absent")


def test_two_ranks_profile_both_variants(tmp_path):
    config = ProfileConfig(msg_bytes=2**20, matmuls=2, matmul_n=128, steps=2, warmup_steps=1)
    traces = profile_all_reduce(2, config, trace_dir=tmp_path)
    assert len(traces) == 2
    for rank, by_variant in enumerate(traces):
        assert tuple(by_variant) == VARIANTS
        for variant, trace in by_variant.items():
            on_disk = json.loads((tmp_path / f"{variant}_rank{rank}.json").read_text())
            assert on_disk == trace
            s = overlap_summary(trace)
            assert s.comm_events >= config.steps  # one gloo:all_reduce per step, on gloo's thread
            assert 0 < s.comm_s <= s.window_s and 0 < s.compute_s <= s.window_s
            assert 0 <= s.overlapped_s <= min(s.comm_s, s.compute_s)
        # the serial step cannot overlap: its all_reduce returns before the compute starts (gloo's thread may close
        # its event a few microseconds after it signalled completion)
        serial = overlap_summary(by_variant["serial"])
        assert serial.overlapped_s <= 0.05 * serial.comm_s
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{v}_rank{r}.json" for v in VARIANTS for r in (0, 1))
