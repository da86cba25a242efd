"""The numbers of ``book/pcie.md`` (PCIe: the bus every GPU has).

Sections: the generations (transfer rate, line code, bytes per second per direction, the both-directions figure PCI-SIG
markets), P2P through an Intel root complex, the ring all_reduce over PCIe 3.0 to 6.0 with and without P2P, the model
against published measurements without P2P, and the socket links. The ``nvidia-smi topo -m`` example reads a topology
parser of :mod:`gpucomm.measure` and stays in the page.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model.cost import collective_cost
from gpucomm.model.course import checked_on
from gpucomm.model.fabric import make_fabric
from gpucomm.model.hardware import PCIE_GENS, get_gpu, get_host_hop, get_inter_socket_link, get_pcie_gen
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.hardware.pcie import INTEL_P2P_OVERHEAD
from gpucomm.model.measurements import PCIE5_H2D_COPY
from gpucomm.model.units import GiB
from gpucomm.model.validation import CASES, SWEEPS, validate

__all__ = ["STAGED_CASES", "generation_rows", "numbers"]

RING_GENS = (3, 4, 5, 6)
"""The PCIe generations of the page's all_reduce table and figure."""
STAGED_CASES = ("C07", "C05", "P03", "P04", "P05", "C03", "C02")
"""The published all_reduce measurements without P2P that the page's table shows (rows of the validation's cases)."""


def generation_rows() -> list[dict]:
    """One row per PCIe generation for the page's table, in GB/s (1e9 B/s), from :data:`~gpucomm.model.hardware.PCIE_GENS`.

    Returns
    -------
    list of dict
        ``PCIe``, ``year``, ``GT/s per lane``, ``line code``, ``signalling``, the usable rate per lane and per x16 link
        in each direction, and the x16 figure PCI-SIG markets (both directions added, raw bits from 3.0 on). Sources:
        each generation's ``notes`` in the catalog.
    """
    return [{
        "PCIe": g.name, "year": g.year, "GT/s per lane": g.lane_transfers_per_s / 1e9, "line code": g.encoding,
        "signalling": g.signalling, "per lane, per direction (GB/s)": round(g.lane_bw_bytes_per_s / 1e9, 3),
        "x16, per direction (GB/s)": round(g.x16_bytes_per_s / 1e9, 2),
        "x16, both directions (GB/s, as PCI-SIG markets it)": round(g.x16_bidir_marketing_bytes_per_s / 1e9, 1),
    } for g in PCIE_GENS.values()]


def _generations() -> dict[str, object]:
    out: dict[str, object] = {}
    for n in PCIE_GENS:
        g = get_pcie_gen(n)
        out[f"g{n}_gts"] = g.lane_transfers_per_s / 1e9
        out[f"g{n}_eff"] = 100 * g.encoding_efficiency
        out[f"g{n}_x16"] = g.x16_bytes_per_s / 1e9
        out[f"g{n}_bidir"] = g.x16_bidir_marketing_bytes_per_s / 1e9
        out[f"g{n}_bidir_after"] = 2 * g.x16_bytes_per_s / 1e9  # both directions, after the line code
    g6 = get_pcie_gen(6)
    out["g6_tlp"] = 100 * g6.flit_tlp_fraction
    out["g6_tlp_x16"] = g6.x16_bytes_per_s * g6.flit_tlp_fraction / 1e9
    out["g2_lane_gbit"] = 8 * get_pcie_gen(2).lane_bw_bytes_per_s / 1e9
    out["g3_lane_gbit"] = 8 * get_pcie_gen(3).lane_bw_bytes_per_s / 1e9
    out["g4_x4"] = get_pcie_gen(4).bw_bytes_per_s(4) / 1e9
    out["h2d_gb"] = PCIE5_H2D_COPY.value / 1e9
    out["h2d_share"] = 100 * PCIE5_H2D_COPY.value / get_pcie_gen(5).x16_bytes_per_s
    out["pcie_p2p_eff"] = 100 * cal.PCIE_P2P_EFFICIENCY.value
    lane = [get_pcie_gen(n).lane_bw_bytes_per_s for n in sorted(PCIE_GENS)]
    claims.require(all(1.95 < b / a < 2.05 for a, b in zip(lane, lane[1:])),
                   "each generation doubled the usable bandwidth per lane")
    claims.require(get_pcie_gen(3).lane_transfers_per_s < 2 * get_pcie_gen(2).lane_transfers_per_s,
                   "PCIe 3.0 got part of its doubling from the line code, not the transfer rate")
    return out


