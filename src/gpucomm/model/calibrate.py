"""One calibration: every free parameter of the model fitted jointly over all the bundled measurements.

:data:`~gpucomm.model.hardware.calibration.FREE_PARAMETERS` lists the free parameters and their physical bounds. The
fit (:func:`fit`) minimises, over every counted sweep point and case of :mod:`gpucomm.model.validation` at once
(:func:`~gpucomm.model.validation.fit_points`), the sum of the Huber loss (:data:`HUBER_DELTA`) of the relative error
in log space, ``log(predicted / measured)``: robust, so a host the catalog does not describe (the A40 servers'
staged copies, a faulty bridge) counts little. It is deterministic: coordinate descent, each parameter in turn
set by a grid over its bounds and a golden-section search around the grid's best, until no parameter moves.

Leave-one-out (:func:`leave_one_out`): for each unit of :func:`~gpucomm.model.validation.units` (a sweep, or a
case row), the parameters its points act on are refitted without it, starting from the joint fit; its points are then
predicted with those values (:func:`gpucomm.model.validation.validate`). The quantiles of those out-of-sample
residuals per transport and size band are the prediction band (:func:`band_cells`,
:func:`~gpucomm.model.hardware.calibration.prediction_band`).

``scripts/calibrate.py`` runs :func:`calibrate` and writes ``gpucomm/model/data/calibration.json``;
``tests/model/test_calibration.py`` recomputes it. Standard library only.
"""

from __future__ import annotations

import math
import statistics

from gpucomm import GpucommError
from gpucomm.model import validation as v
from gpucomm.model.cost import collective_cost
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.measurements import read_bundled_csv

__all__ = ["HUBER_DELTA", "MIN_BAND_POINTS", "huber", "loss", "affected_units", "fit", "leave_one_out", "band_cells",
           "alpha_beta_fits", "floor_fits", "error_summary", "calibrate"]

HUBER_DELTA = 0.10
"""Where the Huber loss turns from quadratic to linear, in log(predicted / measured): about 10 %. A choice: errors
beyond it pull the fit with a constant force, so a point 6x off weighs like one 10 % off, twice."""

MIN_BAND_POINTS = 20
"""A band cell (transport x size band) with fewer leave-one-out points takes its transport's quantiles (or, failing
that, every point's): a 10-90 % interval from fewer points is mostly noise. A choice."""

REMOVED = {
    "pipeline_fill_fraction": (
        "A ring's pipeline fill (a fraction of one protocol step per hop, bounds [0, 1]), formerly fitted on one point "
        "(the Llama-3-70B article's 64 MiB on 4x A100 taken as 603 us). Fitted jointly over every ring point where it "
        "acts (33 sweeps and cases), it went to its bound 0: the data do not support it beside the ring efficiencies, "
        "so the term and the parameter were removed."),
}
"""Parameters the joint fit removed, and why (the calibration file keeps this record)."""

GRID_POINTS = 9
"""Points of the grid over a parameter's bounds that starts each one-dimensional search."""

TOLERANCE = 1e-3
"""The golden-section search stops when its bracket is this share of the parameter's range."""

LOCAL_SPAN = 0.2
"""A leave-one-out refit starts from the joint fit and searches this share of each parameter's range around it: one
unit out of dozens moves a parameter little."""


def huber(x: float, delta: float = HUBER_DELTA) -> float:
    """The Huber loss of one residual.

    Parameters
    ----------
    x : float
        Residual (log ratio).
    delta : float
        Where the loss turns linear, > 0.

    Returns
    -------
    float
        ``x**2 / 2`` within ``delta``, ``delta (|x| - delta / 2)`` beyond.

    Examples
    --------
    >>> round(huber(0.05), 6), round(huber(0.3), 6)
    (0.00125, 0.025)
    """
    a = abs(x)
    return 0.5 * x * x if a <= delta else delta * (a - 0.5 * delta)


def loss(results: list) -> float:
    """The fit's objective over one unit's results: the mean :func:`huber` of log(predicted / measured) of its fit
    points, so that each sweep and each case row weighs the same (a sweep's twenty sizes do not outvote the
    large-message cases that pin the links' efficiencies).

    Parameters
    ----------
    results : list of Result
        In-sample results of one unit (:func:`gpucomm.model.validation.unit_results`).

    Returns
    -------
    float
        0 for a unit without fit points.
    """
    pts = v.fit_points(results)
    return sum(huber(math.log(r.predicted / r.measured)) for r in pts) / len(pts) if pts else 0.0


