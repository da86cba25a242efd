"""The alpha-beta fit recovers known parameters; the measured-vs-model figure draws what it is given."""

import math

import pytest

from gpucomm import GpucommError
from gpucomm.model.collectives import busbw_factor
from gpucomm.model.cost import alpha_beta_time_s
from gpucomm.model.fit import AlphaBetaFit, alpha_beta_busbw_bytes_per_s, fit_alpha_beta, fit_sweep

SIZES = [8 * 2**k for k in range(24)]  # 8 B .. 64 MiB, the lab's sweep


def synthetic(alpha_s, bw, n, collective="all_reduce", sizes=SIZES, noise=None):
    times = [alpha_beta_time_s(s, alpha_s=alpha_s, bw_bytes_per_s=bw, collective=collective, num_ranks=n)
             for s in sizes]
    if noise:
        times = [t * (1 + noise[i % len(noise)]) for i, t in enumerate(times)]
    return times


@pytest.mark.parametrize("alpha_s, bw, n", [(500e-6, 1.5e9, 2), (20e-6, 150e9, 8), (5e-6, 370e9, 4), (0.0, 1e9, 2)])
def test_fit_recovers_exact_parameters(alpha_s, bw, n):
    fit = fit_alpha_beta(SIZES, synthetic(alpha_s, bw, n), collective="all_reduce", num_ranks=n)
    assert fit.alpha_s == pytest.approx(alpha_s, rel=1e-9, abs=1e-15)
    assert fit.busbw_bytes_per_s == pytest.approx(bw, rel=1e-9)
    assert fit.rms_rel_error < 1e-9
    assert fit.num_points == len(SIZES)


def test_fit_tolerates_noise_and_weights_small_sizes():
    # +-10 % alternating noise: both parameters within ~10 %. An unweighted fit would let the
    # 64 MiB point's absolute error (milliseconds) swamp alpha (0.5 ms) entirely.
    times = synthetic(500e-6, 1.5e9, 2, noise=[0.1, -0.1, 0.05, -0.05])
    fit = fit_alpha_beta(SIZES, times, collective="all_reduce", num_ranks=2)
    assert fit.alpha_s == pytest.approx(500e-6, rel=0.1)
    assert fit.busbw_bytes_per_s == pytest.approx(1.5e9, rel=0.1)
    assert 0.03 < fit.rms_rel_error < 0.12


def test_fit_uses_the_collective_factor():
    # Same times: the 8-rank all_reduce factor 1.75 means 1.75x the bus bandwidth of a factor-1 op.
    times = synthetic(10e-6, 100e9, 8)
    ar = fit_alpha_beta(SIZES, times, collective="all_reduce", num_ranks=8)
    bc = fit_alpha_beta(SIZES, times, collective="broadcast", num_ranks=8)
    assert ar.busbw_bytes_per_s / bc.busbw_bytes_per_s == pytest.approx(busbw_factor("all_reduce", 8))


def test_negative_alpha_is_clamped_to_zero():
    # Times that extrapolate to a negative intercept (sub-linear growth at small sizes).
    sizes = [1e6, 2e6, 4e6]
    times = [0.9e-3, 2.0e-3, 4.1e-3]
    fit = fit_alpha_beta(sizes, times, collective="broadcast", num_ranks=2)
    assert fit.alpha_s == 0.0
    assert fit.busbw_bytes_per_s > 0


def test_fit_evaluation_matches_the_model():
    fit = fit_alpha_beta(SIZES, synthetic(50e-6, 10e9, 4), collective="all_reduce", num_ranks=4)
    assert fit.time_s(2**20) == pytest.approx(50e-6 + 1.5 * 2**20 / 10e9)
    assert fit.busbw_at(2**30) == pytest.approx(1.5 * 2**30 / fit.time_s(2**30))
    assert fit.busbw_at(2**40) == pytest.approx(10e9, rel=1e-3)  # approaches B for large messages
    assert alpha_beta_busbw_bytes_per_s(0, alpha_s=1e-6, busbw_bytes_per_s=1e9, collective="all_reduce",
                                        num_ranks=2) == 0
    assert "alpha = 50 us" in str(fit) and "B = 10 GB/s" in str(fit)


