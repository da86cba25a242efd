"""The numbers of ``book/nccl_algorithms.md`` (NCCL's algorithms and how it chooses).

Sections: the tuner's constants (``src/graph/tuning.cc`` at the tag of :mod:`gpucomm.model.nccl_tuner`), what the tuner
computes for 8x H100 once per communicator, its pick at three sizes on one node, two nodes and 64 nodes, the same call
under an older release, and the model's estimate against a TUNING line NCCL printed. Reading that line needs the log
parser of :mod:`gpucomm.measure`, so the page passes its two numbers to :func:`tuning_log_numbers`.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.cost import CollectiveCost, collective_cost
from gpucomm.model.fabric import Fabric, system_fabric
from gpucomm.model.nccl_fabric import comm_and_table
from gpucomm.model.units import GiB, KiB, MiB, format_size

__all__ = ["NCCL_NAMES", "SIZES", "choice_rows", "numbers", "tuning_log_numbers"]

NUM_RANKS = 8
SIZES = (8 * KiB, MiB, 64 * MiB)
"""The three all_reduce sizes of the page's table: decode-sized, mid-sized, training-sized."""
NCCL_NAMES = nt.ALGORITHM_NAMES
OLD_RELEASE = "2.16.5"
"""A release before NVLS (2.17)."""


def _h100(num_nodes: int = 1) -> Fabric:
    if num_nodes == 1:
        return system_fabric("dgx_h100")
    return system_fabric("dgx_h100", num_nodes=num_nodes, network="ib_ndr")


def _pair(c: CollectiveCost) -> str:
    return f"{NCCL_NAMES[c.nccl_algorithm]}/{c.nccl_protocol}"


def _estimate_s(c: CollectiveCost, algorithm: str, protocol: str) -> float:
    return next(t for a, p, t in c.alternatives if (a, p) == (algorithm, protocol))


def choice_rows() -> list[dict]:
    """NCCL's estimate (us) of every (algorithm, protocol) it enables, at :data:`SIZES`, all_reduce on 8x H100.

    Returns
    -------
    list of dict
        One row per pair (``"NCCL's estimate (us)"``: e.g. ``"Ring/LL"``), one column per size, the estimate in us as
        text with `` *`` after NCCL's pick; from ``collective_cost(...).alternatives``.
    """
    rows: dict[str, dict] = {}
    for size in SIZES:
        c = collective_cost("all_reduce", size, num_ranks=NUM_RANKS, fabric=_h100())
        for a, p, t in c.alternatives:
            mark = " *" if (a, p) == (c.nccl_algorithm, c.nccl_protocol) else ""
            rows.setdefault(f"{NCCL_NAMES[a]}/{p}", {})[format_size(size)] = f"{t * 1e6:.1f}{mark}"
    return [{"NCCL's estimate (us)": pair, **cols} for pair, cols in rows.items()]


def _constants() -> dict[str, object]:
    out: dict[str, object] = {"tag": nt.NCCL_TAG, "ll_factor": nt.RING_LL_BW_FACTOR, "ll128_factor": nt.LL128_BW_FACTOR,
                              "hw_nvl_nvls": nt.HW_LATENCY_US["nvlink"]["nvls"][2]}
    for i, p in enumerate(("ll", "ll128", "simple")):
        out[f"base_ring_{p}"] = nt.BASE_LATENCY_US["ring"][i]
        out[f"hw_nvl_ring_{p}"] = nt.HW_LATENCY_US["nvlink"]["ring"][i]
    return out


def _tables() -> dict[str, object]:
    comm, table = comm_and_table(_h100(), NUM_RANKS)
    ring = comm.graphs["ring"]
    out: dict[str, object] = {"ring_ch": ring.num_channels, "ring_ch_bw": ring.bw_intra_bytes_per_s / 1e9,
                              "nsteps": 2 * (NUM_RANKS - 1)}
    for p in nt.PROTOCOLS:
        out[f"lat_ring_{p}"] = table.latency_s[("all_reduce", "ring", p)] * 1e6
        out[f"bw_ring_{p}"] = table.bw_bytes_per_s[("all_reduce", "ring", p)] / 1e9
    out["lat_nvls"] = table.latency_s[("all_reduce", "nvls", "Simple")] * 1e6
    out["bw_nvls"] = table.bw_bytes_per_s[("all_reduce", "nvls", "Simple")] / 1e9
    return out


