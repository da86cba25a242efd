"""The numbers of ``book/measuring.md`` (measuring it yourself: nccl-tests, a timing harness, reading real logs).

Most of the page's numbers are read from published nccl-tests logs, which the parser of :mod:`gpucomm.measure` reads;
the model layer does not import it, so the page parses the bundled logs and hands them to :func:`numbers` (any objects
with ``out_of_place()``, ``in_place()``, ``records``, ``metadata`` and ``as_results()``, as
:class:`gpucomm.measure.logs.nccl_tests.ParsedLog` has). Sections: reading one row (busbw = algbw x the busbw factor),
what a small-message time includes (launch modes, one thread driving every GPU), the knobs (P2P off, NVLS off), the
pathologies of real logs, and the model against the logs at their largest size.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpucomm.model import claims
from gpucomm.model.collectives import busbw_factor
from gpucomm.model.cost import collective_cost
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.hardware import get_link
from gpucomm.model.measurements import case, read_bundled_csv
from gpucomm.model.units import GiB, format_size
from gpucomm.model.validation import CASES, small_message_floor_us

__all__ = ["QUIZ_BUSBW_GBPS", "model_vs_log_rows", "numbers"]

QUIZ_BUSBW_GBPS = 2000
"""The busbw (GB/s) a reader's buggy loop reports in the page's quiz: a premise, checked against NVLS's ceiling."""
_CASE = {c.case_id: c for c in CASES}


def model_vs_log_rows(logs: Mapping[str, object]) -> list[dict]:
    """The model against each log at its largest size, out of place (the page's table), with the fabric and algorithm
    :func:`gpucomm.model.validation.validate` uses for the same case.

    Parameters
    ----------
    logs : mapping of str to ParsedLog
        Parsed nccl-tests logs by case id (:func:`gpucomm.measure.logs.nccl_tests.read_bundled_log`).

    Returns
    -------
    list of dict
        ``case``, ``system (per the source)``, ``size``, ``measured busbw (GB/s)``, ``model busbw (GB/s)`` and
        ``model / measured`` (NaN where the log's busbw is 0). The model runs with the joint fit's parameters (in
        sample: these logs are in that fit).

    Raises
    ------
    GpucommError
        If a log's name is not a case of :data:`gpucomm.model.validation.CASES` (from :func:`case`).
    """
    rows = []
    for name, log in logs.items():
        r = log.out_of_place()[-1]
        c = collective_cost(log.metadata["collective"], r.size_bytes, num_ranks=log.metadata["num_ranks"],
                            fabric=_CASE[name].fabric, algorithm=_CASE[name].algorithm)
        model = c.busbw_bytes_per_s / 1e9
        rows.append({"case": name, "system (per the source)": case(name)["hardware"], "size": format_size(r.size_bytes),
                     "measured busbw (GB/s)": r.busbw_gbps, "model busbw (GB/s)": model,
                     "model / measured": model / r.busbw_gbps if r.busbw_gbps else float("nan")})
    return rows


def _reading_a_row(logs) -> dict[str, object]:
    dgx = logs["C04"]
    r0 = dgx.out_of_place()[0]
    n = dgx.metadata["num_ranks"]
    claims.require(abs(r0.algbw_gbps * busbw_factor("all_reduce", n) - r0.busbw_gbps) <= 0.011 + 0.001 * r0.busbw_gbps,
                   "busbw is algbw x the all_reduce's busbw factor")
    return {"n_logs": len(logs), "ex_size": r0.size_bytes, "ex_size_h": format_size(r0.size_bytes), "ex_count": r0.count,
            "ex_time": r0.time_us, "ex_algbw": r0.algbw_gbps, "ex_busbw": r0.busbw_gbps, "ex_ranks": n,
            "ex_factor": busbw_factor("all_reduce", n), "ex_command": dgx.metadata["command"],
            "f_ar_1": busbw_factor("all_reduce", 1),
            # quiz 4: the row's busbw as a share of NVLink 3's per-direction rate (a DGX A100's GPUs are on NVLink 3)
            "nv3_dir": get_link("nvlink3").bw_bytes_per_s / 1e9,
            "ex_link_share_pct": 100 * r0.busbw_gbps * 1e9 / get_link("nvlink3").bw_bytes_per_s}


