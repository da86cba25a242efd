"""The numbers of ``book/collectives.md`` (collectives and their cost).

Sections: the busbw factors of nccl-tests, the algorithms of an all_reduce (steps and bytes per link), the alpha-beta
parameters of NCCL's tuner, the cost of each algorithm at a decode-sized and a training-sized message on 8x H100, a
ring's latency by GPU count against a DGX A100 measurement, the model against an 8x H200 ``torch.distributed`` sweep,
and NVLS's busbw above the link rate. The page's tables are the row functions here; its figure is drawn by
:mod:`gpucomm.viz` and stays in the page.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.collectives import COLLECTIVES, busbw_factor
from gpucomm.model.cost import CollectiveCost, collective_cost, steps_and_wire_bytes
from gpucomm.model.course import algorithms_for, protocol_bands
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.hardware import get_link
from gpucomm.model.measurements import case, mleng_h200_sweep
from gpucomm.model.units import GiB, KiB, MiB, format_size
from gpucomm.model.validation import CASES, SWEEPS, validate

__all__ = ["FIGURE_ALGORITHMS", "algorithm_rows", "algorithm_time_rows", "factor_rows", "numbers", "sweep_rows"]

NUM_RANKS = 8
"""GPUs of the page's all_reduce examples (one HGX box)."""
FIGURE_ALGORITHMS = ("ring", "tree", "rhd", "one_shot", "two_shot", "nvls", "binary_tree")
"""The algorithms of the page's figure; its tables show those that run an all_reduce on 8 GPUs."""
SMALL_BYTES, LARGE_BYTES = 64 * KiB, GiB
"""A decode-sized and a training-sized all_reduce message."""
SWEEP_ID = "H200x8"
"""The validation's 8x H200 ``torch.distributed`` sweep (ml-engineering, NCCL 2.27.7)."""
SWEEP_TABLE_BYTES = (32 * KiB, MiB, 16 * MiB, 256 * MiB, 16 * GiB)
NVLS_CASE = "C13"
"""The 8x H200 busbw above the line rate (16 GiB of the same sweep, as nccl-tests would print it)."""
ISSUE_1455_RING_MIN_GBPS = 365
"""NCCL issue #1455 (Sep 2024): ``NCCL_ALGO=RING`` on 8x H100 SXM gives 365-370 GB/s busbw at every GPU count."""


def _algorithms() -> tuple[str, ...]:
    return tuple(algorithms_for("all_reduce", FIGURE_ALGORITHMS, num_ranks=NUM_RANKS))


def _ar(msg_bytes: int, algorithm: str = "auto", *, num_ranks: int = NUM_RANKS, fabric: str = "nvlink4",
        **kwargs) -> CollectiveCost:
    return collective_cost("all_reduce", msg_bytes, num_ranks=num_ranks, fabric=fabric, algorithm=algorithm,
                           **kwargs)


def factor_rows() -> list[dict]:
    """busbw / algbw for every collective at 2, 4, 8 and 1 ranks (:func:`gpucomm.model.collectives.busbw_factor`).

    Returns
    -------
    list of dict
        One row per collective; the factors are nccl-tests' ``*GetBw`` (``src/*.cu``), dimensionless.
    """
    return [{"collective": c, "busbw / algbw, 2 ranks": busbw_factor(c, 2), "4 ranks": busbw_factor(c, 4),
             "8 ranks": busbw_factor(c, 8), "1 rank": busbw_factor(c, 1)} for c in COLLECTIVES]


def algorithm_rows() -> list[dict]:
    """Sequential steps and bytes per link and direction (per byte of message) of each all_reduce algorithm on 8 GPUs.

    Returns
    -------
    list of dict
        From :func:`gpucomm.model.cost.steps_and_wire_bytes` (the algorithms of ``collectives/all_reduce.py``).
    """
    rows = []
    for a in _algorithms():
        steps, wire = steps_and_wire_bytes("all_reduce", 1, num_ranks=NUM_RANKS, algorithm=a)
        rows.append({"algorithm": a, "sequential steps (8 GPUs)": steps, "bytes per link and direction, x S": wire})
    return rows


