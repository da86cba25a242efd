"""Fitted calibration parameters are recomputed from the bundled published measurements."""

import csv
import math
import statistics
from importlib import resources

import pytest

from gpucomm.model.hardware import calibration as cal
from gpucomm.model.measurements import read_bundled_csv


def _rows(name):
    text = resources.files("gpucomm.model").joinpath("data", name).read_text()
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(lines))


def _case(case_id):
    return next(row for row in _rows("cases.csv") if row["id"] == case_id)


def test_ll_latency_line_is_the_least_squares_fit_of_nccl_tests_123():
    rows = _rows("dgxa100_ring_small_msg_latency_vs_gpus.csv")
    steps = [float(r["ring_steps_2(n-1)"]) for r in rows]
    lat = [float(r["measured_us"]) for r in rows]
    slope, intercept = statistics.linear_regression(steps, lat)
    assert cal.LL_STEP_LATENCY_S.value * 1e6 == pytest.approx(slope, abs=0.01)
    assert cal.LL_BASE_LATENCY_S.value * 1e6 == pytest.approx(intercept, abs=0.01)


def test_simple_latency_is_the_median_startup_cost_of_the_azure_a100_sweep():
    rows = _rows("azure_a100_allreduce_busbw.csv")
    peak = float(rows[-1]["busbw_GBps"]) * 1e9
    alphas = []
    for r in rows:
        size, n, busbw = int(r["bytes"]), int(r["n_gpus"]), float(r["busbw_GBps"]) * 1e9
        if 16 * 2**20 <= size <= 2**30:
            bus_bytes = size * 2 * (n - 1) / n
            alphas.append(bus_bytes / busbw - bus_bytes / peak)
    assert cal.SIMPLE_LATENCY_S.value == pytest.approx(statistics.median(alphas), rel=0.05)


@pytest.mark.parametrize("link,case_id,nominal", [("nvlink3", "C04", 300e9), ("nvlink4", "C06", 450e9)])
def test_ring_efficiency_is_measured_busbw_over_nominal(link, case_id, nominal):
    assert cal.RING_EFFICIENCY[link].value == pytest.approx(float(_case(case_id)["busbw_GBps"]) * 1e9 / nominal, abs=0.01)


def test_pcie_p2p_efficiency_is_measured_busbw_over_the_pcie5_x16_rate():
    # case P06: 8x RTX PRO 6000 behind PCIe 5.0 switches, ring all_reduce with P2P
    x16 = 32e9 * 128 / 130 / 8 * 16
    assert cal.PCIE_P2P_EFFICIENCY.value == pytest.approx(float(_case("P06")["busbw_GBps"]) * 1e9 / x16, abs=0.005)


def test_host_staged_efficiency_lies_in_the_measured_range_of_c07():
    # DGX H100 with NCCL_P2P_DISABLE=1: 24.0 GB/s at 1 GiB down to 20.0 GB/s at 8 GiB, over PCIe 5.0 x16 (63 GB/s)
    assert 20.0 / 63.0 <= cal.HOST_STAGED_EFFICIENCY.value <= float(_case("C07")["busbw_GBps"]) / 63.0


def test_nvls_efficiency_comes_from_the_maintainers_figure_and_holds_on_the_h200_sweep():
    n = 8
    eff = float(_case("C10")["algbw_GBps"]) * (1 + 1 / n) / 450
    assert cal.NVLS_EFFICIENCY.value == pytest.approx(eff, abs=0.001)
    rows = _rows("mleng_8xH200_torch_allreduce.csv")
    # out of sample: the H200 sweep's 16 GiB algbw is within 1 % of what the efficiency gives
    assert 450 * cal.NVLS_EFFICIENCY.value / (1 + 1 / n) == pytest.approx(float(rows[-1]["algbw_GBps"]), rel=0.01)


