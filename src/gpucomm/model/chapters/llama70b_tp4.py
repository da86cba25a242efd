"""The numbers of ``book/llama70b_tp4.md`` (worked example: Llama-3-70B with TP=4, NVLink vs PCIe).

Sections: the message sizes; the model's all_reduce time term by term on NVLink 3.0 and on PCIe 4.0 staged through host
memory, against the article's nccl-tests measurements and the A100 sweeps of the validation; NCCL's inputs (channels,
bandwidth it plans with, latency); the vLLM prefill gap; the article's "bandwidth summed over GPUs"; the self-check
answers. The figure is drawn by :mod:`gpucomm.viz` and stays in the page.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.collectives import busbw_bytes_per_s, busbw_factor
from gpucomm.model.cost import collective_cost, effective_bw_bytes_per_s
from gpucomm.model.course import band_error
from gpucomm.model.fabric import Fabric, make_fabric
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.hardware import get_link, get_network
from gpucomm.model.measurements import llama70b_tp4_4xa100
from gpucomm.model.nccl_fabric import comm_and_table
from gpucomm.model.tp import ALL_REDUCES_PER_LAYER_FORWARD, get_model, tp_all_reduce_bytes, tp_forward_comm
from gpucomm.model.units import MiB
from gpucomm.model.validation import SWEEPS, validate

__all__ = ["TOKENS", "TP", "numbers", "staged_fabric"]

MODEL = "llama-3-70b"
TP = 4
"""The article's tensor-parallel degree (4x A100)."""
TOKENS = 4096
"""The prompt length of the article's nccl-tests message (64 MiB per all_reduce)."""


def staged_fabric() -> Fabric:
    """PCIe 4.0 without P2P: NCCL stages through host memory (the article's ``NCCL_P2P_DISABLE=1`` runs).

    Returns
    -------
    Fabric
        :func:`gpucomm.model.fabric.make_fabric` ``("pcie4", p2p=False)``.
    """
    return make_fabric("pcie4", p2p=False)


def _messages_and_times(article: dict) -> dict[str, object]:
    model = get_model(MODEL)
    nv = tp_forward_comm(model, tp_size=TP, num_tokens=TOKENS, fabric="nvlink3")
    pc = tp_forward_comm(model, tp_size=TP, num_tokens=TOKENS, fabric=staged_fabric())
    meas_nv_s, meas_pc_s = article["all_reduce_nvlink3_s"].value, article["all_reduce_pcie4_no_p2p_s"].value
    ar_nv, n_ar = nv.per_all_reduce, nv.all_reduces_per_pass
    out: dict[str, object] = {
        "layers": model.num_layers, "hidden": model.hidden_size, "tokens": TOKENS, "tp": TP,
        "per_layer": ALL_REDUCES_PER_LAYER_FORWARD,
        "bytes_per_token": tp_all_reduce_bytes(1, model.hidden_size, dtype="fp16"),
        "msg_mib": nv.msg_bytes / MiB, "n_allreduce": n_ar, "bus_mib": ar_nv.bus_bytes / MiB,
        "nv_us": ar_nv.time_s * 1e6, "nv_alpha_us": ar_nv.latency_s * 1e6, "nv_transfer_us": ar_nv.transfer_s * 1e6,
        "pc_ms": pc.per_all_reduce.time_s * 1e3, "nv_total_ms": nv.comm_per_pass_s * 1e3,
        "pc_total_ms": pc.comm_per_pass_s * 1e3, "meas_nv_us": meas_nv_s * 1e6, "meas_pc_us": meas_pc_s * 1e6,
        "meas_nv_total_ms": meas_nv_s * n_ar * 1e3, "meas_pc_total_ms": meas_pc_s * n_ar * 1e3,
        "err_nv_pct": 100 * (ar_nv.time_s / meas_nv_s - 1), "err_pc_pct": 100 * (pc.per_all_reduce.time_s / meas_pc_s - 1),
        "nv_nccl_err_pct": 100 * (1 - ar_nv.nccl_time_s / meas_nv_s),
        "ratio_model": pc.per_all_reduce.time_s / ar_nv.time_s, "ratio_meas": meas_pc_s / meas_nv_s,
        "nv_launch_us": ar_nv.launch_s * 1e6, "nv_nccl_us": ar_nv.nccl_time_s * 1e6,
        # the NVLink all_reduce term by term (gpucomm.model.cost_terms), and how far it lands from the article's time
        **{f"nv_term_{name}_us": s * 1e6 for name, s in ar_nv.terms},
        "nv_fast_or_slow": claims.compare_word(ar_nv.time_s, meas_nv_s, higher="long", lower="short"),
        "err_nv_abs_pct": abs(100 * (ar_nv.time_s / meas_nv_s - 1)),
        "meas_nv_busbw_at_64": busbw_bytes_per_s("all_reduce", nv.msg_bytes, meas_nv_s, TP) / 1e9,
        "model_nv_busbw_at_64": ar_nv.busbw_bytes_per_s / 1e9,
        "model_nv_busbw_8g": collective_cost("all_reduce", 8 * 2**30, num_ranks=TP,
                                             fabric="nvlink3").busbw_bytes_per_s / 1e9,
    }
    # the A100 sweeps' mid-size band: does the model err the same way there?
    band = band_error(validate(), SWEEPS, link="nvlink3", low_bytes=2**20, high_bytes=nv.msg_bytes)
    out.update({
        "a100_band_pct": abs(100 * band.median_error), "a100_band_points": band.count, "a100_band_sweeps": len(band.sweeps),
        "a100_band_word": claims.compare_word(band.median_error, 0.0, higher="long", lower="short"),
        "a100_bound": claims.compare_word(band.median_error, 0.0, higher="an upper", lower="a lower"),
    })
    claims.require((band.median_error < 0) == (ar_nv.time_s < meas_nv_s),
                   "the model errs here the way it errs across the A100 sweeps in the 1-64 MiB band")
    claims.require(ar_nv.nccl_time_s < meas_nv_s, "NCCL's own estimate alone would be short of the measurement")
    return out