def _p2p_paths() -> dict[str, object]:
    nvswitch_gpus = (get_gpu("a100_sxm4_80gb"), get_gpu("h100_sxm5"), get_gpu("b200_hgx"))
    claims.require(nvswitch_gpus[1].nvlink_links == nvswitch_gpus[2].nvlink_links,
                   "H100 and B200 show the same NV# code")
    return {
        "intel_overhead": INTEL_P2P_OVERHEAD,
        "g5_cpu_p2p": get_host_hop("pcie5_cpu_p2p").bw_bytes_per_s / 1e9,
        "rtx4090_gen": get_gpu("rtx_4090").pcie_gen,
        "nv_a100": f"NV{nvswitch_gpus[0].nvlink_links}",
        "nv_h100": f"NV{nvswitch_gpus[1].nvlink_links}",
    }


def ring_busbw_gbps(gen: int, *, p2p: bool, num_ranks: int = 8, msg_bytes: int = GiB) -> float:
    """Busbw in GB/s (per direction) of a ring all_reduce over PCIe ``gen`` x16, with P2P or staged through host memory.

    Parameters
    ----------
    gen : int
        PCIe generation (3 to 6).
    p2p : bool
        GPU peer-to-peer (True) or NCCL's SHM transport through pinned host memory (False).
    num_ranks : int
        GPUs in the ring (default 8).
    msg_bytes : int
        all_reduce size in bytes (default 1 GiB).

    Returns
    -------
    float
        :func:`gpucomm.model.cost.collective_cost`'s busbw in GB/s (1e9 B/s).

    Raises
    ------
    GpucommError
        If the generation has no fabric in :func:`gpucomm.model.fabric.make_fabric`.
    """
    fabric = make_fabric(f"pcie{gen}", p2p=p2p)
    return collective_cost("all_reduce", msg_bytes, num_ranks=num_ranks, fabric=fabric).busbw_bytes_per_s / 1e9


def _all_reduce() -> dict[str, object]:
    ring = {(gen, p2p): ring_busbw_gbps(gen, p2p=p2p) for gen in RING_GENS for p2p in (True, False)}
    out: dict[str, object] = {}
    for gen in RING_GENS:
        out[f"g{gen}_p2p_busbw"] = ring[gen, True]
        out[f"g{gen}_nop2p_busbw"] = ring[gen, False]
    out["staged_eff"] = 100 * cal.HOST_STAGED_EFFICIENCY.value
    gain = {gen: ring[gen, True] / ring[gen, False] for gen in RING_GENS}
    out["p2p_gain_g4"] = gain[4]
    claims.require(all(1.5 < g < 2.5 for g in gain.values()),
                   "P2P gets about twice what staging does, about what a PCIe generation gives")
    claims.require(all(abs(ring[gen, True] / ring[gen + 1, False] - 1) < 0.2 for gen in RING_GENS[:-1]),
                   "each solid line lies on the dotted line of the next generation")
    out["_best_pcie_ring"] = ring[RING_GENS[-1], True]
    return out