def _unit_loss(members_by_unit: dict, names) -> float:
    """The loss of some units; infinite where the model refuses their inputs with these values (NCCL's tuner finds
    no algorithm when a delivered rate rounds to nothing)."""
    try:
        return sum(loss(v.unit_results(members_by_unit[u])) for u in names)
    except GpucommError:
        return math.inf


def _predictions(members: list) -> list[float]:
    return [r.predicted for r in v.unit_results(members)]


def affected_units(units: dict) -> dict[str, set]:
    """Which units each free parameter acts on: those whose predictions move when it moves a tenth of its range.

    Parameters
    ----------
    units : dict
        :func:`gpucomm.model.validation.units`.

    Returns
    -------
    dict
        Free parameter name -> set of unit names.
    """
    base = {u: _predictions(m) for u, m in units.items()}
    now = cal.free_values()
    out = {}
    for f in cal.FREE_PARAMETERS:
        moved = set()
        step = 0.1 * (f.high - f.low)
        for x in (max(f.low, now[f.name] - step), min(f.high, now[f.name] + step)):
            with cal.using({f.name: x}):
                moved |= {u for u, m in units.items() if any(abs(a / b - 1) > 1e-9 for a, b in
                                                             zip(_predictions(m), base[u]))}
        out[f.name] = moved
    return out