def _inputs() -> dict[str, object]:
    """The table of the model's inputs: links, NCCL's channels and latency, the efficiencies."""
    nvlink3, pcie4 = get_link("nvlink3"), get_link("pcie4")
    out: dict[str, object] = {
        "nvlink3_gbps": nvlink3.bw_bytes_per_s / 1e9, "nvlink3_bidir_gbps": nvlink3.bidir_marketing_bytes_per_s / 1e9,
        "pcie4_gbps": pcie4.bw_bytes_per_s / 1e9, "eff_nv": cal.RING_EFFICIENCY["nvlink3"].value,
        "eff_staged": cal.HOST_STAGED_EFFICIENCY.value, "launch_us": cal.LAUNCH_S["eager"].value * 1e6,
        "deliv_nv": effective_bw_bytes_per_s("nvlink3") / 1e9,
        "deliv_pc": effective_bw_bytes_per_s("pcie4", p2p=False) / 1e9,
    }
    for key, fabric in (("nv", make_fabric("nvlink3")), ("pc", staged_fabric())):
        comm, table = comm_and_table(fabric, TP)
        ring = comm.graphs["ring"]
        out[f"ch_{key}"] = ring.num_channels
        out[f"chbw_{key}"] = ring.bw_intra_bytes_per_s / 1e9
        out[f"beff_{key}"] = ring.num_channels * ring.bw_intra_bytes_per_s / 1e9
        out[f"nccl_lat_{key}"] = table.latency_s[("all_reduce", "ring", "Simple")] * 1e6
    return out


