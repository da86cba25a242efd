"""The model against published measurements, and every headline number of the source articles (NVIDIA's blog on
NVSwitch and LLM inference, the 4x A100 Llama-3-70B TP=4 measurement)."""

import pytest

from gpucomm.model.cost import pair_bw_bytes_per_s
from gpucomm.model.fabric import make_fabric
from gpucomm.model.hardware import get_link
from gpucomm.model.tp import tp_forward_comm
from gpucomm.model.validation import CASES, summarize, validate


@pytest.fixture(scope="module")
def results():
    return validate()


def test_every_case_maps_to_a_bundled_measurement(results):
    assert len([r for r in results if r.case_id in {c.case_id for c in CASES}]) == len(CASES)
    assert all(r.measured > 0 and r.predicted > 0 for r in results)


def test_large_message_nvlink_busbw_within_15_percent_out_of_sample(results):
    summary = {s.group: s for s in summarize(results)}
    assert summary["nvlink_large"].median_abs_error < 0.10  # the issue's figure, on the median
    for r in results:
        if r.group == "nvlink_large" and r.counted:
            assert abs(r.error) < 0.15, r  # the project's figure for every case (the issue's 10 %: 11 of 12 meet it)
    # the 2080 Ti bridge that could not be plugged in fully (C28): shown, not counted, and far below the model
    c28 = next(r for r in results if r.case_id == "C28")
    assert not c28.counted and c28.error > 0.5 and "could not be plugged in fully" in c28.why


def test_large_message_pcie_busbw_within_40_percent_out_of_sample(results):
    summary = {s.group: s for s in summarize(results)}
    assert summary["pcie_large"].median_abs_error < 0.40
    # the A40 server's staged path (NODE, SYS) and 4 GPUs sharing a host's memory: documented misses
    explained = {"C02", "C03", "P03", "P05"}
    for r in results:
        if r.group == "pcie_large" and r.case_id not in explained:
            assert abs(r.error) < 0.40, r
    assert summary["pcie_large"].within_target == summary["pcie_large"].count - len(explained)


def test_summary_counts_cases_meeting_each_target(results):
    summary = {s.group: s for s in summarize(results)}
    assert summary["nvlink_large"].target == "|error| < 15 %" and summary["small_latency"].target == "within 2x"
    small = [r for r in results if r.group == "small_latency" and not r.in_sample and r.counted]
    assert summary["small_latency"].within_target == sum(r.factor < 2 for r in small)
    assert summary["sweep"].within_target is None and summary["sweep"].target == ""


HELD_SWEEPS = {"H200x8", "S16", "S04", "S05"}
"""Single-node sweeps and the multi-node ones (S01, S02), each held to 35 % at every size above 64 KiB out of
sample (leave-one-sweep-out: the NVLink latency scale, one for every generation, leaves the Azure H200 sweep S04 33 %
slow at 132 KiB); S03 is a disturbed run, reported and not counted. The 8x A100 sweeps are not held:
from 4 to 32 MiB the model is well short of them."""


def test_sweeps_within_35_percent_everywhere(results):
    for r in results:
        if r.group == "sweep" and r.sweep in HELD_SWEEPS:
            assert abs(r.error) < 0.35, r
        if r.group == "sweep" and r.sweep in ("S01", "S02"):
            assert abs(r.error) < 0.35, r


def test_every_declared_sweep_is_compared_and_reported(results):
    from gpucomm.model.validation import SWEEPS, sweep_bands

    names = [s.sweep_id for s in SWEEPS]
    assert len(names) == len(set(names)) and {"S01", "S02", "S03", "S04", "S05", "S06", "S07"} <= set(names)
    bands = sweep_bands(results)
    for s in SWEEPS:
        points = [r for r in results if r.sweep == s.sweep_id]
        assert len(points) >= 8, s.sweep_id  # a sweep, not a point: sizes over at least a factor of 256
        assert {b.sweep for b in bands if b.sweep == s.sweep_id} == {s.sweep_id}
        assert all(r.unit == s.sweep_id and not r.in_sample for r in points)
    assert next(s for s in SWEEPS if s.sweep_id == "S03").collective == "all_gather"


def test_every_figure_is_leave_one_out_and_the_in_sample_one_is_kept_beside_it(results):
    # every result's prediction is the model refitted without its sweep or case row; only C08s rests on a value read
    # off its own log's floor outside the joint fit (calibration.NET_PLUGIN_LATENCY_S), and says so
    assert {r.case_id for r in results if r.in_sample} == {"C08s"}
    assert all(r.fit_predicted > 0 for r in results)
    assert sum(r.predicted != r.fit_predicted for r in results) > len(results) // 2


def test_accuracy_is_reported_by_size_band_transport_and_generation(results):
    from gpucomm.model.validation import accuracy

    acc = accuracy(results)
    assert acc[0].by == "all" and acc[0].points == sum(a.points for a in acc if a.by == "size band")
    assert {a.group for a in acc if a.by == "transport"} == {"nvlink", "pcie", "network"}
    assert {"Ampere", "Hopper", "Blackwell"} <= {a.group for a in acc if a.by == "generation"}
    for by in ("size band", "transport", "generation"):
        assert sum(a.points for a in acc if a.by == by) == acc[0].points
    # out of sample is no better than in sample overall
    assert acc[0].median_abs_error >= acc[0].in_sample_median_abs_error - 1e-9


