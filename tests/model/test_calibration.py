"""The one calibration: the committed file is what the joint fit, its leave-one-out refits and its band give."""

import math
import statistics

import pytest

from gpucomm.model import calibrate as c
from gpucomm.model import validation as v
from gpucomm.model.hardware import calibration as cal

COMMITTED = cal.read_calibration()


@pytest.fixture(scope="module")
def results():
    return v.validate()


@pytest.fixture(scope="module")
def affected():
    return c.affected_units(v.units())


def test_the_model_reads_every_free_parameter_from_the_committed_file_within_its_bounds():
    free = {f.name: f for f in cal.FREE_PARAMETERS}
    assert set(COMMITTED["parameters"]) == set(free)
    assert cal.free_values() == {k: p["value"] for k, p in COMMITTED["parameters"].items()}
    for name, p in COMMITTED["parameters"].items():
        assert free[name].low <= p["value"] <= free[name].high, name
        assert p["bounds"] == [free[name].low, free[name].high]
    # provenance: the data, the method, the date and both errors are recorded
    assert COMMITTED["date"] and "Huber" in COMMITTED["method"] and COMMITTED["script"] == "scripts/calibrate.py"
    assert set(COMMITTED["data"]["units"]) == set(v.units())
    assert {"in_sample", "leave_one_out"} <= set(COMMITTED["errors"])


def test_fewer_free_parameters_than_the_21_fits_before_the_joint_calibration():
    assert len(cal.FREE_PARAMETERS) + len(COMMITTED["alpha_beta"]) < 21
    assert "pipeline_fill_fraction" in COMMITTED["removed"]


def test_no_free_parameter_rests_on_one_point(affected):
    # each acts on several sweeps or case rows (units), so none is set by a single measurement
    for name, units in affected.items():
        assert len(units) >= 3, (name, units)
    assert {name: sorted(us) for name, us in affected.items()} == \
        {k: p["acts_on"] for k, p in COMMITTED["parameters"].items()}


def test_the_shared_nvlink_latency_scale_is_one_parameter_and_the_derived_values_follow_the_fits():
    scales = {cal.TUNER_LATENCY_SCALE[k].value for k in ("nvlink3", "nvlink4", "nvlink5", "nvlink")}
    assert scales == {COMMITTED["parameters"]["tuner_latency_scale_nvlink"]["value"]}
    eff = COMMITTED["parameters"]
    assert cal.DEFAULT_NVLINK_RING_EFFICIENCY.value == pytest.approx(
        (eff["ring_efficiency_nvlink3"]["value"] + eff["ring_efficiency_nvlink4"]["value"]) / 2)
    with cal.using({"tuner_latency_scale_shm": 1.5, "tuner_latency_scale_net": 2.0}):
        assert cal.LL_STEP_LATENCY_HOST_STAGED_S.value == pytest.approx(1.5e-6)
        assert cal.NET_STEP_LATENCY_S.value == pytest.approx(5.4e-6)
    assert cal.free_values() == {k: p["value"] for k, p in COMMITTED["parameters"].items()}


def test_using_changes_the_model_and_restores_it():
    from gpucomm.model.cost import collective_cost

    def t():
        return collective_cost("all_reduce", 2**30, num_ranks=8, fabric="nvlink4", algorithm="ring").time_s

    before = t()
    with cal.using({"ring_efficiency_nvlink4": 0.6}):
        assert t() > before * 1.1
    assert t() == before
    with pytest.raises(KeyError):
        with cal.using({"launch_eager_s": 1e-6}):
            pass


def test_the_joint_fit_is_a_minimum_of_its_loss(affected):
    # one step of a tenth of a percent of the range either way of every fitted value raises the loss (or the value
    # sits on a bound): the committed values are the fit's
    units = v.units()
    fitted = cal.free_values()
    for f in cal.FREE_PARAMETERS:
        names = sorted(affected[f.name])
        base = c._unit_loss(units, names)
        step = 0.01 * (f.high - f.low)
        for x in (fitted[f.name] - step, fitted[f.name] + step):
            if f.low <= x <= f.high:
                with cal.using({f.name: x}):
                    assert c._unit_loss(units, names) >= base - 1e-9, (f.name, x)


@pytest.mark.slow
def test_the_fit_recomputed_from_other_starting_values_lands_on_the_committed_one(affected):
    # from every parameter moved a tenth of its range, the fit returns to the committed values (to 2 % of the range)
    units = v.units()
    fitted = cal.free_values()
    start = {f.name: min(f.high, max(f.low, fitted[f.name] + 0.1 * (f.high - f.low))) for f in cal.FREE_PARAMETERS}
    with cal.using(start):
        again = c.fit(units, start, affected=affected)
    for f in cal.FREE_PARAMETERS:
        assert again[f.name] == pytest.approx(fitted[f.name], abs=0.02 * (f.high - f.low)), f.name