def algorithm_time_rows() -> list[dict]:
    """Each algorithm's protocol, alpha, beta and total time for a 64 KiB and a 1 GiB all_reduce on 8x H100.

    Returns
    -------
    list of dict
        Times in us at 64 KiB and in ms (beta, total) at 1 GiB, from :func:`gpucomm.model.cost.collective_cost`.
    """
    rows = []
    for a in _algorithms():
        s, g = _ar(SMALL_BYTES, a), _ar(LARGE_BYTES, a)
        rows.append({"algorithm": a, "64 KiB: protocol": s.protocol, "alpha (us)": s.latency_s * 1e6,
                     "beta (us)": s.transfer_s * 1e6, "total (us)": s.time_s * 1e6, "1 GiB: protocol": g.protocol,
                     "alpha (us) ": g.latency_s * 1e6, "beta (ms)": g.transfer_s * 1e3, "total (ms)": g.time_s * 1e3})
    return rows


def _sweep():
    sweep = next(s for s in SWEEPS if s.sweep_id == SWEEP_ID)
    points = {r.msg_bytes: r for r in validate() if r.sweep == SWEEP_ID}
    return sweep, points


def sweep_rows() -> list[dict]:
    """The 8x H200 ``torch.distributed`` sweep against the model, at five sizes, as the validation models it.

    Returns
    -------
    list of dict
        Message, measured and model time (us), the error and the model's algorithm. The model runs the sweep's NCCL
        release and its launch mode (``"sync"``: one call at a time after a barrier), from
        :func:`gpucomm.model.validation.validate`.
    """
    measured = {r["msg_bytes"]: r for r in mleng_h200_sweep()}
    _, points = _sweep()
    return [{"message": format_size(s), "measured time (us)": measured[s]["time_s"] * 1e6,
             "model time (us)": points[s].predicted, "error": f"{100 * points[s].error:+.0f} %",
             "model's algorithm": points[s].algorithm} for s in SWEEP_TABLE_BYTES]


def _factors() -> dict[str, object]:
    return {
        "f_ar_8": busbw_factor("all_reduce", 8), "f_ag_8": busbw_factor("all_gather", 8),
        "f_ar_1": busbw_factor("all_reduce", 1), "q1_busbw": 100 * busbw_factor("all_gather", 8),
        "q2_ring_steps": steps_and_wire_bytes("all_reduce", 1, num_ranks=64, algorithm="ring")[0],
        "q2_tree_steps": steps_and_wire_bytes("all_reduce", 1, num_ranks=64, algorithm="tree")[0],
        "nv4_dir": get_link("nvlink4").bw_bytes_per_s / 1e9,
    }


def _tuner_constants() -> dict[str, object]:
    ring, nvlink = nt.BASE_LATENCY_US["ring"], nt.HW_LATENCY_US["nvlink"]
    ring_alpha_us = [ring[i] + 2 * (NUM_RANKS - 1) * nvlink["ring"][i] for i in range(3)]
    claims.require(list(nt.PROTOCOLS) == ["LL", "LL128", "Simple"] and ring_alpha_us == sorted(ring_alpha_us),
                   "a ring's latency on 8 GPUs grows from LL to LL128 to Simple")
    return {"nccl_ll_base_us": ring[0], "nccl_simple_base_us": ring[2], "nccl_ll_step_us": nvlink["ring"][0],
            "nccl_ll128_step_us": nvlink["ring"][1], "nccl_simple_step_us": nvlink["ring"][2],
            "nccl_nvls_lat_us": nvlink["nvls"][2], "num_protocols": len(nt.PROTOCOLS),
            "protocol_names": ", ".join(nt.PROTOCOLS)}


def _ring_protocol_phrase() -> str:
    """``"LL up to 4 MiB, LL128 from 8 to 32 MiB, Simple from 64 MiB"``: a ring's protocol by power-of-two size."""
    bands = protocol_bands("all_reduce", num_ranks=NUM_RANKS, fabric="nvlink4")
    claims.require([p for p, _ in bands] == ["LL", "LL128", "Simple"],
                   "held to a ring on 8 GPUs the protocol goes from LL to LL128 to Simple as the message grows")
    (_, ll128_from), (_, simple_from) = bands[1], bands[2]
    return (f"LL up to {format_size(ll128_from // 2)}, LL128 from {format_size(ll128_from)} to "
            f"{format_size(simple_from // 2)}, Simple from {format_size(simple_from)}")


