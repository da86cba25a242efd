"""The numbers of ``book/why_communication.md`` (Why communication limits scaling).

Sections: a CSDN article's P100-to-B200 figures and what they give; the catalog's like-for-like growth of compute, PCIe
and NVLink; machine balance (FLOPs per byte of link) against the communication intensity of tensor parallelism;
Amdahl's law; and the TP model's speed-ups of Llama-3-70B on H100 over NVLink and PCIe 5.0 with and without P2P.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model.collectives import busbw_factor
from gpucomm.model.course import checked_on
from gpucomm.model.fabric import make_fabric
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.hardware import get_gpu, get_link, get_pcie_gen
from gpucomm.model.scaling import (
    P100_B200_ARTICLE_CLAIMS,
    P100_SXM2_FP16_FLOPS_PER_S,
    amdahl_limit,
    amdahl_speedup,
    generation_growth,
    get_generation,
    hbm_over_nvlink,
    link_busy_fraction,
    link_ratio,
    p100_b200_article_ratios,
    tp_flops_per_wire_byte,
)
from gpucomm.model.tp import tp_speedup, tp_step
from gpucomm.model.validation import CASES, SWEEPS, validate

__all__ = ["GPU", "MODEL", "TP", "numbers"]

MODEL, GPU, TP = "llama-3-70b", "h100_sxm5", 8
"""The chapter's example: Llama-3-70B on H100 SXM at TP=8."""
GENERATION_KEYS = ("p100_sxm2", "v100_sxm2", "a100_sxm4_80gb", "h100_sxm5", "b200_hgx")
AMDAHL_PARALLEL_SHARE = 0.95
"""The share of the work that divides over the GPUs in the Amdahl example (an illustration, not a measurement)."""
PREFILL = {"phase": "prefill", "prompt_len": 4096}
DECODE = {"phase": "decode", "batch": 1, "prompt_len": 4096}


def _article() -> dict[str, object]:
    article, ratios = P100_B200_ARTICLE_CLAIMS, p100_b200_article_ratios()
    out: dict[str, object] = {f"article_{k}": article[k] for k in (
        "p100_tflops", "b200_tflops", "pcie3_x16_gb_per_s", "pcie5_x16_gb_per_s", "claimed_compute_growth",
        "claimed_pcie_growth", "nvlink5_per_gpu_gb_per_s")}
    out.update(article_ratio_compute=ratios["compute"], article_ratio_pcie=ratios["pcie"],
               article_ratio_nv_pcie=ratios["nvlink5_over_pcie5"], article_gap=ratios["compute"] / ratios["pcie"])
    claims.require(abs(ratios["compute"] / article["claimed_compute_growth"] - 1) < 0.05
                   and abs(ratios["pcie"] / article["claimed_pcie_growth"] - 1) < 0.05,
                   "the article's own figures give its ratios")
    return out


def _growth() -> dict[str, object]:
    b200 = get_gpu("b200_hgx")
    out: dict[str, object] = {
        "p100_tflops": P100_SXM2_FP16_FLOPS_PER_S.value / 1e12,
        "b200_bf16_tflops": b200.dense_bf16_flops_per_s / 1e12, "b200_fp8_tflops": b200.dense_fp8_flops_per_s / 1e12,
        "b200_hbm_tb": b200.mem_bw_bytes_per_s / 1e12, "b200_hbm_over_nv": hbm_over_nvlink("b200_hgx"),
        "nv1_dir": get_link("nvlink1").bw_bytes_per_s / 1e9, "nv5_dir": get_link("nvlink5").bw_bytes_per_s / 1e9,
        "nv5_over_pcie5_dir": link_ratio("nvlink5", "pcie5"),
        "eff_nv4": 100 * cal.RING_EFFICIENCY["nvlink4"].value,
        "pcie_p2p_eff": 100 * cal.PCIE_P2P_EFFICIENCY.value,
        "bf_2": busbw_factor("all_reduce", 2), "bf_8": busbw_factor("all_reduce", 8),
    }
    for gen in (3, 4, 5, 6):
        g = get_pcie_gen(gen)
        out[f"pcie{gen}_dir"] = g.x16_bytes_per_s / 1e9
        out[f"pcie{gen}_bidir_after"] = 2 * g.x16_bytes_per_s / 1e9  # both directions, after the line code
    g5 = generation_growth("p100_sxm2", "b200_hgx", last_pcie_gen=5)
    g6 = generation_growth("p100_sxm2", "b200_hgx")
    out.update(grow_compute=g5["compute"], grow_pcie5=g5["pcie"], grow_pcie6=g6["pcie"], grow_nvlink=g5["nvlink"],
               gap_pcie5=g5["compute_over_pcie"], gap_nvlink=g5["compute_over_nvlink"])
    claims.require(g5["compute_over_pcie"] > 1 and g5["compute_over_nvlink"] > 1,
                   "compute outgrew PCIe, and even outgrew NVLink")
    g4 = get_pcie_gen(4)
    claims.require(g4.x16_bidir_marketing_bytes_per_s / (g4.x16_bytes_per_s * cal.PCIE_P2P_EFFICIENCY.value) > 2.5,
                   "quiz 1: a ring all_reduce over PCIe 4.0 x16 takes well over twice what '64 GB/s' predicts")
    claims.require(hbm_over_nvlink("b200_hgx") > 2, "HBM is several times faster than NVLink 5.0 per direction")
    return out