def test_small_message_latency_within_factor_2_on_nvlink_and_pcie(results):
    # C29 (RoCE) was one until the RoCE sweep S14 gave RoCE its own latency scale; a forced LL128 with one thread per
    # GPU is 2.6x: the NVLink 3 scale, fitted on a single-process run, overstates it (the case says so)
    explained = {"C22t-LL128"}
    for r in results:
        if r.group == "small_latency" and r.case_id not in explained and r.sweep in HELD_SWEEPS | {""}:
            assert r.factor < 2, r


def test_misses_are_explained(results):
    for r in results:
        if abs(r.error) > 0.4:
            assert r.why, f"{r.case_id} misses by {r.error:+.0%} without an explanation"


def test_nvidia_blog_p2p_mesh_vs_nvswitch_table():
    # NVIDIA's blog (NVLink and NVSwitch supercharge LLM inference, Aug 2024):
    # on a P2P mesh of 8 H200, each GPU splits 900 GB/s into 7 x 128 GB/s
    mesh = make_fabric("nvlink4", topology="mesh", mesh_size=8)
    pair_bidir = 2 * pair_bw_bytes_per_s(mesh) / 1e9
    assert pair_bidir == pytest.approx(128, rel=0.01)
    # ... so 20 GB over one 128 GB/s pair takes ~150 ms, over NVSwitch's 900 GB/s ~22 ms (both quoted both-ways)
    assert 20e9 / (pair_bidir * 1e9) * 1e3 == pytest.approx(150, rel=0.05)
    assert 20e9 / get_link("nvlink4").bidir_marketing_bytes_per_s * 1e3 == pytest.approx(22, rel=0.02)


def test_llama70b_tp4_4xa100_numbers():
    nv = tp_forward_comm("llama-3-70b", tp_size=4, num_tokens=4096, fabric="nvlink3")
    pc = tp_forward_comm("llama-3-70b", tp_size=4, num_tokens=4096, fabric=make_fabric("pcie4", p2p=False))
    assert nv.msg_bytes == 64 * 2**20 and nv.all_reduces_per_pass == 160
    assert nv.comm_per_pass_s == pytest.approx(0.096, rel=0.22)   # the 4x A100 article: ~96 ms; the model ~15 % fast
    assert pc.comm_per_pass_s == pytest.approx(1.8, rel=0.25)     # the 4x A100 article: ~1.8 s


def test_validation_figure_keeps_case_order_and_shows_every_target(results):
    pytest.importorskip("plotly")
    from gpucomm.viz.figures.validation import validation_figure

    fig = validation_figure(results)
    cases = [r for r in results if not r.sweep]
    assert list(fig.layout.xaxis.categoryarray) == [r.case_id for r in cases]
    assert sum(len(t.x) for t in fig.data) == len(cases)
    assert all(t.marker.symbol[0] == "circle" for t in fig.data)  # the legend shows a filled (out-of-sample) marker
    title = fig.layout.title.text
    assert "within 15 %" in title and "within 40 %" in title and "within 2x" in title


def test_sweep_figure_draws_every_sweep_point_and_marks_fits_and_disturbed_runs(results):
    pytest.importorskip("plotly")
    from gpucomm.viz.figures.validation import sweep_validation_figure

    fig = sweep_validation_figure(results)
    points = [r for r in results if r.sweep]
    assert sum(len(t.x) for t in fig.data) == len(points) and len(fig.data) == len({r.sweep for r in points})
    by_sweep = {t.name.split(":")[0]: t for t in fig.data}
    assert set(by_sweep["S03"].marker.symbol) == {"x-thin-open"}          # disturbed: shown, not counted
    assert set(by_sweep["S04"].marker.symbol) == {"circle"}                # leave-one-out: every point out of sample
    assert set(by_sweep["H200x8"].marker.symbol) == {"circle"}
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_sweep_targets_of_the_model_issue_out_of_sample(results):
    from gpucomm.model.validation import SWEEPS, nvlink_sweep_ids, sweep_bands, targets

    # leave-one-sweep-out over every sweep, against the issue's done-when figures: from 64 MiB the band is met; below
    # 64 MiB it is not (single-process hosts' floors below 1 MiB, the 8x A100 sweeps from 4 to 32 MiB and multi-node
    # mid sizes), nor the share within 15 % (70 %)
    every = {t.name: t.met for t in targets(results)}
    assert every["sweep median |error| >= 64 MiB (<= 12%)"], every
    assert not every["sweep median |error| 1-64 MiB (<= 12%)"] and not every["sweep median |error| < 1 MiB (<= 12%)"]
    assert not every["sweep points within 15 % (>= 70%)"]
    assert "sweep median |error| (<= 9%)" in every
    assert nvlink_sweep_ids() == {s.sweep_id for s in SWEEPS} - {"S06", "S07"}
    assert all(r.why for r in results if r.sweep in ("S06", "S07") and abs(r.error) > 0.15)
    # a disturbed run is reported but does not count: it changes no target
    assert targets(results) == targets([r for r in results if r.sweep not in ("S03", "C08")])
    # every sweep is left out of the fit that predicts it
    assert not any(b.in_sample for b in sweep_bands(results))


def test_validation_figure_views_keep_every_group_in_the_legend(results):
    pytest.importorskip("plotly")
    from gpucomm.viz.figures.validation import validation_figure

    fig = validation_figure(results)
    buttons = fig.layout.updatemenus[0].buttons
    assert buttons[0].args[0]["visible"] == [True] * len(fig.data)
    for i, button in enumerate(buttons[1:]):
        visible = button.args[0]["visible"]
        assert visible[i] is True and all(v == "legendonly" for j, v in enumerate(visible) if j != i)
