"""The numbers of ``book/validation.md`` (how good is the model: every published case, predicted vs measured).

This is the one chapter where case and sweep ids and the fit's provenance belong. Sections: the headline (every sweep
point predicted leave-one-sweep-out, the in-sample figure beside it, both checked against the committed calibration
file), the summary per group of single cases, the parameters and the runs they were fitted on, and "where the model is
wrong": PCIe without and with P2P, networks other than RDMA, a faulty bridge, NVLS, small messages (who launched the
run, NCCL's latency, how the call was timed), NVLS on Blackwell, the TCPXO floor, the two runs shown but not counted,
and mid-size messages. The tables' rows are plain dicts (:func:`accuracy_rows`, :func:`case_rows`,
:func:`parameter_rows`); the page turns them into tables and draws the figures with :mod:`gpucomm.viz`.
"""

from __future__ import annotations

import statistics

from gpucomm.model import claims
from gpucomm.model.collectives import busbw_factor
from gpucomm.model.cost import collective_cost
from gpucomm.model.course import checked_on
from gpucomm.model.fabric import make_fabric
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.hardware import get_gpu, get_inter_socket_link, get_link
from gpucomm.model.units import GiB, KiB, MiB, format_size
from gpucomm.model.validation import (
    BANDS,
    CASES,
    SMALL_MESSAGE_MAX_BYTES,
    SWEEP_TARGETS,
    SWEEPS,
    Result,
    accuracy,
    format_error,
    format_value,
    host_cost_per_channel_s,
    nvlink_sweep_ids,
    small_message_floor_us,
    summarize,
    sweep_bands,
    targets,
    validate,
)

__all__ = ["GLUED_CASES", "accuracy_rows", "case_rows", "numbers", "parameter_rows"]

GLUED_CASES = ("C02", "C03", "C28", "C08s", "C29", "C05", "C39", "C13", "C41", "P01", "P02", "P03", "P04", "P05", "P07",
               "M02", "M03")
"""The single cases whose measured and predicted values the page's prose quotes (``<id>_meas``, ``_model``, ``_err``,
``_abs``, ``_factor``)."""


def accuracy_rows(results: list[Result]) -> list[dict]:
    """The page's accuracy table: :func:`gpucomm.model.validation.accuracy`, one row per group, as ``gpucomm validate``
    prints it.

    Parameters
    ----------
    results : list of Result
        As :func:`gpucomm.model.validation.validate` returns them.

    Returns
    -------
    list of dict
        ``points grouped by``, ``group``, ``points``, and the median error and share within 15 % held out
        (leave-one-sweep-out) and in sample, as text in %.
    """
    return [{"points grouped by": a.by, "group": a.group, "points": a.points,
             "median error, held out": f"{100 * a.median_abs_error:.1f} %",
             "within 15 %, held out": f"{100 * a.within_15:.0f} %",
             "median error, in sample": f"{100 * a.in_sample_median_abs_error:.1f} %",
             "within 15 %, in sample": f"{100 * a.in_sample_within_15:.0f} %"} for a in accuracy(results)]


def case_rows(results: list[Result]) -> list[dict]:
    """The page's table of single cases (the sweeps' sizes are in its figure and in ``gpucomm validate --all``).

    Parameters
    ----------
    results : list of Result
        As :func:`gpucomm.model.validation.validate` returns them.

    Returns
    -------
    list of dict
        ``case``, ``what``, ``measured`` and ``model`` (busbw in GB/s or a time), ``error`` (leave-one-out, in %),
        ``note`` (why a case misses; an in-sample case says so first).
    """
    return [{"case": r.case_id, "what": r.label, "measured": format_value(r.measured, r.metric),
             "model": format_value(r.predicted, r.metric),
             "error": format_error(r.error),
             "note": ("in sample: " if r.in_sample else "") + r.why}
            for r in results if not r.label.endswith(" sweep")]


def parameter_rows() -> list[dict]:
    """The page's table of parameters: every :func:`~gpucomm.model.hardware.calibration.all_parameters` entry.

    Returns
    -------
    list of dict
        ``parameter``, ``value`` (4 significant digits), ``unit``, ``how it is set`` (fitted jointly, or an NCCL constant
        or cited figure) and ``source`` (a URL).
    """
    free = {f.name for f in cal.FREE_PARAMETERS}
    return [{"parameter": p.name, "value": f"{p.value:.4g}", "unit": p.unit,
             "how it is set": "fitted jointly" if p.name in free else "NCCL constant or cited figure",
             "source": p.source} for p in cal.all_parameters()]