def test_host_staged_step_latency_from_the_rtx4090_chain():
    c26 = _case("C26")
    steps = 2 * (int(c26["n_gpus"]) - 1)  # NCCL's tree inside a node is a chain
    expected = (float(c26["time_us"]) - cal.LL_BASE_LATENCY_S.value * 1e6) / steps
    assert cal.LL_STEP_LATENCY_HOST_STAGED_S.value * 1e6 == pytest.approx(expected, abs=0.01)


def test_network_step_latency_from_the_dgx_spark_pair():
    c29 = _case("C29")
    expected = (float(c29["time_us"]) - cal.LL_BASE_LATENCY_S.value * 1e6) / 2  # ring of 2 nodes: 2 steps
    assert cal.NET_STEP_LATENCY_S.value * 1e6 == pytest.approx(expected, abs=0.05)


# --- the fits of the latency scale, the NVLS fill and the TCPXO latency, recomputed from their sweeps ----------------

def _sweep_points(sweep_id, lo_bytes, hi_bytes, *, host_floor=True):
    from dataclasses import replace

    from gpucomm.model.validation import SWEEPS, _sweep

    sweep = next(s for s in SWEEPS if s.sweep_id == sweep_id)
    if not host_floor:  # as the latency scales were fitted: every time taken as the GPUs'
        sweep = replace(sweep, gpus_per_thread=1)
    return [r for r in _sweep(sweep) if lo_bytes <= r.msg_bytes < hi_bytes]


@pytest.mark.parametrize("key,sweep_id", [("nvlink4", "S04"), ("nvlink5", "S05"), ("net", "S01"), ("roce", "S14")])
def test_each_latency_scale_makes_its_sweeps_median_ratio_one_below_1_mib(key, sweep_id):
    # the fitting criterion: the median predicted/measured time over the sweep's sizes below 1 MiB is 1.0; a scale
    # 0.05 off either way moves it by more than the tolerance (the latency is most of the time there). The scales
    # were fitted with the host thread's floor left out (calibration.TUNER_LATENCY_SCALE's notes say so)
    points = _sweep_points(sweep_id, 0, 2**20, host_floor=False)
    assert len(points) >= 5 and all(r.in_sample for r in points)
    assert statistics.median(r.predicted / r.measured for r in points) == pytest.approx(1.0, abs=0.025)


def test_nvlink3_latency_scale_is_the_log_least_squares_fit_on_the_one_thread_per_gpu_times(monkeypatch):
    from dataclasses import replace

    from gpucomm.model.validation import CASES, _predict

    cases = [c for c in CASES if c.case_id.startswith("C22t-")]
    assert len(cases) == 3 and all(c.in_sample for c in cases)

    def misfit(scale):
        monkeypatch.setitem(cal.TUNER_LATENCY_SCALE, "nvlink3",
                            replace(cal.TUNER_LATENCY_SCALE["nvlink3"], value=scale))
        return sum(math.log(_predict(c).predicted / c.measured) ** 2 for c in cases)

    fitted = cal.TUNER_LATENCY_SCALE["nvlink3"].value
    best = misfit(fitted)
    assert best < misfit(fitted - 0.02) and best < misfit(fitted + 0.02)
    assert cal.TUNER_LATENCY_SCALE["nvlink"].value == fitted  # links without data take it


def test_pci_latency_is_nccls_own_and_matches_pcie_out_of_sample():
    from gpucomm.model.validation import validate

    assert cal.TUNER_LATENCY_SCALE["pci"].value == 1.0
    by_id = {r.case_id: r for r in validate()}
    # a CUDA graph, 4 KiB: NCCL's latency with the LL transfer overlapped (cost.CUT_THROUGH_PROTOCOLS) is 17 % fast
    assert not by_id["C41"].in_sample and -0.20 < by_id["C41"].error < 0
    # P01s ran 8 GPUs from one process: the host floor (fitted on a DGX A100's EPYC Rome) sets it, and its EPYC
    # Turin launches faster, so the model is high there; still within the small-message target's factor 1.5
    assert not by_id["P01s"].in_sample and 1.0 < by_id["P01s"].factor < 1.5