def _balance() -> dict[str, object]:
    gens = {key.split("_")[0]: get_generation(key) for key in GENERATION_KEYS}
    out: dict[str, object] = {}
    busy_nv, busy_pcie = [], []
    for name, g in gens.items():
        out[f"bal_nv_{name}"] = g.flops_per_nvlink_byte
        out[f"bal_pcie_{name}"] = g.flops_per_pcie_byte
        busy_nv.append(link_busy_fraction(MODEL, tp_size=TP, flops_per_s=g.compute_flops_per_s,
                                          bw_bytes_per_s=g.nvlink_bw_bytes_per_s))
        busy_pcie.append(link_busy_fraction(MODEL, tp_size=TP, flops_per_s=g.compute_flops_per_s,
                                            bw_bytes_per_s=g.pcie_bw_bytes_per_s))
        out[f"busy_nv_{name}"], out[f"busy_pcie_{name}"] = busy_nv[-1], busy_pcie[-1]
    out.update(int_tp8=tp_flops_per_wire_byte(MODEL, tp_size=8), int_tp2=tp_flops_per_wire_byte(MODEL, tp_size=2),
               h100_tflops=gens["h100"].compute_flops_per_s / 1e12, v100_tflops=gens["v100"].compute_flops_per_s / 1e12,
               h100_nv_dir=gens["h100"].nvlink_bw_bytes_per_s / 1e9)
    balance = [g.flops_per_nvlink_byte for g in gens.values()]
    claims.require(out["int_tp8"] < out["int_tp2"],
                   "the more GPUs share a layer, the less work each does per byte it sends")
    claims.require(all(a < b for a, b in zip(balance, balance[1:])), "each byte a job sends must carry more and more work")
    claims.require(all(a < b < 1 for a, b in zip(busy_nv, busy_nv[1:])),
                   "over NVLink the belt still keeps up, with less and less slack")
    claims.require(busy_pcie[0] < 1 < min(busy_pcie[1:]),
                   "over PCIe the belt stopped keeping up with the V100, and an H100 would wait")
    return out


def _tp_speedups() -> dict[str, object]:
    fabrics = {"nv": make_fabric("nvlink4", gpu=GPU), "pcie": make_fabric("pcie5", gpu=GPU),
               "nop2p": make_fabric("pcie5", p2p=False, gpu=GPU)}  # NVLink 4.0; PCIe 5.0 with and without P2P
    sp = {(phase, name): tp_speedup(MODEL, fabric=f, tp_size=TP, **kw)
          for phase, kw in (("pre", PREFILL), ("dec", DECODE)) for name, f in fabrics.items()}
    s_pre_nv = tp_step(MODEL, fabric=fabrics["nv"], tp_size=TP, **PREFILL)
    s_pre_pc = tp_step(MODEL, fabric=fabrics["nop2p"], tp_size=TP, **PREFILL)
    s_dec_nv = tp_step(MODEL, fabric=fabrics["nv"], tp_size=TP, **DECODE)
    s_dec_pc = tp_step(MODEL, fabric=fabrics["nop2p"], tp_size=TP, **DECODE)
    claims.require(sp["pre", "nv"] > sp["pre", "pcie"] > 1,
                   "prefill at TP=8 runs faster than one GPU over NVLink and PCIe P2P")
    claims.require(abs(sp["dec", "nv"] / sp["dec", "nop2p"] - 1) < abs(sp["pre", "nv"] / sp["pre", "nop2p"] - 1),
                   "decode with batch 1 cares much less about the link than prefill")
    claims.require(sp["pre", "nop2p"] < 1, "quiz 4: with P2P disabled, TP=8 prefill is slower than one GPU in the model")
    claims.require(abs(s_dec_pc.all_reduce.time_s / s_dec_nv.all_reduce.time_s - 1) < 0.25,
                   "the decode all_reduce costs about the same over NVLink and over PCIe without P2P in the model "
                   "(latency-bound)")
    return {
        "tp": TP,
        "sp_pre_nv": sp["pre", "nv"], "sp_pre_pcie": sp["pre", "pcie"], "sp_pre_nop2p": sp["pre", "nop2p"],
        "sp_dec_nv": sp["dec", "nv"], "sp_dec_nop2p": sp["dec", "nop2p"],
        "sp_pre_nop2p_word": claims.compare_word(sp["pre", "nop2p"], 1.0, higher="still faster than one GPU",
                                                 lower="slower than one GPU", same="as fast as one GPU", rel_tol=0.005),
        "sp_dec_link_word": claims.compare_word(sp["dec", "nop2p"], sp["dec", "nv"], higher="slightly faster",
                                                lower="slightly slower", same="about the same", rel_tol=0.05),
        "share_pre_nv": 100 * s_pre_nv.comm_share, "share_pre_nop2p": 100 * s_pre_pc.comm_share,
        "share_dec_nv": 100 * s_dec_nv.comm_share,
        "tp1_mem_gb": tp_step(MODEL, fabric=fabrics["nv"], tp_size=1, **PREFILL).mem_bytes_per_gpu / 1e9,
        "h100_mem_gb": get_gpu(GPU).mem_bytes / 1e9,
        "dec_msg_kib": s_dec_nv.msg_bytes / 2**10,
        "dec_ar_nv_us": s_dec_nv.all_reduce.time_s * 1e6, "dec_ar_nop2p_us": s_dec_pc.all_reduce.time_s * 1e6,
    }