def _points(results, sweep: str, lo: int = 0, hi: int = 2**62) -> list[Result]:
    """The points of one sweep from ``lo`` to ``hi`` bytes, both included."""
    return [r for r in results if r.sweep == sweep and lo <= r.msg_bytes <= hi]


def _worst_pct(results, sweep: str, lo: int = 0, hi: int = 2**62) -> float:
    return 100 * max(abs(r.error) for r in _points(results, sweep, lo, hi))


def _headline(results) -> dict[str, object]:
    out: dict[str, object] = {}
    everything = accuracy(results)[0]
    held_out = checked_on(results, (*SWEEPS, *CASES), transport="nvlink").held_out
    out["acc_how"] = ("with the free parameters refitted without the point's own run (leave-one-sweep-out)" if held_out
                      else "in sample: every run is in the fit that predicts it, so these figures show the fit, "
                           "not a prediction")
    out["acc_points"] = everything.points
    out["acc_median_pct"] = 100 * everything.median_abs_error
    out["acc_within_pct"] = 100 * everything.within_15
    out["acc_fit_median_pct"] = 100 * everything.in_sample_median_abs_error
    out["acc_fit_within_pct"] = 100 * everything.in_sample_within_15
    committed = cal.read_calibration()["errors"]
    claims.require(abs(everything.median_abs_error - committed["leave_one_out"]["median"]) < 5e-4
                   and abs(everything.within_15 - committed["leave_one_out"]["within_15"]) < 5e-4
                   and abs(everything.in_sample_median_abs_error - committed["in_sample"]["median"]) < 5e-4,
                   "the headline is the committed leave-one-sweep-out figure of the calibration file, the in-sample "
                   "one beside it")
    gap = abs(everything.median_abs_error - everything.in_sample_median_abs_error)
    out["acc_gap_word"] = "less than a point" if gap < 0.01 else f"{100 * gap:.1f} points"
    by_band = {a.group: a for a in accuracy(results) if a.by == "size band"}
    large, small = by_band[BANDS[-1][0]], by_band[BANDS[0][0]]
    out["acc_large_median_pct"] = 100 * large.median_abs_error
    out["acc_large_band"] = large.group
    out["acc_small_median_pct"] = 100 * small.median_abs_error
    out["acc_small_band"] = small.group
    claims.require(large.median_abs_error < small.median_abs_error,
                   "the model is closest on large messages and furthest on small ones")
    return out


def _summary(results) -> dict[str, object]:
    out: dict[str, object] = {}
    for s in summarize(results):
        g = s.group
        out[f"{g}_n"] = s.count
        out[f"{g}_median_pct"] = 100 * s.median_abs_error
        out[f"{g}_worst_pct"] = 100 * s.worst_abs_error
        out[f"{g}_median_factor"] = s.median_factor
        out[f"{g}_worst_factor"] = s.worst_factor
        out[f"{g}_within"] = "" if s.within_target is None else f"{s.within_target} of {s.count}"
        out[f"{g}_target"] = s.target.replace("|error| < ", "within ")
    nvl = [r for r in results if r.group == "nvlink_large" and r.counted]
    n_in = sum(r.in_sample for r in nvl)
    out["nvlink_large_kind"] = (
        f"each of the {len(nvl)} cases predicted with the parameters refitted without it" if not n_in else
        f"{n_in} of the {len(nvl)} cases set the parameters that predict them, so this figure is calibration more than "
        "prediction")
    out["n_cases"] = len(results)
    out["n_in_sample"] = sum(r.in_sample for r in results)
    in_sample = [r.case_id for r in results if r.in_sample]
    out["in_sample_cases"] = ", ".join(in_sample) or "none"
    claims.require(in_sample == ["C08s"], "the one in-sample case is the TCPXO floor")
    out["n_sweeps"] = len({r.sweep for r in results if r.sweep})
    disturbed = [s.sweep_id for s in SWEEPS if s.disturbed]
    out["disturbed_sweeps"] = " and ".join(disturbed)
    claims.require(set(disturbed) == {"S03", "C08"},
                   "the runs shown but not counted are the gIB all_gather demo and the TCPXO sweep")
    out["n_params"] = len(cal.all_parameters())
    out["n_free"] = len(cal.FREE_PARAMETERS)
    counted = {r.unit for r in results if r.counted}  # the fit reads counted points only (validation.fit_points)
    for name, p in cal.read_calibration()["parameters"].items():
        out[f"runs_{name}"] = ", ".join(u for u in p["acts_on"] if u in counted)
    by_id = {r.case_id: r for r in results}
    for cid in GLUED_CASES:
        r = by_id[cid]
        out.update({f"{cid}_err": 100 * r.error, f"{cid}_abs": 100 * abs(r.error), f"{cid}_meas": r.measured,
                    f"{cid}_model": r.predicted, f"{cid}_factor": r.factor})
    out["C22t_factor"] = max(by_id[c].factor for c in ("C22t-LL", "C22t-LL128", "C22t-Simple"))
    out["small_max"] = format_size(SMALL_MESSAGE_MAX_BYTES)
    for i, t in enumerate(targets(results)[:2]):
        out[f"sweep_target_{i}"] = t.reached
    return out


