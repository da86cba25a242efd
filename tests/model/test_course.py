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


def test_checked_on_counts_the_runs_of_one_transport_and_says_how_they_were_predicted():
    from gpucomm.model.course import checked_on

    members = (SimpleNamespace(sweep_id="A", fabric=make_fabric("nvlink3")),
               SimpleNamespace(sweep_id="P", fabric=make_fabric("pcie4")),
               SimpleNamespace(case_id="K", fabric=make_fabric("nvlink4")))
    results = [SimpleNamespace(sweep="A", case_id="A 1MiB", counted=True, measured=10.0, predicted=11.0, error=0.1,
                               fit_predicted=10.5),
               SimpleNamespace(sweep="A", case_id="A 2MiB", counted=False, measured=10.0, predicted=20.0, error=1.0),
               SimpleNamespace(sweep="P", case_id="P 1MiB", counted=True, measured=10.0, predicted=5.0, error=-0.5),
               SimpleNamespace(sweep="", case_id="K", counted=True, measured=10.0, predicted=7.0, error=-0.3,
                               fit_predicted=7.0)]
    got = checked_on(results, members, transport="nvlink")
    assert (got.runs, got.points, got.held_out) == (2, 2, True)
    assert got.median_abs_error == pytest.approx(0.2) and got.in_sample_median_abs_error == pytest.approx(0.175)
    assert "2 measured points of 2 published runs" in got.sentence and "left out" in got.sentence
    pcie = checked_on(results, members, transport="pcie")
    assert (pcie.points, pcie.held_out) == (1, False) and "in sample" in pcie.sentence
    with pytest.raises(GpucommError, match="transport must be"):
        checked_on(results, members, transport="nvlink9")
    with pytest.raises(GpucommError, match="no counted validation point on network"):
        checked_on(results, members, transport="network")


def test_case_rows_name_the_system_and_refuse_an_unknown_case():
    from gpucomm.model.course import case_rows
    from gpucomm.model.measurements import case

    results = [SimpleNamespace(case_id="C07", metric="busbw", measured=20.0, predicted=25.0)]
    (row,) = case_rows(results, ["C07"])
    assert row["system"] == case("C07")["hardware"] and "C07" not in row.values()
    assert (row["measured busbw (GB/s)"], row["model busbw (GB/s)"], row["model / measured"]) == (20.0, 25.0, 1.25)
    with pytest.raises(GpucommError, match="no validation result for case 'C05'"):
        case_rows(results, ["C05"])


def test_serving_figures_convert_the_estimate_to_the_tables_units():
    from gpucomm.model.course import serving_figures
    from gpucomm.model.planning import serving_estimate

    e = serving_estimate("llama-3-8b", make_fabric("nvlink4", gpu="h100_sxm5"), tp_size=2, batch=4)
    got = serving_figures(e)
    assert got["fits"] == ("yes" if e.fits_memory else "no")
    assert (got["mem"], got["cap"], got["ttft"]) == (e.mem_bytes_per_gpu / 1e9, e.gpu_mem_bytes / 1e9, e.time_to_first_token_s * 1e3)
    assert got["comm"] == 100 * e.decode_comm_share and got["user"] == e.tokens_per_s_per_user and got["gpu"] == e.tokens_per_s_per_gpu


def test_scale_out_share_per_gpu_divides_the_nics_among_the_gpus():
    from gpucomm.model.course import scale_out_bw_per_gpu_bytes_per_s
    from gpucomm.model.hardware import get_network, get_system

    for key in ("dgx_h100", "gb200_nvl72"):
        spec = get_system(key)
        expected = get_network(spec.nic_key).bw_bytes_per_s * spec.num_nics / spec.num_gpus
        assert scale_out_bw_per_gpu_bytes_per_s(key) == pytest.approx(expected)
    with pytest.raises(GpucommError):
        scale_out_bw_per_gpu_bytes_per_s("no_such_system")


def test_first_slower_size_is_the_first_power_of_two_where_the_order_flips():
    from gpucomm.model.cost import collective_cost
    from gpucomm.model.course import first_slower_size

    size = first_slower_size("all_reduce", "one_shot", than="two_shot", num_ranks=8, fabric="nvlink4")

    def t(n, algorithm):
        return collective_cost("all_reduce", n, num_ranks=8, fabric="nvlink4", algorithm=algorithm).time_s

    assert t(size, "one_shot") > t(size, "two_shot")
    assert size == 2**10 or t(size // 2, "one_shot") <= t(size // 2, "two_shot")
    with pytest.raises(GpucommError, match="not slower"):
        first_slower_size("all_reduce", "one_shot", than="two_shot", num_ranks=8, fabric="nvlink4", max_bytes=size // 2)