def _summed_bandwidth(article: dict) -> dict[str, object]:
    """The article's "bandwidth": traffic summed over the 4 GPUs (N x 2(D - D/N)) over the time, against busbw."""
    model = get_model(MODEL)
    msg_bytes = tp_all_reduce_bytes(TOKENS, model.hidden_size, dtype="fp16")
    bus_bytes = busbw_factor("all_reduce", TP) * msg_bytes
    meas_nv_s, meas_pc_s = article["all_reduce_nvlink3_s"].value, article["all_reduce_pcie4_no_p2p_s"].value
    busbw_nv = busbw_bytes_per_s("all_reduce", msg_bytes, meas_nv_s, TP)
    busbw_pc = busbw_bytes_per_s("all_reduce", msg_bytes, meas_pc_s, TP)
    claims.require(busbw_nv < get_link("nvlink3").bw_bytes_per_s and busbw_pc < get_link("pcie4").bw_bytes_per_s / 3,
                   "measured busbw: below NVLink 3.0's rate, less than a third of PCIe 4.0's without P2P")
    # the article writes "384 MB in 603 us = 631.58 GB/s": 384 decimal MB over 603 us, and the time 631.58 GB/s implies
    summed_mb = TP * bus_bytes / MiB * 1e6  # "384 MB" read as decimal megabytes
    claimed = article["article_claimed_nvlink_bw_bytes_per_s"].value
    claims.require(abs(summed_mb / meas_nv_s / claimed - 1) > 0.005,
                   "the article's 631.58 GB/s is not what its own 384 MB over 603 us gives")
    return {
        "summed_mib": TP * bus_bytes / MiB, "summed_bw_gbps": TP * bus_bytes / 1e9 / meas_nv_s,
        "summed_bw_dec_gbps": summed_mb / meas_nv_s / 1e9, "article_implied_us": summed_mb / claimed * 1e6,
        "summed_bw_pcie_dec_gbps": summed_mb / meas_pc_s / 1e9, "meas_algbw_pcie_gbps": msg_bytes / meas_pc_s / 1e9,
        "article_claim_gbps": article["article_claimed_nvlink_bw_bytes_per_s"].value / 1e9,
        "article_claim_pcie_gbps": article["article_claimed_pcie_bw_bytes_per_s"].value / 1e9,
        "meas_busbw_gbps": busbw_nv / 1e9, "meas_busbw_pcie_gbps": busbw_pc / 1e9,
    }


def _vllm_prefill(article: dict) -> dict[str, object]:
    """vLLM prefill of the article's prompt: the measured gap with P2P off vs the model's extra communication."""
    model = get_model(MODEL)
    tokens = int(article["vllm_prompt_tokens"].value)
    nv = tp_forward_comm(model, tp_size=TP, num_tokens=tokens, fabric="nvlink3")
    pc = tp_forward_comm(model, tp_size=TP, num_tokens=tokens, fabric=staged_fabric())
    nv_s, pc_s = article["vllm_prefill_nvlink_s"].value, article["vllm_prefill_no_p2p_s"].value
    gap_s = pc_s - nv_s
    claims.require(0.5 < (pc.comm_per_pass_s - nv.comm_per_pass_s) / gap_s < 1.1,
                   "the model's extra all_reduce time over PCIe without P2P is most of the slowdown vLLM measures")
    return {
        "vllm_tokens": tokens, "vllm_nv_ms": nv_s * 1e3, "vllm_pc_ms": pc_s * 1e3, "vllm_gap_ms": gap_s * 1e3,
        "model_gap_ms": (pc.comm_per_pass_s - nv.comm_per_pass_s) * 1e3,
        "model_gap_pct": 100 * (pc.comm_per_pass_s - nv.comm_per_pass_s) / gap_s,
        "vllm_nv_comm_ms": nv.comm_per_pass_s * 1e3, "vllm_nv_comm_pct": 100 * nv.comm_per_pass_s / nv_s,
    }


def _quiz() -> dict[str, object]:
    """The self-check: a prompt's message, TP=4 -> TP=8 and leaving the NVLink domain, a batch-8 decode all_reduce."""
    model = get_model(MODEL)
    bf4, bf8 = busbw_factor("all_reduce", 4), busbw_factor("all_reduce", 8)
    nvlink4, ndr = get_link("nvlink4"), get_network("ib_ndr")
    # NCCL's own per-step latencies (tuning.cc hwLat, ring row): LL against LL, Simple against Simple, network vs NVLink
    net_row, nvl_row = nt.HW_LATENCY_US["net"]["ring"], nt.HW_LATENCY_US["nvlink"]["ring"]
    claims.require(net_row[0] > nvl_row[0] and net_row[2] > nvl_row[2],
                   "quiz 2: NCCL's tuner charges a network ring step more than an NVLink step, for LL and for Simple")
    q3 = collective_cost("all_reduce", tp_all_reduce_bytes(8, model.hidden_size, dtype="bf16"), num_ranks=TP,
                         fabric="nvlink3")
    claims.require(q3.latency_s + q3.launch_s > 3 * q3.transfer_s,
                   "a 128 KiB all_reduce on 4x A100 is mostly latency and launch, not transfer")
    return {
        "quiz_prompt_ar_bytes": tp_all_reduce_bytes(1000, model.hidden_size, dtype="bf16"),
        "bf_4": bf4, "bf_8": bf8, "bf_8_vs_4_pct": 100 * (bf8 / bf4 - 1),
        "nvlink4_gbps": nvlink4.bw_bytes_per_s / 1e9, "ndr_gbps": ndr.bw_bytes_per_s / 1e9,
        "nvlink4_over_ndr": nvlink4.bw_bytes_per_s / ndr.bw_bytes_per_s,
        "net_step_ll_us": net_row[0], "nvl_step_ll_us": nvl_row[0],
        "net_step_simple_us": net_row[2], "nvl_step_simple_us": nvl_row[2],
        "q3_us": q3.time_s * 1e6, "q3_fixed_us": (q3.latency_s + q3.launch_s) * 1e6, "q3_xfer_us": q3.transfer_s * 1e6,
        "q3_pick": f"{q3.nccl_algorithm}/{q3.nccl_protocol}",
        "q3_fixed_ms_per_token": (q3.latency_s + q3.launch_s) * ALL_REDUCES_PER_LAYER_FORWARD * model.num_layers * 1e3,
    }