@pytest.mark.parametrize("sizes, times, n, match", [
    ([8], [1e-4], 2, "at least 2 sizes"),
    ([8, 16], [1e-4], 2, "same length"),
    ([8, 16], [1e-4, 0.0], 2, "time 0.0 s"),
    ([8, 16], [1e-4, float("nan")], 2, "time nan s"),
    ([-8, 16], [1e-4, 1e-4], 2, "message size -8.0"),
    ([8, 8], [1e-4, 2e-4], 2, "2 different sizes"),
    ([8, 16], [1e-4, 2e-4], 1, "busbw factor 0"),
    ([8, 1e6, 1e8], [1e-3, 1e-3, 0.9e-3], 2, "do not grow"),
])
def test_fit_rejects_bad_input_with_one_line(sizes, times, n, match):
    with pytest.raises(GpucommError, match=match) as info:
        fit_alpha_beta(sizes, times, collective="all_reduce", num_ranks=n)
    assert "\n" not in str(info.value)


def test_fit_sweep_reads_records_and_skips_metadata():
    times = synthetic(100e-6, 2e9, 2)
    records = [{"record": "meta", "num_ranks": 2}] + [
        {"record": "result", "collective": "all_reduce", "num_ranks": 2, "msg_bytes": s, "time_s": t}
        for s, t in zip(SIZES, times)]
    fit = fit_sweep(records)
    assert isinstance(fit, AlphaBetaFit)
    assert fit.busbw_bytes_per_s == pytest.approx(2e9)
    with pytest.raises(GpucommError, match="mix"):
        fit_sweep(records[1:3] + [dict(records[3], num_ranks=4)])
    with pytest.raises(GpucommError, match="no result records"):
        fit_sweep(records[:1])


# The figure (plotly is a test dependency of the book anyway).
go = pytest.importorskip("plotly.graph_objects")


def _records(alpha_s=200e-6, bw=1e9, n=2):
    f = busbw_factor("all_reduce", n)
    return [{"record": "result", "collective": "all_reduce", "num_ranks": n, "msg_bytes": s, "time_s": t,
             "busbw_bytes_per_s": f * s / t} for s, t in zip(SIZES, synthetic(alpha_s, bw, n))]


def test_figure_measured_fit_and_extra_model_curves():
    from gpucomm.viz.figures.measured import measured_vs_model_figure

    records = _records()
    extra = {"catalog model": lambda s: 1e-4 + s / 2e9,
             "given points": ([1e3, 1e6], [0.5e9, 0.9e9])}
    fig = measured_vs_model_figure(records, extra)
    names = [t.name for t in fig.data]
    assert names[0] == "measured" and names[1].startswith("alpha-beta fit: alpha = 200 us, B = 1 GB/s")
    assert names[2:] == ["catalog model", "given points"]
    measured = fig.data[0]
    assert list(measured.x) == SIZES
    assert list(measured.y) == pytest.approx([r["busbw_bytes_per_s"] / 1e9 for r in records])
    fitted = fig.data[1]
    assert fitted.y[-1] == pytest.approx(records[-1]["busbw_bytes_per_s"] / 1e9, rel=1e-6)
    catalog = fig.data[2]
    assert catalog.y[0] == pytest.approx(catalog.x[0] / (1e-4 + catalog.x[0] / 2e9) / 1e9)
    assert list(fig.data[3].y) == [0.5, 0.9]
    assert fig.layout.xaxis.type == "log"
    assert "8 B" in fig.layout.xaxis.ticktext and "16 MiB" in fig.layout.xaxis.ticktext
    assert "GB/s" in fig.layout.yaxis.title.text and "message size" in fig.layout.xaxis.title.text