def test_host_launch_per_gpu_is_the_line_through_the_origin_of_nccl_tests_123():
    rows = read_bundled_csv("dgxa100_ring_small_msg_latency_vs_gpus.csv")[0]
    g = [int(r["n_gpus"]) for r in rows]
    t = [float(r["measured_us"]) * 1e-6 for r in rows]
    slope = sum(x * y for x, y in zip(g, t)) / sum(x * x for x in g)
    assert cal.HOST_LAUNCH_PER_GPU_S.value == pytest.approx(slope, rel=0.005)


def test_host_cost_per_channel_is_the_slope_of_the_a100_all_gather_and_holds_for_its_siblings():
    from gpucomm.model.validation import host_cost_per_channel_s

    assert cal.HOST_LAUNCH_PER_CHANNEL_S.value == pytest.approx(host_cost_per_channel_s("S09"), rel=0.01)
    # the same run's all_reduce and reduce_scatter (the same host, other collectives) give the same slope within 5 %
    for sibling in ("S08", "S10"):
        assert host_cost_per_channel_s(sibling) == pytest.approx(cal.HOST_LAUNCH_PER_CHANNEL_S.value, rel=0.05)
    # from 2.13 (2.18-2.29 here) single-process runs rise by at most a fifth of it per channel
    for newer in ("Azure A100x8", "S05", "S11", "S12", "S13"):
        assert 0 < host_cost_per_channel_s(newer) < 0.25 * cal.HOST_LAUNCH_PER_CHANNEL_S.value, newer


def test_host_cost_per_channel_applies_before_nccl_2_13_only():
    from gpucomm.model.cost import collective_cost

    def floor_us(version, size):
        return collective_cost("all_gather", size, num_ranks=8, fabric="nvlink3", nccl_version=version,
                               gpus_per_thread=8).host_floor_s * 1e6

    per_gpu = cal.HOST_LAUNCH_PER_GPU_S.value * 1e6
    assert floor_us("2.13.4", 2**20) == pytest.approx(8 * per_gpu) == floor_us("2.30.7", 2**20)
    assert floor_us("2.12.12", 2**20) - floor_us("2.12.12", 32 * 2**10) == pytest.approx(
        8 * 23 * cal.HOST_LAUNCH_PER_CHANNEL_S.value * 1e6)  # 24 channels against 1
    assert collective_cost("all_gather", 2**20, num_ranks=8, fabric="nvlink3", nccl_version="2.10.3",
                           gpus_per_thread=8, launch="graph").host_floor_s == 0.0


def test_single_process_sweeps_share_one_floor_across_collectives():
    # the evidence that the small-message floor of nccl-tests -g N is the host's: all_reduce (2(n-1) steps),
    # all_gather and reduce_scatter (n-1) take the same time below 16 KiB in one run
    from gpucomm.model.validation import small_message_floor_us

    for run in (("S08", "S09", "S10"), ("S11", "S12", "S13")):
        floors = [small_message_floor_us(log) for log in run]
        assert max(floors) / min(floors) < 1.10, (run, floors)


def test_nvls_fill_minimises_the_mean_error_of_the_h200_v5_mid_band(monkeypatch):
    from dataclasses import replace

    def mean_error(chunks):
        monkeypatch.setattr(cal, "NVLS_PIPELINE_FILL_CHUNKS", replace(cal.NVLS_PIPELINE_FILL_CHUNKS, value=chunks))
        points = [r for r in _sweep_points("S04", 2**20, 64 * 2**20) if r.algorithm == "nvls"]
        return statistics.mean(abs(r.error) for r in points)

    fitted = cal.NVLS_PIPELINE_FILL_CHUNKS.value
    errors = {chunks: mean_error(chunks) for chunks in range(1, 9)}
    assert min(errors, key=errors.get) == fitted


def test_tcpxo_latency_reproduces_the_8_byte_floor_of_c08():
    from gpucomm.model.validation import validate

    c08s = next(r for r in validate() if r.case_id == "C08s")
    assert c08s.in_sample and c08s.predicted == pytest.approx(c08s.measured, rel=0.02)