def numbers() -> dict[str, object]:
    """Every number ``book/llama70b_tp4.md`` glues, by glue key.

    Returns
    -------
    dict of str to object
        Setup: ``layers``, ``hidden``, ``tokens``, ``tp``, ``per_layer``, ``bytes_per_token`` (bytes), ``msg_mib``,
        ``bus_mib`` (MiB), ``n_allreduce``. Times: ``nv_us``, ``nv_alpha_us``, ``nv_transfer_us``, ``nv_nccl_us``,
        ``nv_launch_us``, ``nv_term_<term>_us`` (one per term of :mod:`gpucomm.model.cost_terms`), ``meas_nv_us``,
        ``meas_pc_us`` (us), ``pc_ms``, ``*_total_ms`` (ms per forward pass), ``err_*_pct``, ``nv_nccl_err_pct``
        (%), ``ratio_model``, ``ratio_meas``, ``nv_fast_or_slow``, ``a100_band_word``, ``a100_bound`` (words),
        ``a100_band_pct`` (%), ``a100_band_points``, ``a100_band_sweeps``, ``*_busbw_*`` (GB/s). Inputs:
        ``nvlink3_gbps``, ``nvlink3_bidir_gbps``, ``pcie4_gbps``, ``deliv_*``, ``chbw_*``, ``beff_*`` (GB/s), ``ch_*``
        (channels), ``eff_nv``, ``eff_staged`` (fractions), ``launch_us``, ``nccl_lat_*`` (us). Summed bandwidth:
        ``summed_mib``, ``summed_bw_gbps`` (MiB over the time), ``summed_bw_dec_gbps`` and
        ``summed_bw_pcie_dec_gbps`` (decimal MB over the time), ``article_implied_us`` (the time the article's figure
        implies), ``article_claim_*gbps``, ``meas_busbw_*gbps``, ``meas_algbw_pcie_gbps``. vLLM: ``vllm_*``,
        ``model_gap_ms``, ``model_gap_pct``. Self-check: ``quiz_prompt_ar_bytes`` (bytes), ``bf_4``, ``bf_8``,
        ``bf_8_vs_4_pct`` (%), ``nvlink4_gbps``, ``ndr_gbps`` (GB/s), ``nvlink4_over_ndr``, ``net_step_*_us``,
        ``nvl_step_*_us`` (NCCL's ring step latencies, us), ``q3_*`` (us, ms, NCCL's pick).

    Raises
    ------
    ClaimError
        If the numbers contradict a sentence of the page (each :func:`gpucomm.model.claims.require` names it).

    Notes
    -----
    Sources: the article's measurements (:func:`gpucomm.model.measurements.llama70b_tp4_4xa100`: Baobao Algorithm
    Notes, nccl-tests and vLLM v0.6.6 on 4x A100), NCCL's tuner (``src/graph/tuning.cc`` at v2.30.7-1,
    :mod:`gpucomm.model.nccl_tuner`), :func:`gpucomm.model.cost.collective_cost`, the fitted efficiencies of
    :mod:`gpucomm.model.hardware.calibration`, and the A100 sweeps of :func:`gpucomm.model.validation.validate`.
    """
    article = llama70b_tp4_4xa100()
    return {**_messages_and_times(article), **_inputs(), **_summed_bandwidth(article), **_vllm_prefill(article),
            **_quiz()}