def _pcie(results) -> dict[str, object]:
    by_id = {r.case_id: r for r in results}
    s06 = [b for b in sweep_bands(results) if b.sweep == "S06"]
    s06_last = max(_points(results, "S06"), key=lambda r: r.msg_bytes)
    s07_small = max(r.factor for r in _points(results, "S07", 0, SMALL_MESSAGE_MAX_BYTES))
    claims.require(by_id["P04"].error < 0 and by_id["P05"].error < 0, "the model is low for eight and for four RTX 5090")
    claims.require(by_id["C03"].factor > 2 and by_id["C02"].factor > 2,
                   "on the 8x A40 server the model is several times too optimistic")
    claims.require(by_id["P01"].error < 0 and by_id["P02"].error < 0, "on two Turin sockets the model is low")
    claims.require(by_id["P03"].error > 0, "the model is high for two RTX 2080 Ti without P2P")
    claims.require(by_id["C41"].error < 0, "C41 is within a few percent of NCCL's PCI latency, the model faster")
    floors = [small_message_floor_us(s) for s in ("S06", "S07")]
    claims.require(abs(floors[0] / floors[1] - 1) < 0.1, "below 64 KiB S06 and S07 take the same time")
    upi = get_inter_socket_link("upi_skylake").nccl_bw_bytes_per_s / 1e9
    claims.require(upi > 2 * by_id["C02"].measured,
                   "the slowest socket link a PCIe 4.0 host can have allows far more than the measured rate")
    turin = get_inter_socket_link("xgmi_zen5")
    claims.require(turin.bw_bytes_per_s > turin.nccl_bw_bytes_per_s,
                   "GPUs measure more across the Turin socket link than NCCL plans with")
    return {
        "s06_lo": 100 * min(b.median_abs_error for b in s06), "s06_hi": 100 * max(b.median_abs_error for b in s06),
        "s06_busbw": s06_last.busbw_gb_per_s, "s06_size": format_size(s06_last.msg_bytes),
        "eff_staged_pct": 100 * cal.HOST_STAGED_EFFICIENCY.value,
        "s07_large": _worst_pct(results, "S07", 64 * MiB), "s07_small": s07_small,
        "q3_model": collective_cost("all_reduce", GiB, num_ranks=4,
                                    fabric=make_fabric("pcie4", p2p=False)).busbw_bytes_per_s / 1e9,
        "turin_socket": turin.bw_bytes_per_s / 1e9, "turin_nccl": turin.nccl_bw_bytes_per_s / 1e9,
        "icelake_socket": upi,
    }


