"""The numbers of ``book/nvlink.md`` (NVLink: links, generations and what they do not do).

Sections: the generations (links per GPU, per link and per GPU, per direction, and NVIDIA's both-directions figure),
what software reaches (the fitted ring efficiencies, published all_reduce busbw, NCCL's own per-link figures), the
bridged PCIe cards, NVLink-C2C, and HBM against NVLink.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model.cost import effective_bw_bytes_per_s, make_fabric, pair_bw_bytes_per_s
from gpucomm.model.hardware import GPUS, NVLINK_C2C, get_gpu, get_link
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.measurements import case
from gpucomm.model.nccl_tuner import NVLINK_BW_GBPS
from gpucomm.model.scaling import GENERATIONS, get_generation, hbm_over_nvlink, link_ratio, nvlink_per_link_bytes_per_s

__all__ = ["bridged_rows", "generation_rows", "numbers"]


def generation_rows() -> list[dict]:
    """One row per NVLink generation (its first SXM GPU), in GB/s (1e9 B/s), from :data:`gpucomm.model.scaling.GENERATIONS`.

    Returns
    -------
    list of dict
        ``NVLink``, ``first GPU``, ``links per GPU``, per link and per GPU per direction, and NVIDIA's per-GPU figure
        with both directions added. Sources: the GPU and link catalog entries' ``source`` and ``notes``.
    """
    return [{
        "NVLink": get_link(g.nvlink_key).name.split(" (")[0], "first GPU": g.label, "links per GPU": g.nvlink_links,
        "per link, per direction (GB/s)": g.nvlink_per_link_bw_bytes_per_s / 1e9,
        "per GPU, per direction (GB/s)": g.nvlink_bw_bytes_per_s / 1e9,
        "per GPU, both directions (GB/s, NVIDIA's figure)": get_link(g.nvlink_key).bidir_marketing_bytes_per_s / 1e9,
    } for g in GENERATIONS]


def bridged_rows() -> list[dict]:
    """One row per PCIe card of the catalog that takes an NVLink bridge, in GB/s (1e9 B/s); ``nan`` where unknown.

    Returns
    -------
    list of dict
        ``card``, ``NVLink`` (generation), ``links``, per link and per GPU per direction, both directions added.
        Sources: each card's catalog ``notes``.
    """
    return [{
        "card": g.name, "NVLink": g.nvlink_gen, "links": g.nvlink_links if g.nvlink_links else "n/a",
        "per link, per direction (GB/s)": (nvlink_per_link_bytes_per_s(g.key) / 1e9) if g.nvlink_links else float("nan"),
        "per GPU, per direction (GB/s)": g.nvlink_bw_bytes_per_s / 1e9,
        "both directions (GB/s)": g.nvlink_bidir_marketing_bytes_per_s / 1e9,
    } for g in GPUS.values() if g.nvlink_bridge]


def _generations() -> dict[str, object]:
    p100, v100, a100, h100, b200 = (get_generation(k) for k in
                                    ("p100_sxm2", "v100_sxm2", "a100_sxm4_80gb", "h100_sxm5", "b200_hgx"))
    mesh4_pair = pair_bw_bytes_per_s(make_fabric("nvlink3", topology="mesh", mesh_size=4))
    claims.require(v100.nvlink_per_link_bw_bytes_per_s == a100.nvlink_per_link_bw_bytes_per_s
                   == h100.nvlink_per_link_bw_bytes_per_s and h100.nvlink_bw_bytes_per_s == 3 * v100.nvlink_bw_bytes_per_s,
                   "one link stayed at the same rate from V100 to H100 while the per-GPU figure tripled")
    claims.require(b200.nvlink_per_link_bw_bytes_per_s == 2 * h100.nvlink_per_link_bw_bytes_per_s
                   and b200.nvlink_links == h100.nvlink_links, "B200 doubles the per-link rate with H100's link count")
    claims.require(abs(3 * mesh4_pair - a100.nvlink_bw_bytes_per_s) < 1,
                   "on the 4-GPU HGX A100 a pair gets a third of the GPU's NVLink")
    h800 = get_gpu("h800_sxm")
    claims.require(h800.nvlink_bw_bytes_per_s < h100.nvlink_bw_bytes_per_s, "the H800 has less NVLink than the H100")
    return {
        "p100_links": p100.nvlink_links,
        "a100_links": a100.nvlink_links, "a100_dir": a100.nvlink_bw_bytes_per_s / 1e9,
        "a100_bidir": get_link("nvlink3").bidir_marketing_bytes_per_s / 1e9,
        "a100_mesh4_pair": mesh4_pair / 1e9,
        "h100_links": h100.nvlink_links, "h100_link": h100.nvlink_per_link_bw_bytes_per_s / 1e9,
        "h100_dir": h100.nvlink_bw_bytes_per_s / 1e9, "h100_bidir": get_link("nvlink4").bidir_marketing_bytes_per_s / 1e9,
        "b200_links": b200.nvlink_links, "b200_link": b200.nvlink_per_link_bw_bytes_per_s / 1e9,
        "b200_dir": b200.nvlink_bw_bytes_per_s / 1e9, "b200_bidir": get_link("nvlink5").bidir_marketing_bytes_per_s / 1e9,
        "nv4_over_pcie5": link_ratio("nvlink4", "pcie5"),
        "h800_dir": h800.nvlink_bw_bytes_per_s / 1e9,
    }


def _what_software_gets() -> dict[str, object]:
    h100, b200 = get_generation("h100_sxm5"), get_generation("b200_hgx")
    nv4, nv5 = NVLINK_BW_GBPS[90], NVLINK_BW_GBPS[100]  # NCCL topo.h SM90_NVLINK_BW, SM100_NVLINK_BW: GB/s per link
    claims.require(nv4 * 1e9 < h100.nvlink_per_link_bw_bytes_per_s and nv5 * 1e9 < b200.nvlink_per_link_bw_bytes_per_s,
                   "NCCL plans with less than the line rate per link")
    return {
        "eff_nv3": 100 * cal.RING_EFFICIENCY["nvlink3"].value, "eff_nv4": 100 * cal.RING_EFFICIENCY["nvlink4"].value,
        "effbw_nv3": effective_bw_bytes_per_s("nvlink3") / 1e9, "effbw_nv4": effective_bw_bytes_per_s("nvlink4") / 1e9,
        "C04": float(case("C04")["busbw_GBps"]), "C06": float(case("C06")["busbw_GBps"]),
        "nccl_nv4_link": nv4, "nccl_nv5_link": nv5,
        "nccl_nv4_pct": 100 * nv4 * 1e9 / h100.nvlink_per_link_bw_bytes_per_s,
        "nccl_nv5_pct": 100 * nv5 * 1e9 / b200.nvlink_per_link_bw_bytes_per_s,
    }


def _bridges_c2c_hbm() -> dict[str, object]:
    a40 = get_gpu("a40")
    a40_pair = float(case("C01")["busbw_GBps"])
    claims.require(get_gpu("rtx_4090").nvlink_gen is None and get_gpu("rtx_5090").nvlink_gen is None,
                   "RTX 4090 and 5090 have no NVLink")
    claims.require(a40_pair * 1e9 < a40.nvlink_bw_bytes_per_s, "the A40 pair stays below its bridge's rate")
    hbm = {k: hbm_over_nvlink(k) for k in ("h100_sxm5", "b200_hgx")}
    claims.require(min(hbm.values()) > 3, "HBM is several times NVLink, not 'almost as fast'")
    return {
        "C01": a40_pair, "C01_pct": 100 * a40_pair * 1e9 / a40.nvlink_bw_bytes_per_s,
        "a40_dir": a40.nvlink_bw_bytes_per_s / 1e9, "a40_link": nvlink_per_link_bytes_per_s("a40") / 1e9,
        "a40_links": a40.nvlink_links, "a40_bidir": a40.nvlink_bidir_marketing_bytes_per_s / 1e9,
        "c2c_dir": NVLINK_C2C.bw_bytes_per_s / 1e9, "c2c_bidir": NVLINK_C2C.bidir_marketing_bytes_per_s / 1e9,
        "hbm_h100": hbm["h100_sxm5"], "hbm_b200": hbm["b200_hgx"],
        "h100_hbm_tb": get_gpu("h100_sxm5").mem_bw_bytes_per_s / 1e12,
    }


def numbers() -> dict[str, object]:
    """Every number ``book/nvlink.md`` glues, by glue key.

    Returns
    -------
    dict of str to object
        Generations: ``{p100,a100,h100,b200}_links`` (links per GPU), ``h100_link``/``b200_link`` (per link, GB/s per
        direction), ``{a100,h100,b200}_dir`` (per GPU, GB/s per direction), ``{a100,h100,b200}_bidir`` (NVIDIA's figure,
        both directions), ``a100_mesh4_pair`` (GB/s between two GPUs of a 4-GPU HGX A100), ``nv4_over_pcie5`` (ratio),
        ``h800_dir``. Software: ``eff_nv3``/``eff_nv4`` (fitted ring efficiency, %), ``effbw_nv3``/``effbw_nv4`` (GB/s),
        ``C04``/``C06`` (published all_reduce busbw on DGX A100 / DGX H100, GB/s), ``nccl_nv4_link``/``nccl_nv5_link``
        (NCCL's planning figure per link, GB/s) and their share of the line rate (``nccl_nv4_pct``, ``nccl_nv5_pct``).
        Bridges, C2C, HBM: ``C01`` (2x A40 busbw, GB/s), ``C01_pct``, ``a40_dir``, ``a40_link``, ``a40_links``,
        ``a40_bidir``, ``c2c_dir``, ``c2c_bidir`` (GB/s), ``hbm_h100``/``hbm_b200`` (HBM over NVLink per direction),
        ``h100_hbm_tb`` (TB/s).

    Raises
    ------
    ClaimError
        If the numbers contradict a sentence of the page (each :func:`gpucomm.model.claims.require` names it).

    Notes
    -----
    Sources: the GPU and link catalog (:mod:`gpucomm.model.hardware`, each entry's ``source`` and ``notes``), NCCL's
    ``SM90_NVLINK_BW``/``SM100_NVLINK_BW`` (``src/graph/topo.h`` at v2.30.7-1, :data:`gpucomm.model.nccl_tuner.NVLINK_BW_GBPS`),
    the fitted ring efficiencies of :mod:`gpucomm.model.hardware.calibration`, and the bundled published measurements
    (:func:`gpucomm.model.measurements.case`).
    """
    return {**_generations(), **_what_software_gets(), **_bridges_c2c_hbm()}