def _staged_measurements(best_pcie_ring_gbps: float) -> dict[str, object]:
    results = validate()
    checked = {r.case_id: r for r in results}
    dgx, rtx8, rtx4, a40 = ("C07", "C05"), checked["P04"], checked["P05"], ("C03", "C02")
    a40_slowdown = min(checked[c].predicted / checked[c].measured for c in a40)
    claims.require(rtx8.measured < rtx4.measured, "eight RTX 5090 reach less busbw than four")
    claims.require(abs(rtx8.predicted / rtx4.predicted - 1) < 0.01 and rtx8.predicted < min(rtx8.measured, rtx4.measured),
                   "the model gives the same busbw for both counts, below both measurements")
    claims.require(a40_slowdown > 2,
                   "staged traffic across host bridges or sockets on the A40 server is several times slower than the model")
    claims.require(checked["C04"].measured > best_pcie_ring_gbps, "NVLink 3.0 on a DGX A100 measures more than any PCIe ring")
    return {
        "checked_pcie": checked_on(results, (*SWEEPS, *CASES), transport="pcie").sentence,
        "P04_meas": rtx8.measured, "P05_meas": rtx4.measured, "P04_model": rtx8.predicted,
        "a40_slowdown": a40_slowdown,
        "dgx_worst_err_pct": 100 * max(abs(checked[c].error) for c in dgx),
        "C04_meas": checked["C04"].measured,
    }


def _socket_links() -> dict[str, object]:
    qpi, upi, turin = (get_inter_socket_link(k) for k in ("qpi_broadwell", "upi_emerald_rapids", "xgmi_zen5"))
    claims.require(qpi.nccl_bw_bytes_per_s < upi.nccl_bw_bytes_per_s,
                   "socket links from Broadwell QPI up to Emerald Rapids UPI")
    return {"socket_min": qpi.nccl_bw_bytes_per_s / 1e9, "socket_max": upi.nccl_bw_bytes_per_s / 1e9,
            "turin_measured": turin.bw_bytes_per_s / 1e9, "turin_nccl": turin.nccl_bw_bytes_per_s / 1e9}


def numbers() -> dict[str, object]:
    """Every number ``book/pcie.md`` glues, by glue key.

    Returns
    -------
    dict of str to object
        Generations: ``g{n}_gts`` (GT/s per lane), ``g{n}_eff`` (line-code efficiency, %), ``g{n}_x16`` (x16, GB/s per
        direction), ``g{n}_bidir`` (PCI-SIG's x16 figure, both directions, GB/s), ``g{n}_bidir_after`` (both directions
        after the line code), ``g6_tlp`` (% of a flit for TLPs), ``g6_tlp_x16``, ``g2_lane_gbit``/``g3_lane_gbit`` (Gb/s
        per lane), ``g4_x4``, ``h2d_gb`` and ``h2d_share`` (a measured PCIe 5.0 host-to-device copy, GB/s and % of x16),
        ``pcie_p2p_eff`` (%). P2P: ``intel_overhead`` (factor), ``g5_cpu_p2p`` (GB/s), ``rtx4090_gen``, ``nv_a100``,
        ``nv_h100`` (``NV#`` codes). all_reduce at 1 GiB on 8 GPUs: ``g{3..6}_p2p_busbw``, ``g{3..6}_nop2p_busbw``
        (GB/s), ``staged_eff`` (%), ``p2p_gain_g4`` (factor). Measurements without P2P: ``checked_pcie`` (sentence),
        ``P04_meas``, ``P05_meas``, ``P04_model``, ``C04_meas`` (busbw, GB/s), ``a40_slowdown`` (factor),
        ``dgx_worst_err_pct`` (%). Socket links: ``socket_min``, ``socket_max``, ``turin_measured``, ``turin_nccl``
        (GB/s per direction).

    Raises
    ------
    ClaimError
        If the numbers contradict a sentence of the page (each :func:`gpucomm.model.claims.require` names it).

    Notes
    -----
    Sources: the PCIe catalog (:mod:`gpucomm.model.hardware.pcie`, each entry's ``source`` and ``notes``), NCCL's
    ``INTEL_P2P_OVERHEAD`` (``src/graph/topo.h`` at v2.30.7-1), the fitted efficiencies of
    :mod:`gpucomm.model.hardware.calibration`, :func:`gpucomm.model.cost.collective_cost`, and
    :func:`gpucomm.model.validation.validate` against the bundled published measurements.
    """
    out = {**_generations(), **_p2p_paths(), **_all_reduce()}
    best = out.pop("_best_pcie_ring")
    out.update(_staged_measurements(best))
    out.update(_socket_links())
    return out