def _small_messages(logs) -> dict[str, object]:
    cost = {mode: collective_cost("all_reduce", 8, num_ranks=8, fabric="nvlink4", launch=mode)
            for mode in ("eager", "graph", "sync")}
    claims.require(cost["sync"].launch_s > cost["eager"].launch_s > cost["graph"].launch_s,
                   "a sync per call costs more than an eager launch, which costs more than a graph replay")
    floors = {log: small_message_floor_us(log) for log in ("S06", "S07")}
    claims.require(abs(floors["S06"] / floors["S07"] - 1) < 0.1,
                   "the 8x RTX 4090 floors with and without P2P are the same within 10 %")
    c22 = read_bundled_csv("dgxa100_ring_small_msg_latency_vs_gpus.csv")[0]
    t2, t8 = float(c22[0]["measured_us"]), float(c22[-1]["measured_us"])
    claims.require(t8 > 2 * t2, "nccl-tests issue #123's times grow with the number of GPUs one thread drives")
    a3, spark = logs["C08"], logs["C29"]
    return {
        "small_eager_us": cost["eager"].time_s * 1e6, "small_graph_us": cost["graph"].time_s * 1e6,
        "small_launch_eager_us": cost["eager"].launch_s * 1e6, "small_launch_graph_us": cost["graph"].launch_s * 1e6,
        "launch_sync_us": cost["sync"].launch_s * 1e6,
        "floor_S06": floors["S06"], "floor_S07": floors["S07"],
        "c22_per_gpu_us": cal.HOST_LAUNCH_PER_GPU_S.value * 1e6, "c22_t2": t2, "c22_t8": t8,
        "c22_slope_us": (t8 - t2) / (int(c22[-1]["n_gpus"]) - int(c22[0]["n_gpus"])),
        "c08_ngpus": a3.metadata["nGpus"], "c08_ranks": a3.metadata["num_ranks"],
        "c08_floor": min(r.time_us for r in a3.records),
        "c29_ngpus": spark.metadata["nGpus"], "c29_ranks": spark.metadata["num_ranks"],
    }


def _knobs(logs) -> dict[str, object]:
    last = {name: log.out_of_place()[-1].busbw_gbps for name, log in logs.items()}
    nvls, ring = float(case("C14")["busbw_GBps"]), float(case("C14r")["busbw_GBps"])  # NCCL_NVLS_ENABLE=0, same node
    claims.require(last["C04"] > last["C05"] and last["C06"] > last["C07"] and nvls > ring,
                   "P2P off and NVLS off make busbw fall")
    return {"c04_busbw": last["C04"], "c05_busbw": last["C05"], "c04_c05_ratio": last["C04"] / last["C05"],
            "c06_busbw": last["C06"], "c07_busbw": last["C07"], "c06_c07_ratio": last["C06"] / last["C07"],
            "c14_nvls": nvls, "c14_ring": ring}


def _pathologies(logs) -> dict[str, object]:
    out: dict[str, object] = {}
    h100_off = logs["C07"].out_of_place()
    peak = max(h100_off, key=lambda r: r.busbw_gbps)
    out.update(c07_peak=peak.busbw_gbps, c07_peak_size=format_size(peak.size_bytes), c07_last=h100_off[-1].busbw_gbps,
               c07_last_size=format_size(h100_off[-1].size_bytes),
               c07_drop_pct=100 * (1 - h100_off[-1].busbw_gbps / peak.busbw_gbps))
    a40_node, a40_sys = logs["C03"].out_of_place(), logs["C02"].out_of_place()
    out.update(c03_peak=max(r.busbw_gbps for r in a40_node), c03_last=a40_node[-1].busbw_gbps,
               c02_first=a40_sys[0].busbw_gbps, c02_last=a40_sys[-1].busbw_gbps)
    claims.require(out["c07_last"] < out["c07_peak"] and out["c03_last"] < out["c03_peak"]
                   and out["c02_last"] < out["c02_first"], "the P2P-off logs' busbw falls with size")
    # busbw above the line rate: the 8x H200 NVLS sweep, and the ceiling NVLS allows (each GPU sends and receives the
    # buffer about once, so algbw tops out near the link rate and busbw near 2(n-1)/n times it)
    h200 = case("C13")
    link = get_link("nvlink4").bw_bytes_per_s / 1e9
    ceiling = busbw_factor("all_reduce", 8) * link
    out.update(c13_busbw=float(h200["busbw_GBps"]), c13_size=format_size(int(h200["bytes"])), nv4_dir=link,
               quiz_busbw=QUIZ_BUSBW_GBPS, nvls_ceiling=ceiling)
    claims.require(link < out["c13_busbw"] < ceiling,
                   "the H200 NVLS sweep's busbw is above the line rate and under the NVLS ceiling")
    claims.require(QUIZ_BUSBW_GBPS > 2 * ceiling, "the quiz's busbw is more than twice what NVLS could give")
    dgx = logs["C04"]
    out4 = {r.size_bytes: r for r in dgx.out_of_place()}
    in4 = {r.size_bytes: r for r in dgx.in_place()}
    out.update(c04_oop=out4[4 * GiB].busbw_gbps, c04_ip=in4[4 * GiB].busbw_gbps, c04_oop_t=out4[4 * GiB].time_us,
               c04_ip_t=in4[4 * GiB].time_us, c04_ip_8g=in4[8 * GiB].busbw_gbps,
               c04_avg=dgx.metadata["avg_busbw_gbps"])
    claims.require(in4[4 * GiB].time_us > out4[4 * GiB].time_us and in4[4 * GiB].busbw_gbps < in4[8 * GiB].busbw_gbps
                   and dgx.metadata["avg_busbw_gbps"] < out4[4 * GiB].busbw_gbps,
                   "the DGX A100 log's 4 GiB in-place outlier")
    bridge = logs["C28"]
    r28 = bridge.out_of_place()[0]
    out.update(c28_ranks=bridge.metadata["num_ranks"], c28_count=r28.count, c28_size=r28.size_bytes,
               c28_algbw=r28.algbw_gbps, c28_busbw=r28.busbw_gbps,
               c28_today_algbw=bridge.as_results()[0]["algbw_bytes_per_s"] / 1e9)  # size / time
    spark = logs["C29"]
    out.update(c29_last=format_size(spark.out_of_place()[-1].size_bytes), c29_max=format_size(spark.metadata["maxBytes"]),
               c29_version=spark.metadata["version"], c29_nccl=spark.metadata["nccl_version"])
    return out