def test_figure_without_fit_and_bad_input():
    from gpucomm.viz.figures.measured import measured_vs_model_figure

    one_rank = [dict(r, num_ranks=1, busbw_bytes_per_s=0.0) for r in _records()]
    assert [t.name for t in measured_vs_model_figure(one_rank).data] == ["measured"]  # nothing to fit
    assert len(measured_vs_model_figure(_records(), fit=None).data) == 1
    with pytest.raises(GpucommError, match="no result records"):
        measured_vs_model_figure([])
    with pytest.raises(GpucommError, match="same length"):
        measured_vs_model_figure(_records(), {"bad": ([1, 2], [3])})
    assert math.isfinite(measured_vs_model_figure(_records(), fit=fit_sweep(_records())).data[1].y[0])


def test_regions_moved_from_the_cli_and_one_placement_per_sweep():
    """fit_regions and catalog_comparison live in the model; a sweep is one placement of nccl-tests' two."""
    from gpucomm.model.fit import fit_regions, split_wrong, sweep_rows

    rows = [{"record": "result", "collective": "all_reduce", "num_ranks": 2, "msg_bytes": s, "time_s": t}
            for s, t in zip(SIZES, synthetic(20e-6, 10e9, 2))]
    assert len(fit_regions(rows).regions) == 1
    both = [dict(r, in_place=flag) for r in rows for flag in (False, True)]
    with pytest.raises(GpucommError, match="both placements"):
        sweep_rows(both)
    assert len(sweep_rows([r for r in both if r["in_place"]])[0]) == len(SIZES)
    good, wrong = split_wrong([dict(rows[0], num_wrong=4)] + rows[1:])
    assert [r["msg_bytes"] for r in wrong] == [SIZES[0]] and len(good) == len(SIZES) - 1


def _both_halves(rows: list[dict], placement: str = "in_place") -> list[dict]:
    """``rows`` in the shape gpucomm bench and gpucomm parse write: the top level is ``placement``'s measurement,
    both halves in ``out_of_place`` and ``in_place`` (here the other half 3x slower, so a fit of it would differ)."""
    other = "out_of_place" if placement == "in_place" else "in_place"
    out = []
    for r in rows:
        half = {"time_s": r["time_s"], "num_wrong": r.get("num_wrong", 0)}
        out.append(dict(r, placement=placement, **{placement: half, other: dict(half, time_s=3 * r["time_s"])}))
    return out


def test_records_with_both_placements_are_fitted_on_their_top_level():
    """labs/allreduce_sweep.ipynb: fit_sweep on gpucomm bench's records raised TypeError: unhashable type: 'dict'."""
    from gpucomm.model.fit import fit_regions, split_wrong, sweep_rows

    rows = [{"record": "result", "collective": "all_reduce", "num_ranks": 2, "msg_bytes": s, "time_s": t}
            for s, t in zip(SIZES, synthetic(20e-6, 10e9, 2))]
    for placement in ("in_place", "out_of_place"):
        records = _both_halves(rows, placement)
        assert fit_sweep(records) == fit_sweep(rows)  # the top level; the other half is not read
        assert fit_regions(records) == fit_regions(rows)
        assert len(sweep_rows(records)[0]) == len(SIZES)
    torch_all_reduce = [dict(r, out_of_place=None) for r in _both_halves(rows)]  # no out-of-place call in torch
    assert fit_sweep(torch_all_reduce) == fit_sweep(rows)
    mixed = _both_halves(rows[:3]) + _both_halves(rows[3:], "out_of_place")
    with pytest.raises(GpucommError, match="both placements .* at their top level"):
        sweep_rows(mixed)
    good, wrong = split_wrong([dict(_both_halves(rows)[0], num_wrong=4)] + _both_halves(rows)[1:])  # summed over both
    assert [r["msg_bytes"] for r in wrong] == [SIZES[0]] and len(good) == len(SIZES) - 1