def _one_node() -> dict[str, object]:
    costs = {s: collective_cost("all_reduce", s, num_ranks=NUM_RANKS, fabric=_h100()) for s in SIZES}
    small, mid, large = (costs[s] for s in SIZES)
    claims.require(_pair(small) == _pair(mid) == "Ring/LL" and _pair(large) == "NVLS/Simple",
                   "NCCL picks Ring/LL at 8 KiB and 1 MiB and NVLS/Simple at 64 MiB on 8x H100")
    second = mid.alternatives[1]
    claims.require((second[0], second[1]) == ("nvls", "Simple") and second[2] < 1.1 * mid.nccl_time_s,
                   "at 1 MiB NVLS/Simple is second, within 10 % of Ring/LL ('by a hair')")
    out: dict[str, object] = {f"pick_{k}": _pair(c) for k, c in zip(("small", "mid", "large"), (small, mid, large))}
    out.update({f"pick_{k}_us": c.nccl_time_s * 1e6 for k, c in zip(("small", "mid", "large"), (small, mid, large))})
    out.update({"second_mid": f"{NCCL_NAMES[second[0]]}/{second[1]}", "second_mid_us": second[2] * 1e6,
                "pick_large_ch": large.num_channels})
    gib = collective_cost("all_reduce", GiB, num_ranks=NUM_RANKS, fabric=_h100())
    claims.require(_pair(gib) == "NVLS/Simple" and gib.alternatives[1][:2] == ("ring", "Simple"),
                   "at 1 GiB NCCL picks NVLS/Simple and rates Ring/Simple second")
    old = collective_cost("all_reduce", 64 * MiB, num_ranks=NUM_RANKS, fabric=_h100(), nccl_version=OLD_RELEASE)
    claims.require(old.nccl_algorithm != "nvls", "NCCL 2.16 has no NVLS")
    out.update({"pick_1g": _pair(gib), "pick_1g_us": gib.nccl_time_s * 1e6,
                "ring_1g_us": _estimate_s(gib, "ring", "Simple") * 1e6,
                "old_pick": _pair(old), "old_us": old.nccl_time_s * 1e6})
    return out


def _several_nodes() -> dict[str, object]:
    two = [collective_cost("all_reduce", s, num_ranks=16, fabric=_h100(2)) for s in SIZES]
    claims.require(two[0].nccl_algorithm == "tree" and two[-1].nccl_algorithm == "nvls_tree",
                   "across two nodes Tree enters at small sizes, NVLSTree at large")
    pat_small = collective_cost("all_gather", MiB, num_ranks=64, fabric=_h100(64))
    pat_large = collective_cost("all_gather", GiB, num_ranks=64, fabric=_h100(64))
    claims.require(pat_small.nccl_algorithm == "pat" and pat_large.nccl_algorithm == "ring",
                   "PAT at 1 MiB over 64 nodes, a ring at 1 GiB")
    out: dict[str, object] = {f"x2_{k}": _pair(c) for k, c in zip(("small", "mid", "large"), two)}
    out.update({"pat_small": _pair(pat_small), "pat_large": _pair(pat_large),
                "pat_small_us": pat_small.nccl_time_s * 1e6,
                "pat_ring_small_us": _estimate_s(pat_small, "ring", "LL") * 1e6})
    return out


def tuning_log_numbers(msg_bytes: int, printed_us: float) -> dict[str, object]:
    """The model's Ring/Simple estimate for the all_reduce of a TUNING line NCCL printed on 8x H100.

    Parameters
    ----------
    msg_bytes : int
        The call's size in bytes, as the line prints it.
    printed_us : float
        NCCL's printed estimate, us.

    Returns
    -------
    dict of str to object
        ``log_bytes`` (the size in words), ``log_us`` and ``model_1595_us`` (us): NCCL's figure and the model's.

    Raises
    ------
    ClaimError
        If the model's estimate differs from the printed one by 0.01 us or more.
    """
    model = collective_cost("all_reduce", msg_bytes, num_ranks=NUM_RANKS, fabric=_h100(), algorithm="ring",
                            protocol="Simple")
    claims.require(abs(model.nccl_time_s * 1e6 - printed_us) < 0.01, "the model's estimate equals NCCL's printed float")
    return {"log_bytes": format_size(msg_bytes), "log_us": printed_us, "model_1595_us": model.nccl_time_s * 1e6}


def numbers() -> dict[str, object]:
    """Every value ``book/nccl_algorithms.md`` glues, by glue key, but the TUNING log's (:func:`tuning_log_numbers`).

    Returns
    -------
    dict of str to object
        The tuner's constants (``tag``; ``base_ring_*``, ``hw_nvl_*``: us; ``ll_factor``, ``ll128_factor``:
        dimensionless); its tables for an all_reduce on 8x H100 (``ring_ch``, ``ring_ch_bw`` GB/s, ``nsteps``,
        ``lat_ring_<protocol>``, ``lat_nvls`` us, ``bw_ring_<protocol>``, ``bw_nvls`` GB/s of algorithm bandwidth);
        its picks (``pick_*``, ``second_mid``, ``old_pick``, ``x2_*``, ``pat_*``: "Algorithm/protocol" as NCCL names
        them; ``*_us``: NCCL's estimate, us; ``pick_large_ch`` channels).

    Raises
    ------
    ClaimError
        If the model no longer supports one of the page's sentences (each ``claims.require`` names it).

    Notes
    -----
    From :mod:`gpucomm.model.nccl_tuner` (constants cited at the tag), :func:`gpucomm.model.nccl_fabric.comm_and_table`
    and :func:`gpucomm.model.cost.collective_cost` (``nccl_algorithm``, ``nccl_protocol``, ``nccl_time_s``,
    ``alternatives``).
    """
    out: dict[str, object] = {}
    for part in (_constants, _tables, _one_node, _several_nodes):
        out.update(part())
    return out