def _network_and_nvls(results) -> dict[str, object]:
    by_id = {r.case_id: r for r in results}
    out: dict[str, object] = {
        "net_ok_worst_pct": 100 * max(abs(by_id[c].error) for c in ("M01", "M02")),
        "nvls_worst_pct": 100 * max(abs(by_id[c].error) for c in ("C13", "C14", "C11n5", "C11n6", "C11n7")),
        "c28_share_pct": 100 * by_id["C28"].measured * 1e9 / get_gpu("rtx_2080_ti").nvlink_bw_bytes_per_s,
        "nvlink4_dir": get_link("nvlink4").bw_bytes_per_s / 1e9,
        # the row nccl-tests would print for C13 (quiz 2): algbw = busbw / 2(n-1)/n, nccl-tests doc/PERFORMANCE.md
        "C13_algbw": by_id["C13"].measured / busbw_factor("all_reduce", 8),
    }
    claims.require(by_id["C29"].error < 0, "two DGX Spark over RoCE take longer at 8 KiB than the model gives")
    claims.require(all(r.error > 0 for r in _points(results, "S14", 2 * MiB, 64 * MiB)),
                   "the RoCE scale makes the 2-node A100 RoCE sweep slower than measured from 2 to 64 MiB")
    claims.require(by_id["M03"].error > max(abs(by_id[c].error) for c in ("M01", "M02")),
                   "over TCPX the model is further off than over RoCE and TCPXO")
    claims.require(by_id["C13"].predicted > out["nvlink4_dir"], "the model's NVLS busbw is above the NVLink 4 rate")
    nvls_min = {}
    for version in ("2.27.7", "2.30.7"):
        nvls_min[version] = min(n for n in range(2, 9) if collective_cost(
            "all_reduce", 4 * GiB, num_ranks=n, fabric="nvlink4", nccl_version=version).nccl_algorithm == "nvls")
    out["nvls_min_2307"], out["nvls_min_2277"] = nvls_min["2.30.7"], nvls_min["2.27.7"]
    claims.require(nvls_min["2.30.7"] != nvls_min["2.27.7"], "the GPU count from which NCCL picks NVLS changed in 2.28")
    return out


def _small_messages(results) -> dict[str, object]:
    out: dict[str, object] = {}
    per_gpu = []
    for s in SWEEPS:
        if s.source.startswith("nccl_logs/") and s.gpus_per_thread > 1:
            floor = small_message_floor_us(s.sweep_id)
            out[f"floor_{s.sweep_id}"] = floor
            per_gpu.append(floor / s.gpus_per_thread)
    out["host_lo_us"], out["host_hi_us"] = min(per_gpu), max(per_gpu)
    out["host_per_gpu_us"] = cal.HOST_LAUNCH_PER_GPU_S.value * 1e6
    out["host_per_channel_us"] = cal.HOST_LAUNCH_PER_CHANNEL_S.value * 1e6
    s09 = {r.msg_bytes: r for r in _points(results, "S09")}
    out["s09_32k_us"], out["s09_1m_us"] = s09[32 * KiB].measured, s09[MiB].measured
    claims.require(s09[MiB].measured > 2 * s09[32 * KiB].measured,
                   "the thread's time grows from 32 KiB to 1 MiB as NCCL adds channels")
    out["s10_worst_pct"] = _worst_pct(results, "S10", 32 * KiB, MiB)
    out["s08_worst_pct"] = _worst_pct(results, "S08", 32 * KiB, MiB)
    newer = [host_cost_per_channel_s(k) * 1e6 for k in ("Azure A100x8", "S05", "S11", "S12", "S13")]
    out["new_per_channel_lo"], out["new_per_channel_hi"] = min(newer), max(newer)
    fast = [-r.error for r in results if r.sweep in ("Azure A100x8", "S11", "S12", "S13")
            and r.group == "sweep" and r.msg_bytes < MiB and r.counted]
    out["fast_floor_lo"], out["fast_floor_hi"] = 100 * min(fast), 100 * max(fast)
    claims.require(min(fast) > 0, "where a host sits above the model's floor, the model is fast below 1 MiB")
    s18 = {r.msg_bytes: r for r in _points(results, "S18")}
    s04 = {r.msg_bytes: r for r in _points(results, "S04")}
    out["s18_1k_us"] = s18[KiB].measured / 8  # -g 8: the time per GPU the thread drives
    out["s18_128k_us"] = s18[128 * KiB].measured / 8
    out["s04_128k_us"] = s04[128 * KiB].measured / 8
    claims.require(s18[KiB].predicted > s18[KiB].measured and s18[128 * KiB].predicted < s18[128 * KiB].measured,
                   "S18 is below the model's floor at 1 KiB and above it at 128 KiB")
    out["s18_small_pct"] = _worst_pct(results, "S18", 0, MiB - 1)
    out["s18_large_pct"] = _worst_pct(results, "S18", 4 * MiB)
    nvlink = nvlink_sweep_ids()
    floor = SWEEP_TARGETS["min_busbw_gb_per_s"]
    pts = [r for r in results if r.sweep in nvlink and not r.in_sample and r.counted and r.busbw_gb_per_s >= floor]
    for key, (_, lo, hi) in (("small_band_pct", BANDS[0]), ("mid_band_pct", BANDS[1])):
        out[key] = 100 * statistics.median(abs(r.error) for r in pts if lo <= r.msg_bytes < hi)
    _, lo, hi = BANDS[1]
    claims.require(statistics.median(r.error for r in pts if lo <= r.msg_bytes < hi) < 0,
                   "from 1 to 64 MiB the model is optimistic (its times short of the measured ones) on the NVLink sweeps")
    for key, p in cal.TUNER_LATENCY_SCALE.items():
        out[f"lat_scale_{key}"] = p.value
    claims.require(cal.TUNER_LATENCY_SCALE["roce"].value > cal.TUNER_LATENCY_SCALE["net"].value,
                   "small messages over RoCE take longer than over InfiniBand")
    out["s16_small_pct"] = _worst_pct(results, "S16", 0, MiB - 1)
    out["s16_large_pct"] = _worst_pct(results, "S16", MiB)
    bias = [r.measured / r.predicted - 1 for r in results
            if r.group == "small_latency" and r.sweep and not r.in_sample and r.counted]
    out["small_bias_lo"], out["small_bias_hi"] = 100 * min(bias), 100 * max(bias)
    out["launch_sync_us"] = cal.LAUNCH_S["sync"].value * 1e6
    out["h200_sync_worst_pct"] = _worst_pct(results, "H200x8")
    out["s17_small_pct"] = _worst_pct(results, "S17", 0, MiB - 1)
    out["c08s_floor_us"] = next(r for r in results if r.case_id == "C08s").measured
    return out