def numbers() -> dict[str, object]:
    """Every number ``book/why_communication.md`` glues, by glue key.

    Returns
    -------
    dict of str to object
        The article: ``article_*`` (its figures: TFLOPS, GB/s, growth factors) and ``article_ratio_*``,
        ``article_gap`` (what its figures give). Growth: ``p100_tflops``, ``b200_bf16_tflops``, ``b200_fp8_tflops``
        (TFLOP/s, dense), ``pcie{3..6}_dir`` and ``pcie{3..6}_bidir_after`` (x16, GB/s), ``nv1_dir``, ``nv5_dir``
        (GB/s per direction), ``grow_*`` and ``gap_*`` (factors), ``nv5_over_pcie5_dir``, ``b200_hbm_tb`` (TB/s),
        ``b200_hbm_over_nv``, ``eff_nv4``, ``pcie_p2p_eff`` (fitted ring efficiencies, %), ``bf_2``/``bf_8`` (all_reduce
        busbw factors). Balance: ``bal_nv_*``,
        ``bal_pcie_*`` (FLOPs per byte of link), ``busy_nv_*``, ``busy_pcie_*`` (link time over compute time),
        ``int_tp2``/``int_tp8`` (FLOPs per byte sent), ``h100_tflops``, ``v100_tflops``, ``h100_nv_dir``. Amdahl:
        ``amdahl_p`` (%), ``amdahl_8``, ``amdahl_lim``. TP model: ``tp``, ``sp_*`` (speed-ups over one GPU),
        ``sp_pre_nop2p_word``, ``sp_dec_link_word`` (words), ``share_*`` (all_reduce share of the pass, %),
        ``tp1_mem_gb``, ``h100_mem_gb`` (GB), ``dec_msg_kib`` (KiB), ``dec_ar_nv_us``, ``dec_ar_nop2p_us`` (us),
        ``checked_nvlink``, ``checked_pcie`` (sentences).

    Raises
    ------
    ClaimError
        If the numbers contradict a sentence of the page (each :func:`gpucomm.model.claims.require` names it).

    Notes
    -----
    Sources: the GPU, link and PCIe catalog (:mod:`gpucomm.model.hardware`), the article's figures and the generation
    table of :mod:`gpucomm.model.scaling`, the TP model of :mod:`gpucomm.model.tp`, the fitted parameters of
    :mod:`gpucomm.model.hardware.calibration`, and :func:`gpucomm.model.validation.validate`.
    """
    out = {**_article(), **_growth(), **_balance(), **_tp_speedups()}
    out.update(amdahl_p=round(100 * AMDAHL_PARALLEL_SHARE), amdahl_8=amdahl_speedup(AMDAHL_PARALLEL_SHARE, 8),
               amdahl_lim=amdahl_limit(AMDAHL_PARALLEL_SHARE))
    results = validate()
    for transport in ("nvlink", "pcie"):
        out[f"checked_{transport}"] = checked_on(results, (*SWEEPS, *CASES), transport=transport).sentence
    return out