def _minimise(f, low: float, high: float, start: float, *, local: bool = False) -> float:
    """The argument of the smallest ``f`` in ``[low, high]``: a grid (over the bounds, or with ``local`` over a fifth
    of them around ``start``), then golden-section search around its best."""
    if local:
        span = LOCAL_SPAN * (high - low)
        grid = sorted({min(high, max(low, start + span * k / 2)) for k in range(-2, 3)})
    else:
        grid = sorted({low + (high - low) * i / (GRID_POINTS - 1) for i in range(GRID_POINTS)} | {start})
    values = [f(x) for x in grid]
    best = min(range(len(grid)), key=lambda i: (values[i], abs(grid[i] - start)))
    a, b = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    ratio = (math.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    while b - a > TOLERANCE * (high - low):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    x, fx = (c, fc) if fc <= fd else (d, fd)
    return x if fx < values[best] else grid[best]


def fit(units: dict, start: dict, *, affected: dict, leave_out: str | None = None, only: set | None = None,
        rounds: int = 8, local: bool = False) -> dict:
    """Coordinate descent of :func:`loss` over the free parameters, within their bounds.

    Parameters
    ----------
    units : dict
        :func:`gpucomm.model.validation.units`.
    start : dict
        Free parameter name -> starting value.
    affected : dict
        :func:`affected_units`.
    leave_out : str, optional
        A unit whose points do not count (leave-one-out).
    only : set of str, optional
        Fit only these parameters; the others keep their ``start`` value.
    rounds : int
        At most this many passes over the parameters.
    local : bool
        Search near ``start`` only (:data:`LOCAL_SPAN`).

    Returns
    -------
    dict
        Free parameter name -> fitted value, rounded to 4 significant digits.
    """
    values = dict(start)
    for _ in range(rounds):
        moved = False
        for p in cal.FREE_PARAMETERS:
            names = sorted(affected[p.name] - {leave_out})
            if (only is not None and p.name not in only) or not names:
                continue

            def objective(x, p=p, names=names):
                with cal.using({**values, p.name: x}):
                    return _unit_loss(units, names)

            x = float(f"{_minimise(objective, p.low, p.high, values[p.name], local=local):.4g}")
            if abs(x - values[p.name]) > 10 * TOLERANCE * (p.high - p.low):
                moved = True
            values[p.name] = x
        if not moved:
            break
    return values


def leave_one_out(units: dict, fitted: dict, *, affected: dict, which=None) -> dict[str, dict]:
    """For each unit, the free parameters it acts on refitted without it (the others keep the joint fit's values).

    Parameters
    ----------
    units, affected
        As :func:`fit`.
    fitted : dict
        The joint fit.
    which : iterable of str, optional
        The units to leave out, one at a time (default: every unit); the fit still uses all the others.

    Returns
    -------
    dict
        Unit name -> {parameter: value} of the values that differ from ``fitted`` (empty: the unit moves none).
    """
    out = {}
    for u in (units if which is None else which):
        acting = {name for name, us in affected.items() if u in us}
        refit = fit(units, fitted, affected=affected, leave_out=u, only=acting, rounds=2, local=True) \
            if acting else fitted
        out[u] = {k: x for k, x in refit.items() if x != fitted[k]}
    return out


def band_cells(results: list) -> dict[str, list]:
    """The 10 % and 90 % quantiles of log(measured / predicted) time of the leave-one-out fit points, per cell.

    Parameters
    ----------
    results : list of Result
        :func:`gpucomm.model.validation.validate` (``predicted`` out of sample).

    Returns
    -------
    dict
        ``"<transport> <size band>"`` -> ``[q10, q90, points, source]``, ``source`` the cell itself, its transport
        or ``all`` (:data:`MIN_BAND_POINTS`), for every transport and size band of
        :mod:`gpucomm.model.hardware.calibration`.
    """
    pts = v.fit_points(results)

    def quantiles(rs):
        q = statistics.quantiles([math.log(r.time_ratio) for r in rs], n=10, method="inclusive")
        return [round(q[0], 4), round(q[-1], 4)]

    out = {}
    for t in cal.TRANSPORTS:
        for band, _, _ in cal.SIZE_BANDS:
            cell = [r for r in pts if r.transport == t and cal.size_band(r.msg_bytes) == band]
            whole = [r for r in pts if r.transport == t]
            use, source = (cell, "cell") if len(cell) >= MIN_BAND_POINTS else \
                (whole, "transport") if len(whole) >= MIN_BAND_POINTS else (pts, "all")
            out[f"{t} {band}"] = [*quantiles(use), len(cell), source]
    return out


def alpha_beta_fits() -> dict[str, dict]:
    """The alpha-beta algorithms' own fits (no bundled point runs them, so the joint fit cannot set them).

    Returns
    -------
    dict
        ``ll_base_latency_s`` and ``ll_step_latency_s``: the least-squares line of nccl-tests issue #123's DGX A100 ring
        latency at 8 B against ring steps 2(n-1) (7 points); ``simple_latency_s``: the median of ``t - S_bus / B_peak``
        over the Azure ND A100 v4 sweep's 7 sizes from 16 MiB to 1 GiB. Each ``{"value", "data"}``.
    """
    rows = read_bundled_csv("dgxa100_ring_small_msg_latency_vs_gpus.csv")[0]
    line = statistics.linear_regression([float(r["ring_steps_2(n-1)"]) for r in rows],
                                        [float(r["measured_us"]) * 1e-6 for r in rows])
    sweep = read_bundled_csv("azure_a100_allreduce_busbw.csv")[0]
    peak = float(sweep[-1]["busbw_GBps"]) * 1e9
    alphas = []
    for r in sweep:
        size, n, busbw = int(r["bytes"]), int(r["n_gpus"]), float(r["busbw_GBps"]) * 1e9
        if 16 * 2**20 <= size <= 2**30:
            bus = size * 2 * (n - 1) / n
            alphas.append(bus / busbw - bus / peak)
    c22 = f"dgxa100_ring_small_msg_latency_vs_gpus.csv ({len(rows)} points)"
    return {"ll_base_latency_s": {"value": float(f"{line.intercept:.4g}"), "data": c22},
            "ll_step_latency_s": {"value": float(f"{line.slope:.4g}"), "data": c22},
            "simple_latency_s": {"value": float(f"{statistics.median(alphas):.4g}"),
                                 "data": f"azure_a100_allreduce_busbw.csv 16 MiB-1 GiB ({len(alphas)} points)"}}


FLOOR_MAX_BYTES = 4096
"""The sizes of a sweep up to this (4 KiB) make its floor for :func:`floor_fits`: on the TCPXO log (sweep C08) the
in-place time stays within 122.3-125.6 us from 8 B to 4 KiB and rises from 8 KiB."""


def floor_fits() -> dict[str, dict]:
    """Values read off a sweep's measured floor, outside the joint fit (the floor is one quantity of one run, which the
    joint fit's point weights would not pin): the GPUDirect-TCPXO latency per network step.

    ``tcpxo_latency_s``: by bisection within [0, 1 ms], the net plugin latency
    (:data:`~gpucomm.model.hardware.calibration.NET_PLUGIN_LATENCY_S`) at which the model's 8 B all_reduce on the
    C08 sweep's system (2 nodes x 8 H100 over ``tcpxo_200g``, eager, the model's default NCCL release) takes the median
    in-place time of that sweep's sizes up to :data:`FLOOR_MAX_BYTES`, with the current values of the free parameters.

    Returns
    -------
    dict
        ``tcpxo_latency_s``: ``{"value", "data"}``.
    """
    sweep = next(s for s in v.SWEEPS if s.sweep_id == "C08")
    rows = [r for r in read_bundled_csv(v.LOG_SWEEPS_CSV)[0] if r["log"] == "C08" and int(r["bytes"]) <= FLOOR_MAX_BYTES]
    floor_s = statistics.median(float(r["time_us"]) for r in rows) * 1e-6
    lo, hi = 0.0, 1e-3
    with cal.keeping("tcpxo_latency_s"):
        while hi - lo > 1e-10:
            mid = (lo + hi) / 2
            cal._set({"tcpxo_latency_s": mid})
            t = collective_cost("all_reduce", 8, num_ranks=int(rows[0]["n_gpus"]), fabric=sweep.fabric).time_s
            lo, hi = (mid, hi) if t < floor_s else (lo, mid)
    return {"tcpxo_latency_s": {"value": float(f"{(lo + hi) / 2:.4g}"),
                                "data": f"nccl_log_sweeps.csv, log C08, in-place times of the {len(rows)} sizes up to "
                                        f"{FLOOR_MAX_BYTES} B (median {floor_s * 1e6:.1f} us)"}}


def error_summary(results: list, *, out_of_sample: bool) -> dict:
    """Share within 15 %, median |error| and each size band's median |error| of the sweep fit points.

    Parameters
    ----------
    results : list of Result
        :func:`gpucomm.model.validation.validate`.
    out_of_sample : bool
        The leave-one-out predictions, or the in-sample ones.

    Returns
    -------
    dict
        ``points``, ``within_15``, ``median``, and ``median <band>`` per size band (fractions).
    """
    pts = [r for r in v.fit_points(results) if r.sweep]
    errs = [abs(r.error if out_of_sample else r.fit_error) for r in pts]
    out = {"points": len(errs), "within_15": round(sum(e <= 0.15 for e in errs) / len(errs), 4),
           "median": round(statistics.median(errs), 4)}
    for band, _, _ in cal.SIZE_BANDS:
        b = [e for r, e in zip(pts, errs) if cal.size_band(r.msg_bytes) == band]
        out[f"median {band}"] = round(statistics.median(b), 4)
    return out


def calibrate(*, start: dict | None = None) -> dict:
    """The joint fit, its leave-one-out refits, the band and the errors: the content of the calibration file.

    Parameters
    ----------
    start : dict, optional
        Starting values (default: the committed ones; the fit's result does not depend on them beyond its
        tolerance where the objective has one minimum within the bounds).

    Returns
    -------
    dict
        ``parameters``, ``alpha_beta``, ``floor_fits``, ``folds``, ``band``, ``errors`` and the provenance keys (``method``, ``data``),
        without the date (the script adds it).
    """
    units = v.units()
    fitted = dict(start or cal.free_values())
    floors = floor_fits()
    with cal.keeping(*floors):
        # the floor fits move the joint fit a little (the TCPXO latency acts on the all_gather M02), and it moves
        # them: fit, read the floors off with the fitted values, and again until they no longer move
        for _ in range(4):
            cal._set({k: f["value"] for k, f in floors.items()})
            affected = affected_units(units)
            fitted = fit(units, fitted, affected=affected)
            with cal.using(fitted):
                again = floor_fits()
            if again == floors:
                break
            floors = again
        with cal.using(fitted):
            affected = affected_units(units)  # what each parameter acts on at the fitted values (the record)
            folds = leave_one_out(units, fitted, affected=affected)
        saved = cal._CALIBRATION.get("folds")
        try:
            cal._CALIBRATION["folds"] = folds  # validate() reads the folds from the loaded calibration
            with cal.using(fitted):
                results = v.validate()
        finally:
            cal._CALIBRATION["folds"] = saved
    bounds = {f.name: f for f in cal.FREE_PARAMETERS}
    return {
        "method": (f"Joint fit of the free parameters (calibration.FREE_PARAMETERS): coordinate descent, a "
                   f"{GRID_POINTS}-point grid then golden-section search per parameter within its bounds, minimising "
                   f"the Huber loss (delta {HUBER_DELTA}) of log(predicted / measured), averaged within each sweep or case row "
                   "and summed over them (each weighs the same), over every counted sweep point with busbw >= 1 GB/s "
                   "and every counted case (validation.fit_points). Leave-one-out: "
                   "each sweep (or case row) left out in turn, the parameters it acts on refitted without it."),
        "data": {"units": list(units), "points": len(v.fit_points(results)),
                 "sweeps": [s.sweep_id for s in v.SWEEPS], "cases": [c.case_id for c in v.CASES]},
        "parameters": {k: {"value": x, "bounds": [bounds[k].low, bounds[k].high], "acts_on": sorted(affected[k])}
                       for k, x in fitted.items()},
        "alpha_beta": alpha_beta_fits(),
        "floor_fits": floors,
        "removed": REMOVED,
        "folds": folds,
        "band": {"what": "quantiles 10 % and 90 % of log(measured / predicted) time of the leave-one-out points",
                 "cells": band_cells(results)},
        "errors": {"in_sample": error_summary(results, out_of_sample=False),
                   "leave_one_out": error_summary(results, out_of_sample=True)},
    }