def _large_and_mid(results) -> dict[str, object]:
    out: dict[str, object] = {}
    s17 = {r.msg_bytes: r for r in _points(results, "S17")}
    big = s17[16 * GiB]
    out["s17_16g_meas"] = big.busbw_gb_per_s
    out["s17_16g_model"] = big.busbw_gb_per_s * big.measured / big.predicted
    mid = [r.busbw_gb_per_s for b, r in s17.items() if 512 * MiB <= b <= 4 * GiB]
    out["s17_mid_lo"], out["s17_mid_hi"] = min(mid), max(mid)
    out["s17_large_pct"] = _worst_pct(results, "S17", 512 * MiB, 4 * GiB)
    out["s17_mid_pct"] = _worst_pct(results, "S17", 2 * MiB, 64 * MiB)
    c08 = next(s for s in SWEEPS if s.sweep_id == "C08")
    c08_mid = {r.msg_bytes: r for r in _points(results, "C08", MiB, 64 * MiB)}
    picks = {(c.nccl_algorithm, c.nccl_protocol) for c in (
        collective_cost("all_reduce", b, num_ranks=16, fabric=c08.fabric) for b in c08_mid)}
    claims.require(len(picks) == 1, "NCCL's tuner picks one pair over the TCPXO sweep's 1-64 MiB")
    out["c08_pick"] = "{} with {}".format(*picks.pop())
    out["c08_mid_lo"] = min(r.measured / r.predicted for r in c08_mid.values())
    out["c08_mid_hi"] = max(r.measured / r.predicted for r in c08_mid.values())
    out["c08_16_32"] = c08_mid[32 * MiB].busbw_gb_per_s / c08_mid[16 * MiB].busbw_gb_per_s
    worst = max((r for r in results if r.group == "sweep" and not r.in_sample and r.counted), key=lambda r: abs(r.error))
    label = next(s.label for s in SWEEPS if s.sweep_id == worst.sweep).split(",")[0]
    out["sweep_worst_id"] = f"{worst.sweep} ({label}) at {format_size(worst.msg_bytes)}"
    claims.require(worst.transport == "pcie", "the sweeps' worst point above 64 KiB is on a PCIe host")
    a100 = [r.error for r in results if r.sweep in ("Azure A100x8", "S08", "S09", "S10")
            and 4 * MiB <= r.msg_bytes <= 32 * MiB]
    out["a100_mid_lo"], out["a100_mid_hi"] = -100 * max(a100), -100 * min(a100)
    s19 = [r.error for r in _points(results, "S19", 4 * MiB, 32 * MiB)]
    out["s19_mid_lo"], out["s19_mid_hi"] = -100 * max(s19), -100 * min(s19)
    claims.require(max(a100) < 0 and max(s19) < 0, "from 4 to 32 MiB the model's A100 times are short of the measured "
                                                   "ones, on the Azure VMs and on bare metal")
    out["s02_mid_pct"] = _worst_pct(results, "S02", 2 * MiB, 8 * MiB)
    claims.require(all(r.error < 0 for r in _points(results, "S02", 2 * MiB, 8 * MiB)),
                   "on 4 nodes at 2-8 MiB the model's tree is too fast")
    for lo, hi in ((512 * MiB, 4 * GiB), (2 * MiB, 64 * MiB)):
        worst = max(_points(results, "S17", lo, hi), key=lambda r: abs(r.error))
        claims.require(worst.error < 0, "on 8x B200 the model is fast from 2 MiB to 4 GiB")
    azure = [r for r in results if r.case_id.startswith("Azure")]
    t64 = next(r for r in azure if r.case_id.endswith(" 67M")).measured
    t8g = next(r for r in azure if r.case_id.endswith(" 8G")).measured
    out["azure_64m_share_pct"] = 100 * t8g / t64 / (8 * GiB / (64 * MiB))
    return out