def _model_vs_logs(logs) -> dict[str, object]:
    ratio = {row["case"]: row["model / measured"] for row in model_vs_log_rows(logs)}
    claims.require(ratio["C02"] > 1 and ratio["C03"] > 1 and ratio["C28"] > 1,
                   "the A40 servers without P2P and the RTX 2080 Ti bridge are slower than the model")
    claims.require(ratio["C29"] > 1, "at 64 KiB the model predicts more busbw than two DGX Spark measured")
    out: dict[str, object] = {f"r_{name}": value for name, value in ratio.items()}
    out["c28_pct"] = 100 * logs["C28"].out_of_place()[-1].busbw_gbps * 1e9 / _CASE["C28"].fabric.link.bw_bytes_per_s
    return out


def numbers(logs: Mapping[str, object]) -> dict[str, object]:
    """Every number ``book/measuring.md`` glues, by glue key.

    Parameters
    ----------
    logs : mapping of str to ParsedLog
        The bundled nccl-tests logs of single cases, parsed, by case id (the page reads them with
        :func:`gpucomm.measure.logs.nccl_tests.read_bundled_log`); it must hold C02-C08, C28 and C29.

    Returns
    -------
    dict of str to object
        One row: ``ex_size`` (B), ``ex_size_h``, ``ex_count`` (elements), ``ex_time`` (us), ``ex_algbw``, ``ex_busbw``
        (GB/s), ``ex_ranks``, ``ex_factor``, ``ex_command``, ``n_logs``, ``f_ar_1`` (busbw factor on 1 rank), ``nv3_dir``
        (GB/s per direction), ``ex_link_share_pct`` (the row's busbw as % of it). Small
        messages: ``small_eager_us``, ``small_graph_us``, ``small_launch_eager_us``, ``small_launch_graph_us``,
        ``launch_sync_us`` (us, 8x H100 at 8 B), ``floor_S06``, ``floor_S07`` (us), ``c22_per_gpu_us`` (the
        fitted host cost per GPU driven), ``c22_t2``, ``c22_t8``, ``c22_slope_us`` (issue #123's times and their rise
        per GPU, us), ``c08_*``/``c29_*`` (header counts, the A3 Mega floor in us). Knobs: ``c04_busbw``...
        ``c07_busbw`` (GB/s), ``c04_c05_ratio``, ``c06_c07_ratio``, ``c14_nvls``, ``c14_ring`` (GB/s). Pathologies:
        ``c07_*``, ``c03_*``, ``c02_*`` (GB/s, sizes, %), ``c13_busbw``, ``nv4_dir``, ``nvls_ceiling``, ``quiz_busbw``
        (GB/s), ``c04_oop``/``c04_ip``/``c04_ip_8g``/``c04_avg`` (GB/s), ``c04_oop_t``/``c04_ip_t`` (us), ``c28_*`` (the
        2020 all_gather row), ``c29_*`` (header). Model against logs: ``r_<case>`` (model / measured busbw),
        ``c28_pct`` (% of the bridge's rate).

    Raises
    ------
    ClaimError
        If the numbers contradict a sentence of the page (each :func:`gpucomm.model.claims.require` names it).
    KeyError
        If a log the page quotes is missing from ``logs``.

    Notes
    -----
    Sources: the bundled logs (each with its source URL on its first line), ``cases.csv`` (the 8x H200 NVLS figures of
    stas00/ml-engineering), nccl-tests issue #123's DGX A100 times, the busbw factors of nccl-tests'
    ``doc/PERFORMANCE.md`` (:func:`gpucomm.model.collectives.busbw_factor`), and :func:`gpucomm.model.cost.collective_cost`
    with the joint fit's parameters.
    """
    out = _reading_a_row(logs)
    out.update(_small_messages(logs))
    out.update(_knobs(logs))
    out.update(_pathologies(logs))
    out.update(_model_vs_logs(logs))
    return out