def _algorithm_times() -> dict[str, object]:
    auto_small, auto_large = _ar(SMALL_BYTES), _ar(LARGE_BYTES)
    claims.require(all((c.algorithm, c.protocol) == (c.nccl_algorithm, c.nccl_protocol)
                       for c in (auto_small, auto_large)), "the alpha shares below are those of NCCL's own pick")
    small = {a: _ar(SMALL_BYTES, a).time_s for a in _algorithms()}
    large = {a: _ar(LARGE_BYTES, a).time_s for a in _algorithms()}
    claims.require(min(small, key=small.get) == "one_shot" and max(small, key=small.get) == "nvls",
                   "at 64 KiB one-shot is the fastest algorithm and NVLS the slowest")
    claims.require(large["nvls"] < large["ring"] < large["one_shot"], "at 1 GiB NVLS beats the ring, which beats one-shot")
    claims.require(small["one_shot"] < small["ring"] and large["one_shot"] > large["ring"],
                   "one-shot wins at 64 KiB and loses at 1 GiB")
    return {
        "auto_small": f"{auto_small.nccl_algorithm} / {auto_small.nccl_protocol}",
        "auto_large": f"{auto_large.nccl_algorithm} / {auto_large.nccl_protocol}",
        "auto_small_alpha_pct": 100 * auto_small.latency_s / auto_small.time_s,
        "auto_large_alpha_pct": 100 * auto_large.latency_s / auto_large.time_s,
        "one_shot_small_us": small["one_shot"] * 1e6, "ring_small_us": small["ring"] * 1e6,
        "one_shot_large_ms": large["one_shot"] * 1e3, "ring_large_ms": large["ring"] * 1e3,
        "nvls_large_ms": large["nvls"] * 1e3,
        "ring_steps_8": steps_and_wire_bytes("all_reduce", 1, num_ranks=NUM_RANKS, algorithm="ring")[0],
        "ring_protocols": _ring_protocol_phrase(),
    }


def _ring_latency() -> dict[str, object]:
    def ring8b(num_ranks: int, **kwargs) -> float:
        return _ar(8, "ring", num_ranks=num_ranks, fabric="nvlink3", **kwargs).time_s * 1e6

    claims.require(ring8b(2) < ring8b(8), "latency grows with the ring")
    return {"c22_us": float(case("C22")["time_us"]), "c22_model_us": ring8b(8), "c22_model_2_us": ring8b(2),
            "c22_model_g8_us": ring8b(8, gpus_per_thread=8),
            "c22t_ll_us": next(c for c in CASES if c.case_id == "C22t-LL").measured,
            "c41_nccl_us": float(case("C41")["time_us"])}


def _h200_sweep() -> dict[str, object]:
    sweep, points = _sweep()
    claims.require(sweep.launch == "sync", "the model times the 8x H200 sweep one call at a time (launch sync)")
    # where NCCL's own tuner (at the sweep's release and launch) moves to NVLS
    nvls_from = min(s for s in points if _ar(
        s, sweep.algorithm, fabric=sweep.fabric, nccl_version=sweep.nccl_version,
        gpus_per_thread=sweep.gpus_per_thread, launch=sweep.launch).nccl_algorithm == "nvls")
    return {
        "sweep_max_err_pct": 100 * max(abs(r.error) for r in points.values()),
        "sweep_min_size": format_size(min(points)), "sweep_max_size": format_size(max(points)),
        "sweep_nccl": sweep.nccl_version,
        "sweep_launch_us": cal.LAUNCH_S[sweep.launch].value * 1e6,
        "model_nvls_from": format_size(nvls_from),
        # NCCL moved from Ring/LL (up to 1 MiB) to NVLS/Simple (from 2 MiB) on that machine: the source's own text
        "nvls_switch_same": claims.compare_word(nvls_from, 2 * MiB, higher="later than", lower="earlier than",
                                                same="at the same size as"),
    }