def numbers(results: list[Result] | None = None) -> dict[str, object]:
    """Every number ``book/validation.md`` glues, by glue key.

    Parameters
    ----------
    results : list of Result, optional
        :func:`gpucomm.model.validation.validate`'s results, when the caller already has them (the page draws its
        figures from the same list); computed here otherwise.

    Returns
    -------
    dict of str to object
        Headline (every sweep point with busbw >= 1 GB/s, leave-one-sweep-out, as ``gpucomm validate`` prints it):
        ``acc_points``, ``acc_median_pct``, ``acc_within_pct`` (%), their in-sample twins ``acc_fit_median_pct``,
        ``acc_fit_within_pct``, ``acc_how`` and ``acc_gap_word`` (words), ``acc_large_*`` / ``acc_small_*`` (the largest
        and smallest size band's median, %, and the band's name). Summary per group (``nvlink_large``, ``pcie_large``,
        ``network_large``, ``small_latency``, ``sweep``): ``<group>_n``, ``_median_pct``, ``_worst_pct`` (%),
        ``_median_factor``, ``_worst_factor``, ``_within`` and ``_target`` (text); ``n_cases``, ``n_in_sample``,
        ``in_sample_cases``, ``n_sweeps``, ``disturbed_sweeps``, ``n_params``, ``n_free``, ``runs_<parameter>`` (the counted runs
        each free parameter acts on, which its fit reads); per quoted case (:data:`GLUED_CASES`) ``<id>_meas`` / ``_model`` (GB/s or
        us), ``_err`` / ``_abs`` (%) and ``_factor``. Where the model is wrong: PCIe (``s06_*``, ``s07_*``,
        ``eff_staged_pct``, socket links in GB/s per direction), networks and NVLS (``net_ok_worst_pct``,
        ``nvls_worst_pct``, ``nvls_min_*`` GPU counts,
        ``C13_algbw`` the GB/s algbw of C13's busbw), small messages (floors and per-GPU costs in us, worst errors in %,
        latency scales as factors), mid-size and Blackwell (busbw in GB/s, errors in %).

    Raises
    ------
    ClaimError
        If the numbers contradict a sentence of the page (each :func:`gpucomm.model.claims.require` names it), among
        them: the headline is not the committed calibration file's leave-one-sweep-out figure.

    Notes
    -----
    Sources: :func:`gpucomm.model.validation.validate` (the bundled published cases and sweeps, each with its source
    URL in ``cases.csv`` or its log's first line), the committed calibration file
    (:func:`~gpucomm.model.hardware.calibration.read_calibration`: the joint fit and its leave-one-sweep-out folds),
    the catalog, and :func:`gpucomm.model.cost.collective_cost` for NCCL's own tuner picks.
    """
    if results is None:
        results = validate()
    out = _headline(results)
    out.update(_summary(results))
    out.update(_pcie(results))
    out.update(_network_and_nvls(results))
    out.update(_small_messages(results))
    out.update(_large_and_mid(results))
    return out