@pytest.mark.slow
def test_leave_one_out_folds_are_recomputed(affected):
    # every fourth unit (by name) of the committed folds, refitted here: each fold is the same computation, so a
    # quarter of them checks the committed file at a quarter of the cost (scripts/calibrate.py recomputes them all)
    units = v.units()
    which = sorted(units)[::4]
    folds = c.leave_one_out(units, cal.free_values(), affected=affected, which=which)
    assert set(folds) == set(which) and len(which) >= 10
    assert folds == {u: COMMITTED["folds"][u] for u in which}


def test_validate_predicts_each_unit_with_its_fold(results):
    by_unit = {}
    for r in results:
        by_unit.setdefault(r.unit, []).append(r)
    assert set(by_unit) == set(COMMITTED["folds"])
    moved = [u for u, fold in COMMITTED["folds"].items() if fold]
    assert len(moved) > len(by_unit) // 2  # most units move some parameter when left out
    for u in moved:
        assert any(r.predicted != r.fit_predicted for r in by_unit[u]), u
    for u, fold in COMMITTED["folds"].items():
        if not fold:
            assert all(r.predicted == r.fit_predicted for r in by_unit[u]), u


def test_the_recorded_errors_are_the_validation_figures(results):
    assert COMMITTED["errors"]["leave_one_out"] == c.error_summary(results, out_of_sample=True)
    assert COMMITTED["errors"]["in_sample"] == c.error_summary(results, out_of_sample=False)


def test_the_band_is_the_quantiles_of_the_leave_one_out_residuals_and_holds_75_to_85_percent(results):
    assert COMMITTED["band"]["cells"] == c.band_cells(results)
    coverage = v.band_coverage(results)
    assert 0.75 <= coverage <= 0.85, coverage
    for transport in cal.TRANSPORTS:
        for band, _, _ in cal.SIZE_BANDS:
            low, high = cal.prediction_band(transport, 2 ** 10 if band == "< 1 MiB" else 2**24 if band == "1-64 MiB" else 2**30)
            assert 0 < low < 1 < high < 10, (transport, band)


def test_alpha_beta_fits_are_recomputed_from_their_data():
    assert COMMITTED["alpha_beta"] == c.alpha_beta_fits()
    assert cal.LL_BASE_LATENCY_S.value == COMMITTED["alpha_beta"]["ll_base_latency_s"]["value"]
    assert cal.SIMPLE_LATENCY_S.value == COMMITTED["alpha_beta"]["simple_latency_s"]["value"]
    # each rests on several points
    assert all(int(a["data"].split("(")[1].split()[0]) >= 7 for a in COMMITTED["alpha_beta"].values())


def test_the_tcpxo_latency_is_read_off_its_sweeps_floor_not_fitted_on_one_point():
    # not a free parameter: recomputed from the C08 log's sizes up to 4 KiB (10 sizes), with the committed free values;
    # that sweep is shown but does not count (its mid sizes follow Google's tuner plugin), and C08s, the floor's 8 B
    # row, is the only case in sample and no fit point
    from gpucomm.model.hardware.network import TCPXO_LATENCY_S

    assert "tcpxo_latency_s" not in {f.name for f in cal.FREE_PARAMETERS}
    got = c.floor_fits()
    assert got == COMMITTED["floor_fits"]
    assert "10 sizes" in got["tcpxo_latency_s"]["data"]
    assert cal.NET_PLUGIN_LATENCY_S["tcpxo_200g"].value == TCPXO_LATENCY_S == got["tcpxo_latency_s"]["value"]
    assert next(s for s in v.SWEEPS if s.sweep_id == "C08").disturbed
    results = v.unit_results(v.units()["C08"])
    assert [r.case_id for r in results if r.in_sample] == ["C08s"]
    assert "C08s" not in {r.case_id for r in v.fit_points(results)}


def test_huber_is_quadratic_inside_delta_and_linear_beyond():
    assert c.huber(0.05) == pytest.approx(0.00125)
    d = c.HUBER_DELTA
    assert c.huber(2 * d) - c.huber(d) == pytest.approx(c.huber(3 * d) - c.huber(2 * d))
    assert c.huber(-0.3) == c.huber(0.3)


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
    for run in (("S08", "S09", "S10"), ("S11", "S12", "S13")):
        floors = [v.small_message_floor_us(log) for log in run]
        assert max(floors) / min(floors) < 1.10, (run, floors)


def test_fitted_host_floor_lies_between_the_single_process_hosts_floors():
    # the floor per GPU is one value for every host: between the fastest and slowest single-process floors per GPU
    per_gpu = [v.small_message_floor_us(log) / g for log, g in (("S08", 8), ("S11", 4), ("S06", 8), ("S19", 4))]
    assert min(per_gpu) <= cal.HOST_LAUNCH_PER_GPU_S.value * 1e6 <= max(per_gpu)


def test_log_residuals_of_the_fit_points_are_centred(results):
    # a joint fit of relative errors leaves the in-sample residuals' median near zero
    pts = v.fit_points(results)
    assert abs(statistics.median(math.log(r.fit_predicted / r.measured) for r in pts)) < 0.05