def _nvls() -> dict[str, object]:
    c13 = case(NVLS_CASE)
    size = int(c13["bytes"])
    algbw_gbps = float(c13["algbw_GBps"])
    ring_wire = steps_and_wire_bytes("all_reduce", 1, num_ranks=NUM_RANKS, algorithm="ring")[1]
    nvls_wire = steps_and_wire_bytes("all_reduce", 1, num_ranks=NUM_RANKS, algorithm="nvls")[1]
    auto, ring = _ar(size), _ar(size, "ring")
    claims.require(auto.algorithm == auto.nccl_algorithm, "at 16 GiB the model's time is that of NCCL's own pick")
    out: dict[str, object] = {
        "c13_size": format_size(size), "c13_algbw": algbw_gbps, "c13_busbw": float(c13["busbw_GBps"]),
        "ring_wire": ring_wire, "nvls_wire": nvls_wire, "c13_wire_rate": algbw_gbps * nvls_wire,
        "c13_wire_pct": 100 * algbw_gbps * nvls_wire * 1e9 / get_link("nvlink4").bw_bytes_per_s,
        "m13_algo": auto.nccl_algorithm, "m13_busbw": auto.busbw_bytes_per_s / 1e9,
        "m13_algbw": auto.algbw_bytes_per_s / 1e9, "r13_busbw": ring.busbw_bytes_per_s / 1e9,
    }
    auto4 = _ar(4 * GiB, num_ranks=4)
    # NCCL's own estimate (as busbw) of NVLS and Ring/Simple at 4 GPUs, from the alternatives it considered
    est = {(a, p): 4 * GiB / t * busbw_factor("all_reduce", 4) / 1e9 for a, p, t in auto4.alternatives}
    claims.require(auto4.nccl_algorithm == "ring" and est[("nvls", "Simple")] < est[("ring", "Simple")],
                   "at 4 GPUs NCCL's own estimate rates NVLS below Ring, and picks Ring")
    nvls = {n: _ar(4 * GiB, "nvls", num_ranks=n).busbw_bytes_per_s / 1e9 for n in (4, 5, 6, 7, 8)}
    claims.require(list(nvls.values()) == sorted(nvls.values()), "the NVLS gain grows with the GPU count")
    ring4, ring8 = (_ar(4 * GiB, "ring", num_ranks=n).busbw_bytes_per_s / 1e9 for n in (4, 8))
    claims.require(max(ring4, ring8) < ISSUE_1455_RING_MIN_GBPS,
                   "the model's ring is below the 365-370 GB/s measured in NCCL issue #1455")
    out.update({f"nvls_n{n}": v for n, v in nvls.items()})
    out.update({"auto_n4_algo": auto4.nccl_algorithm, "nccl_nvls_n4_busbw": est[("nvls", "Simple")],
                "nccl_ring_n4_busbw": est[("ring", "Simple")], "ring_n8": ring8,
                "n4_gain_phrase": claims.change_phrase(nvls[4], ring4, higher="above", lower="below")})
    return out


def numbers() -> dict[str, object]:
    """Every value ``book/collectives.md`` glues into its prose, by glue key.

    Returns
    -------
    dict of str to object
        busbw factors (``f_ar_8``, ``f_ag_8``, ``f_ar_1``: dimensionless; ``q1_busbw`` GB/s; ``q2_*_steps``;
        ``nv4_dir``: NVLink 4 per direction, GB/s); NCCL's tuner constants (``nccl_*_us``: base latency and latency per
        NVLink step, us, from ``src/graph/tuning.cc``; ``num_protocols``, ``protocol_names``); the algorithms at
        64 KiB and 1 GiB on 8x H100 (``auto_small``/``auto_large``: NCCL's pick as "algorithm / protocol";
        ``*_alpha_pct`` %; ``*_small_us`` us; ``*_large_ms`` ms; ``ring_protocols``: a phrase); a ring's latency for
        8 B on A100s (``c22_*`` us, model and the measurement of nccl-tests issue #123; ``c41_nccl_us``); the 8x H200
        sweep (``sweep_max_err_pct`` %, ``sweep_*`` sizes, release, ``sweep_launch_us`` us,
        ``model_nvls_from`` a size, ``nvls_switch_same`` words); NVLS (``c13_*``: the measurement at 16 GiB, GB/s and
        %; ``ring_wire``/``nvls_wire`` bytes per link per byte of message; ``m13_*``, ``r13_busbw``, ``nvls_n4`` to
        ``nvls_n8``, ``ring_n8``, ``nccl_*_n4_busbw``: GB/s; ``auto_n4_algo``; ``n4_gain_phrase`` words).

    Raises
    ------
    ClaimError
        If the model no longer supports one of the page's sentences (each ``claims.require`` names it).

    Notes
    -----
    Everything comes from :func:`gpucomm.model.cost.collective_cost`, :mod:`gpucomm.model.nccl_tuner`, the catalog,
    the bundled measurements (:mod:`gpucomm.model.measurements`) and :func:`gpucomm.model.validation.validate`.
    """
    out: dict[str, object] = {}
    for part in (_factors, _tuner_constants, _algorithm_times, _ring_latency, _h200_sweep, _nvls):
        out.update(part())
    return out
