"""The numbers of ``book/myths.md`` (myths and misconceptions), one helper per myth.

Myths: the algorithm chosen at run time (1), per link vs per GPU (3), PCIe's both-directions figure and NVLink vs HBM
(4), NVLS busbw above the line rate (5), traffic summed over GPUs (6), two RTX 4090s without P2P (7), tensor-parallel
speed-ups (8, 9) and the blog's 900 GB/s (11). The page's figure is drawn by :mod:`gpucomm.viz` and stays in the page.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model.collectives import busbw_bytes_per_s
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import Fabric, make_fabric
from gpucomm.model.hardware import get_gpu, get_link
from gpucomm.model.measurements import case, llama70b_tp4_4xa100
from gpucomm.model.scaling import hbm_over_nvlink, nvlink_per_link_bytes_per_s
from gpucomm.model.tp import tp_all_reduce_bytes, tp_speedup, tp_step
from gpucomm.model.units import GiB, KiB, MiB

__all__ = ["numbers"]

NVLS_CASE = "C13"
"""8x H200 all_reduce at 16 GiB (ml-engineering's torch.distributed sweep), busbw as nccl-tests computes it."""
BLOG_TP_BYTES = 20e9
"""The 20 GB of TP data per GPU for one Llama 3.1 70B query (NVIDIA Technical Blog, Aug 2024)."""
ARTICLE_TOKENS, ARTICLE_HIDDEN, ARTICLE_TP = 4096, 8192, 4
"""Baobao Algorithm Notes' Llama-3-70B TP=4 all_reduce: 4096 tokens x hidden 8192 (bf16) on 4 GPUs."""


def _h100() -> Fabric:
    return make_fabric("nvlink4", gpu="h100_sxm5")


def _myth1() -> dict[str, object]:
    # NCCL's own pick (nccl_algorithm/nccl_protocol): what its tuner would choose
    picks = {}
    for name, size, link in (("small", 16 * KiB, "nvlink4"), ("large", 64 * MiB, "nvlink4"),
                             ("a100", 64 * MiB, "nvlink3")):
        c = collective_cost("all_reduce", size, num_ranks=8, fabric=link)
        picks[f"m1_{name}"] = f"{c.nccl_algorithm}/{c.nccl_protocol}"
    claims.require(len(set(picks.values())) == 3, "the same binary makes three different choices")
    return picks


def _links() -> dict[str, object]:
    h100, b200 = get_gpu("h100_sxm5"), get_gpu("b200_hgx")
    pcie5 = get_link("pcie5")
    return {
        "h100_links": h100.nvlink_links, "h100_link_gbps": nvlink_per_link_bytes_per_s("h100_sxm5") / 1e9,
        "h100_gpu_gbps": h100.nvlink_bw_bytes_per_s / 1e9,
        "h100_gpu_bidir": h100.nvlink_bidir_marketing_bytes_per_s / 1e9,
        "b200_link_gbps": nvlink_per_link_bytes_per_s("b200_hgx") / 1e9, "b200_gpu_gbps": b200.nvlink_bw_bytes_per_s / 1e9,
        "b200_links": b200.nvlink_links,
        "pcie5_dir": pcie5.bw_bytes_per_s / 1e9,
        "pcie5_bidir": pcie5.bidir_marketing_bytes_per_s / 1e9,  # PCI-SIG: raw bit rate, both directions
        "pcie5_bidir_after": 2 * pcie5.bw_bytes_per_s / 1e9,  # both directions after the line code
        "pcie4_dir": get_link("pcie4").bw_bytes_per_s / 1e9,
        "q1_ms": GiB / get_link("pcie4").bw_bytes_per_s * 1e3,  # 1 GiB at the per-direction rate
        "hbm_over_nv_b200": hbm_over_nvlink("b200_hgx"), "hbm_over_nv_h100": hbm_over_nvlink("h100_sxm5"),
        "b200_hbm_tbps": b200.mem_bw_bytes_per_s / 1e12,
        "m11_ms": BLOG_TP_BYTES / h100.nvlink_bw_bytes_per_s * 1e3,  # one direction at line rate
        "r3090_dir": get_gpu("rtx_3090").nvlink_bw_bytes_per_s / 1e9,
    }


def _myth5() -> dict[str, object]:
    c13 = case(NVLS_CASE)
    size = int(c13["bytes"])
    line_gbps = get_link("nvlink4").bw_bytes_per_s / 1e9
    nvls = collective_cost("all_reduce", size, num_ranks=8, fabric="nvlink4", algorithm="nvls").busbw_bytes_per_s / 1e9
    ring = collective_cost("all_reduce", size, num_ranks=8, fabric="nvlink4", algorithm="ring").busbw_bytes_per_s / 1e9
    claims.require(float(c13["busbw_GBps"]) > line_gbps > float(c13["algbw_GBps"]),
                   "measured busbw above the line rate, algbw below it")
    claims.require(nvls > line_gbps > ring, "the model's NVLS busbw is above the line rate, its ring busbw below it")
    return {"c13_busbw": float(c13["busbw_GBps"]), "c13_algbw": float(c13["algbw_GBps"]), "c13_gib": size / GiB,
            "nv4_dir": line_gbps, "nvls_busbw": nvls, "ring_busbw": ring}


def _myth6() -> dict[str, object]:
    article = llama70b_tp4_4xa100()
    time_s = article["all_reduce_nvlink3_s"].value
    msg = tp_all_reduce_bytes(ARTICLE_TOKENS, ARTICLE_HIDDEN)
    return {"s0_claim": article["article_claimed_nvlink_bw_bytes_per_s"].value / 1e9, "s0_time_us": time_s * 1e6,
            "s0_busbw": busbw_bytes_per_s("all_reduce", msg, time_s, ARTICLE_TP) / 1e9,
            "nv3_dir": get_link("nvlink3").bw_bytes_per_s / 1e9,
            "nv3_bidir": get_link("nvlink3").bidir_marketing_bytes_per_s / 1e9}


def _myth7() -> dict[str, object]:
    r4090 = get_gpu("rtx_4090")
    via_host = collective_cost("all_reduce", 64 * MiB, num_ranks=2, fabric=make_fabric("pcie4", p2p=False))
    direct = collective_cost("all_reduce", 64 * MiB, num_ranks=2, fabric="pcie4")
    claims.require(via_host.time_s > direct.time_s, "staging through host memory is slower than P2P")
    return {"r4090_pcie": r4090.pcie_gen, "r4090_p2p": "no" if r4090.pcie_p2p is False else "yes",
            "r_host_ms": via_host.time_s * 1e3, "r_p2p_ms": direct.time_s * 1e3}


def _myth8() -> dict[str, object]:
    dec = {tp: tp_speedup("llama-3-8b", fabric=_h100(), tp_size=tp, phase="decode", batch=1) for tp in (2, 4, 8)}
    pre4090 = tp_speedup("llama-3-8b", fabric=make_fabric("pcie4", p2p=False, gpu="rtx_4090"), tp_size=2,
                         phase="prefill", prompt_len=2048)
    claims.require(dec[8] / 8 < dec[4] / 4 < dec[2] / 2 < 0.8, "far from 2x, 4x, 8x; each doubling of TP buys less per GPU")
    claims.require(pre4090 < 1.05, "TP=2 prefill on two RTX 4090s without P2P buys nothing over one card")
    out: dict[str, object] = {f"s8_dec_{tp}": s for tp, s in dec.items()}
    out.update({
        "s8_4090_pre": pre4090,
        # the words come from the numbers: TP=4 -> TP=8 per user, and the speed-up each GPU buys
        "s8_tp8_vs_tp4": claims.change_phrase(dec[8], dec[4], higher="faster", lower="slower"),
        "s8_eff_4": dec[4] / 4, "s8_eff_8": dec[8] / 8,
        "s8_4090_pre_word": claims.compare_word(pre4090, 1.0, higher="faster than", lower="slower than",
                                                same="no faster than", rel_tol=0.05),
    })
    return out


def _myth9() -> dict[str, object]:
    prefill = {"phase": "prefill", "prompt_len": 4096}
    speedup = {tp: tp_speedup("llama-3-70b", fabric=_h100(), tp_size=tp, **prefill) for tp in (2, 4, 8)}
    share = {tp: tp_step("llama-3-70b", fabric=_h100(), tp_size=tp, **prefill).comm_share for tp in (2, 4, 8)}
    claims.require(all(speedup[tp] < 0.95 * tp for tp in speedup), "even compute-bound 70B prefill stays below linear")
    claims.require(share[2] < share[4] < share[8], "communication's share of the pass grows with the TP degree")
    weights = tp_step("llama-3-70b", fabric=_h100(), tp_size=1, **prefill).mem_bytes_per_gpu
    h100_mem = get_gpu("h100_sxm5").mem_bytes
    claims.require(weights > h100_mem, "Llama-3-70B does not fit one H100: TP=1 is a what-if")
    out: dict[str, object] = {f"s70_pre_{tp}": s for tp, s in speedup.items()}
    out.update({f"s70_share_{tp}": 100 * s for tp, s in share.items()})
    out.update({"s70_tp1_gb": weights / 1e9, "h100_mem_gb": h100_mem / 1e9})
    return out


def numbers() -> dict[str, object]:
    """Every value ``book/myths.md`` glues, by glue key.

    Returns
    -------
    dict of str to object
        Myth 1: ``m1_small``, ``m1_large``, ``m1_a100`` (NCCL's pick, "algorithm/protocol"). Myths 3, 4, 11: NVLink
        per link and per GPU (``h100_*``, ``b200_*``, ``r3090_dir``: GB/s per direction, ``*_bidir``: both directions
        added; link counts), PCIe (``pcie5_*``, ``pcie4_dir``: GB/s), ``hbm_over_nv_*`` (ratios), ``b200_hbm_tbps``
        TB/s, ``q1_ms`` and ``m11_ms`` (ms). Myth 5: ``c13_*`` (the measurement: GB/s, GiB), ``nv4_dir``,
        ``nvls_busbw``, ``ring_busbw`` (GB/s). Myth 6: ``s0_*`` (GB/s, us), ``nv3_*`` (GB/s). Myth 7: ``r4090_*``,
        ``r_host_ms``, ``r_p2p_ms`` (ms). Myths 8-9: ``s8_*``, ``s70_pre_*`` (speed-ups over one GPU), ``s70_share_*``
        (%), ``s70_tp1_gb``, ``h100_mem_gb`` (GB), and the words ``s8_tp8_vs_tp4``, ``s8_4090_pre_word``.

    Raises
    ------
    ClaimError
        If the model no longer supports one of the page's sentences (each ``claims.require`` names it).

    Notes
    -----
    From the catalog (:mod:`gpucomm.model.hardware`), :func:`gpucomm.model.cost.collective_cost`,
    :mod:`gpucomm.model.tp`, :mod:`gpucomm.model.scaling` and the bundled measurements
    (:mod:`gpucomm.model.measurements`).
    """
    out: dict[str, object] = {}
    for part in (_myth1, _links, _myth5, _myth6, _myth7, _myth8, _myth9):
        out.update(part())
    return out
