"""The accuracy figures the chapters quote come from the validation results, band by band."""

from types import SimpleNamespace

import pytest

from gpucomm import GpucommError
from gpucomm.model.course import band_error
from gpucomm.model.fabric import make_fabric

SWEEPS = (SimpleNamespace(sweep_id="A", fabric=make_fabric("nvlink3"), collective="all_reduce"),
          SimpleNamespace(sweep_id="B", fabric=make_fabric("nvlink4"), collective="all_reduce"),
          SimpleNamespace(sweep_id="C", fabric=make_fabric("nvlink3"), collective="all_gather"))


def point(sweep, size, error, *, counted=True, metric="time"):
    return SimpleNamespace(sweep=sweep, msg_bytes=size, error=error, counted=counted, metric=metric)


def test_band_error_keeps_the_link_collective_and_band():
    results = [point("A", 2**20, -0.3), point("A", 2**22, -0.1), point("A", 2**24, -0.2), point("A", 2**30, 0.9),
               point("B", 2**22, 0.5), point("C", 2**22, 0.5), point("A", 2**22, 0.7, counted=False)]
    got = band_error(results, SWEEPS, link="nvlink3", low_bytes=2**20, high_bytes=2**26)
    assert (got.median_error, got.count, got.sweeps) == (pytest.approx(-0.2), 3, ("A",))


def test_band_error_refuses_an_empty_band():
    with pytest.raises(GpucommError, match="no all_reduce sweep point"):
        band_error([point("B", 2**22, 0.5)], SWEEPS, link="nvlink3", low_bytes=2**20, high_bytes=2**26)
    with pytest.raises(GpucommError, match="above"):
        band_error([], SWEEPS, link="nvlink3", low_bytes=2, high_bytes=1)


def test_band_error_on_the_bundled_a100_sweeps():
    from gpucomm.model.validation import SWEEPS as REAL
    from gpucomm.model.validation import validate

    got = band_error(validate(), REAL, link="nvlink3", low_bytes=2**20, high_bytes=64 * 2**20)
    assert got.count >= 7 and len(got.sweeps) >= 1


def test_protocol_bands_follow_the_model_size_by_size():
    from gpucomm.model.cost import collective_cost
    from gpucomm.model.course import protocol_bands

    bands = protocol_bands("all_reduce", num_ranks=8, fabric="nvlink4", max_bytes=2**30)
    assert bands[0] == ("LL", 8) and len({p for p, _ in bands}) == len(bands)
    for (protocol, start), nxt in zip(bands, [*bands[1:], (None, 2**31)]):
        for size in (start, nxt[1] // 2):
            assert collective_cost("all_reduce", size, num_ranks=8, fabric="nvlink4", algorithm="ring").protocol == protocol
    with pytest.raises(GpucommError, match="at least 8"):
        protocol_bands("all_reduce", num_ranks=8, fabric="nvlink4", max_bytes=4)


def test_algorithms_for_keeps_what_implements_the_collective():
    from gpucomm.model.course import algorithms_for

    assert algorithms_for("all_reduce", ("ring", "binary_tree", "one_shot"), num_ranks=8) == ("ring", "one_shot")
    assert "binary_tree" in algorithms_for("broadcast", ("ring", "binary_tree"), num_ranks=8)
