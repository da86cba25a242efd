"""The numbers of ``book/tp_inference.md`` (tensor parallelism in inference).

Sections: where the two all_reduces per layer come from and how big they are; one all_reduce on 8x H100 in prefill and
in decode (NCCL's pick, its latency terms); tokens/s per user and per GPU (the roofline table); NVIDIA's blog on NVLink
and NVSwitch (the "20 GB per query", the latency budgets); when TP hurts (the latency ceiling, Llama-3-8B at TP=4 and 8,
prefill over PCIe); custom one-shot and two-shot all_reduce kernels; sequence parallelism; the self-check's answer. The
decode-scaling figure is drawn by :mod:`gpucomm.viz` and stays in the page.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.cost import collective_cost, pair_bw_bytes_per_s, steps_and_wire_bytes, wire_bytes_per_link
from gpucomm.model.fabric import Fabric, make_fabric
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.hardware import get_gpu, get_link
from gpucomm.model.measurements import case
from gpucomm.model.planning import max_batch_within_budget
from gpucomm.model.tp import (
    ALL_REDUCES_PER_LAYER_FORWARD,
    get_model,
    head_params,
    layer_params,
    sp_layer_comm,
    tp_all_reduce_bytes,
    tp_forward_comm,
    tp_speedup,
    tp_step,
)
from gpucomm.model.units import GiB, KiB, MiB, format_size

__all__ = ["PREFILL_TOKENS", "decode_fabrics", "numbers"]

MODEL = "llama-3-70b"
SMALL_MODEL = "llama-3-8b"
PREFILL_TOKENS = 4096
"""Tokens of the prefill the page prices (one 4096-token prompt)."""
BUDGETS = (30, 40, 50)
"""The per-user speeds (tokens/s) of NVIDIA's blog, Table 2."""
BLOG_PROMPT_TOKENS = 8192
"""The blog's input length (ISL 8K) for the 20 GB per query and the latency budgets."""


def decode_fabrics() -> dict[str, Fabric]:
    """The systems the page compares, by short name.

    Returns
    -------
    dict of str to Fabric
        ``h100`` (8x H100 SXM, NVLink 4 + NVSwitch), ``h100_pcie`` (H100 PCIe, PCIe 5.0 with P2P), ``rtx4090``
        (RTX 4090, PCIe 4.0 staged through host memory: GeForce cards have no P2P), ``h200`` and ``h200_mesh``
        (H200 with NVSwitch, and point-to-point: each pair 1/7 of a GPU's NVLink). From
        :func:`gpucomm.model.fabric.make_fabric` and the catalog.
    """
    return {
        "h100": make_fabric("nvlink4", gpu="h100_sxm5", name="H100 SXM, NVLink 4 + NVSwitch"),
        "h100_pcie": make_fabric("pcie5", gpu="h100_pcie", name="H100 PCIe, PCIe 5.0 with P2P"),
        "rtx4090": make_fabric("pcie4", p2p=False, gpu="rtx_4090", name="RTX 4090, PCIe 4.0 via host (no P2P)"),
        "h200": make_fabric("nvlink4", gpu="h200_sxm", name="H200, NVSwitch"),
        "h200_mesh": make_fabric("nvlink4", gpu="h200_sxm", topology="mesh", mesh_size=8, name="H200, point-to-point"),
    }


def _architecture() -> dict[str, object]:
    m70, m8 = get_model(MODEL), get_model(SMALL_MODEL)
    return {
        "layers": m70.num_layers, "hidden": m70.hidden_size, "heads": m70.num_attention_heads,
        "kv_heads": m70.num_key_value_heads,
        # the output head's share of the weights a decode step reads (Llama 3 does not tie it to the input embedding)
        "head_share_8b_pct": 100 * head_params(m8) / (m8.num_layers * layer_params(m8) + head_params(m8)),
        "per_layer": ALL_REDUCES_PER_LAYER_FORWARD, "n_ar": ALL_REDUCES_PER_LAYER_FORWARD * m70.num_layers,
        "msg_prefill": format_size(tp_all_reduce_bytes(PREFILL_TOKENS, m70.hidden_size)),
        "msg_decode1": format_size(tp_all_reduce_bytes(1, m70.hidden_size)),
        "msg_decode64": format_size(tp_all_reduce_bytes(64, m70.hidden_size)),
    }


def _one_all_reduce() -> dict[str, object]:
    """One all_reduce on 8x H100 (NVLink 4 + NVSwitch): the decode message and the prefill message."""
    hidden = get_model(MODEL).hidden_size
    ar_dec = collective_cost("all_reduce", tp_all_reduce_bytes(1, hidden), num_ranks=8, fabric="nvlink4")
    ar_pre = collective_cost("all_reduce", tp_all_reduce_bytes(PREFILL_TOKENS, hidden), num_ranks=8, fabric="nvlink4")
    terms = dict(ar_dec.terms)
    # the bytes' own time on the channels NCCL runs at 16 KiB, before LL overlaps it with the steps' latency
    xfer_s = sum(terms[k] for k in ("nccl_bandwidth", "delivered_bandwidth", "channel_ramp", "pipeline_fill"))
    ring_steps = steps_and_wire_bytes("all_reduce", 1, num_ranks=8, algorithm="ring")[0]
    ll_step_us, ll_base_us = nt.HW_LATENCY_US["nvlink"]["ring"][0], nt.BASE_LATENCY_US["ring"][0]
    claims.require((ar_dec.algorithm, ar_dec.protocol) == (ar_dec.nccl_algorithm, ar_dec.nccl_protocol) == ("ring", "LL"),
                   "NCCL's tuner runs the 16 KiB decode all_reduce as ring/LL on 8x H100, and the model prices that pair")
    claims.require(abs(terms["nccl_latency"] * 1e6 - (ll_base_us + ring_steps * ll_step_us)) < 1e-6,
                   "NCCL's ring/LL latency is its base plus one NVLink step latency per ring step")
    claims.require(ar_dec.transfer_s < 0.01 * ar_dec.time_s < xfer_s,
                   "with LL the 16 KiB move while the steps' latency elapses: the model adds no transfer on top")
    claims.require(ar_pre.transfer_s > ar_pre.latency_s + ar_pre.launch_s, "prefill's all_reduce is bandwidth-bound")
    claims.require(ar_pre.algorithm == ar_pre.nccl_algorithm == "nvls",
                   "for the 64 MiB prefill message the model's fastest algorithm and NCCL's pick are both NVLS")
    return {
        "ar_dec_us": ar_dec.time_s * 1e6, "ar_dec_nccl_lat_us": terms["nccl_latency"] * 1e6,
        "ar_dec_fit_lat_us": terms["transport_latency"] * 1e6,  # what measured small all_reduces add
        "ar_dec_launch_us": terms["launch"] * 1e6,
        "ar_dec_alpha_pct": 100 * (ar_dec.latency_s + ar_dec.launch_s) / ar_dec.time_s,
        "ar_dec_xfer_us": xfer_s * 1e6, "ar_dec_channels": ar_dec.num_channels,
        "ar_dec_channels_word": "channel" if ar_dec.num_channels == 1 else "channels",
        "ar_dec_steps": ring_steps, "nccl_ll_nvlink_step_us": ll_step_us, "nccl_ll_base_us": ll_base_us,
        "nccl_ll_ring_steps_us": ring_steps * ll_step_us,
        "ar_dec_nccl": f"{ar_dec.nccl_algorithm}/{ar_dec.nccl_protocol}",
        "ar_pre_us": ar_pre.time_s * 1e6,
        "ar_pre_alpha_pct": 100 * (ar_pre.latency_s + ar_pre.launch_s) / ar_pre.time_s,
        "ar_pre_nccl": f"{ar_pre.nccl_algorithm}/{ar_pre.nccl_protocol}",
        "_ar_pre": ar_pre,
    }


def _decode_table(f: dict[str, Fabric]) -> dict[str, object]:
    d1 = tp_step(MODEL, fabric=f["h100"], tp_size=8, phase="decode", batch=1)
    d64 = tp_step(MODEL, fabric=f["h100"], tp_size=8, phase="decode", batch=64)
    d64_tp4 = tp_step(MODEL, fabric=f["h100"], tp_size=4, phase="decode", batch=64)
    tp1 = tp_step(MODEL, fabric=f["h100"], tp_size=1)
    claims.require(d64.tokens_per_s_per_user > 0.8 * d1.tokens_per_s_per_user,
                   "batching is nearly free for the user in decode")
    claims.require(d64.tokens_per_s_per_user > d64_tp4.tokens_per_s_per_user > 0
                   and d64.tokens_per_s_per_gpu < d64_tp4.tokens_per_s_per_gpu,
                   "more GPUs per model raise per-user speed and lower per-GPU throughput")
    return {
        "h100_tp8_b1_user": d1.tokens_per_s_per_user, "h100_tp8_b1_gpu": d1.tokens_per_s_per_gpu,
        "h100_tp8_b1_comm_pct": 100 * d1.comm_share,
        "h100_tp8_b64_user": d64.tokens_per_s_per_user, "h100_tp8_b64_gpu": d64.tokens_per_s_per_gpu,
        "h100_tp4_b64_user": d64_tp4.tokens_per_s_per_user, "h100_tp4_b64_gpu": d64_tp4.tokens_per_s_per_gpu,
        "h100_tp8_floor_ms": d1.comm_per_pass_s * 1e3, "h100_tp8_ceiling": 1 / d1.comm_per_pass_s,
        "h100_tp1_fits": "fits" if tp1.fits_memory else "does not fit", "h100_tp1_mem_gb": tp1.mem_bytes_per_gpu / 1e9,
        "_d1": d1,
    }


def _nvidia_blog(f: dict[str, Fabric]) -> dict[str, object]:
    """NVIDIA's blog (NVLink and NVSwitch supercharge LLM inference, Aug 2024): 20 GB per query, latency budgets."""
    mesh = make_fabric("nvlink4", topology="mesh", mesh_size=8)
    q = tp_forward_comm(MODEL, tp_size=2, num_tokens=BLOG_PROMPT_TOKENS, fabric="nvlink4")
    q_mesh = tp_forward_comm(MODEL, tp_size=2, num_tokens=BLOG_PROMPT_TOKENS, fabric=mesh)
    nvlink4 = get_link("nvlink4")
    out: dict[str, object] = {
        "q_msg_gib": q.msg_bytes * q.all_reduces_per_pass / GiB, "q_switch_ms": q.comm_per_pass_s * 1e3,
        "q_mesh_ms": q_mesh.comm_per_pass_s * 1e3, "q_ratio": q_mesh.comm_per_pass_s / q.comm_per_pass_s,
        "mesh_pair_gbps": pair_bw_bytes_per_s(mesh) / 1e9, "mesh_pair_bidir_gbps": 2 * pair_bw_bytes_per_s(mesh) / 1e9,
        "nvlink4_gbps": nvlink4.bw_bytes_per_s / 1e9, "nvlink4_bidir_gbps": nvlink4.bidir_marketing_bytes_per_s / 1e9,
    }
    plans = {}
    for budget in BUDGETS:
        for name, fabric, tp in (("tp1", f["h200"], 1), ("mesh", f["h200_mesh"], 2), ("nvs", f["h200"], 2)):
            p = plans[budget, name] = max_batch_within_budget(MODEL, fabric, tp_size=tp, min_tokens_per_s_per_user=budget,
                                                              prompt_len=BLOG_PROMPT_TOKENS)
            out[f"b{budget}_{name}"] = "does not meet it" if p is None else f"{p.tokens_per_s_per_gpu:.0f} ({p.batch})"
    claims.require(plans[50, "tp1"] is None and plans[40, "tp1"] is None, "TP=1 misses the faster budgets")
    # why the model's TP=1 misses even 30 tokens/s: 16-bit weights and an 8K cache do not fit one H200
    tp1 = tp_step(MODEL, fabric=f["h200"], tp_size=1, phase="decode", batch=1, prompt_len=BLOG_PROMPT_TOKENS)
    claims.require(plans[30, "tp1"] is None and not tp1.fits_memory,
                   "the model's TP=1 misses every budget: 16-bit weights and the cache of one 8K prompt exceed an H200")
    out.update({"h200_tp1_mem_gb": tp1.mem_bytes_per_gpu / 1e9, "h200_mem_gb": get_gpu("h200_sxm").mem_bytes / 1e9})
    per_gpu = {k: 0.0 if p is None else p.tokens_per_s_per_gpu for k, p in plans.items()}  # 0: the budget is missed
    claims.require(all(per_gpu[b, "nvs"] > per_gpu[b, "mesh"] for b in BUDGETS),
                   "TP=2 with NVSwitch beats point-to-point at every budget")
    kw = dict(tp_size=2, prompt_len=BLOG_PROMPT_TOKENS)
    pre_nvs, pre_mesh = (tp_step(MODEL, fabric=f[k], phase="prefill", **kw) for k in ("h200", "h200_mesh"))
    dec_nvs, dec_mesh = (tp_step(MODEL, fabric=f[k], phase="decode", batch=8, **kw) for k in ("h200", "h200_mesh"))
    claims.require(pre_mesh.comm_share > pre_nvs.comm_share and q_mesh.comm_per_pass_s > q.comm_per_pass_s,
                   "point-to-point hurts the prefill's communication")
    claims.require(dec_mesh.comm_share - dec_nvs.comm_share < (pre_mesh.comm_share - pre_nvs.comm_share) / 4,
                   "in decode (batch 8) point-to-point costs little more communication share than NVSwitch")
    out.update({
        "pre_nvs_comm_pct": 100 * pre_nvs.comm_share, "pre_mesh_comm_pct": 100 * pre_mesh.comm_share,
        "dec_nvs_comm_pct": 100 * dec_nvs.comm_share, "dec_mesh_comm_pct": 100 * dec_mesh.comm_share,
        "pre8k_ms": pre_nvs.time_per_pass_s * 1e3, "pre8k_steps": pre_nvs.time_per_pass_s / dec_nvs.time_per_pass_s,
    })
    return out


def _when_tp_hurts(f: dict[str, Fabric], d1) -> dict[str, object]:
    s8_tp4, s8_tp8 = (tp_speedup(SMALL_MODEL, fabric=f["h100"], tp_size=t, phase="decode", batch=1) for t in (4, 8))
    claims.require(s8_tp8 / 8 < s8_tp4 / 4,
                   "each GPU added from TP=4 to TP=8 buys less speed-up per GPU (Llama-3-8B decode, H100)")
    claims.require(s8_tp8 - s8_tp4 < (s8_tp4 - 1) / 2, "the second four GPUs buy far less speed-up than the first four")
    out: dict[str, object] = {
        "s8_h100_tp4": s8_tp4, "s8_h100_tp8": s8_tp8,
        # the sentence's word comes from the two speed-ups: "faster" or "slower" per user from TP=4 to TP=8
        "s8_tp8_vs_tp4": claims.change_phrase(s8_tp8, s8_tp4, higher="faster", lower="slower"),
        "s8_per_gpu_tp4": s8_tp4 / 4, "s8_per_gpu_tp8": s8_tp8 / 8,
    }
    pre = {k: tp_speedup(SMALL_MODEL, fabric=f[k], tp_size=2, phase="prefill", prompt_len=2048)
           for k in ("h100", "h100_pcie", "rtx4090")}
    out.update({"s8_h100_pre_tp2": pre["h100"], "s8_h100p_pre_tp2": pre["h100_pcie"], "s8_4090_pre_tp2": pre["rtx4090"],
                "pre_word_h100p": claims.compare_word(pre["h100_pcie"], 1.0, higher="faster", lower="slower"),
                "pre_word_r4090": claims.compare_word(pre["rtx4090"], 1.0, higher="faster", lower="slower")})
    # the prose says NVLink gains while both PCIe cases gain less, the H100 cards least
    claims.require(pre["h100"] > max(pre["rtx4090"], pre["h100_pcie"]) and pre["rtx4090"] > pre["h100_pcie"],
                   "a 2048-token prefill gains most from TP=2 over NVLink; the H100 PCIe cards gain less than the RTX 4090s")
    r4090 = tp_step(MODEL, fabric=f["rtx4090"], tp_size=8, phase="decode", batch=1)
    claims.require(0.75 < r4090.comm_per_pass_s / d1.comm_per_pass_s < 1.33,
                   "the 16 KiB all_reduce costs about the same per token on 8x H100 NVLink and 8x RTX 4090 via host memory")
    claims.require(r4090.tokens_per_s_per_user < d1.tokens_per_s_per_user / 2 and r4090.comm_share < d1.comm_share,
                   "the RTX 4090s run far below their ceiling, with a smaller share of the step in communication")
    out.update({"r4090_ar_us": r4090.all_reduce.time_s * 1e6, "r4090_floor_ms": r4090.comm_per_pass_s * 1e3,
                "r4090_ceiling": 1 / r4090.comm_per_pass_s, "r4090_user": r4090.tokens_per_s_per_user,
                "r4090_comm_pct": 100 * r4090.comm_share})
    return out


def _custom_all_reduce(f: dict[str, Fabric], d1) -> dict[str, object]:
    one = tp_step(MODEL, fabric=f["h100"], tp_size=8, phase="decode", batch=1, algorithm="one_shot")
    claims.require(one.all_reduce.time_s < d1.all_reduce.time_s and one.tokens_per_s_per_user > d1.tokens_per_s_per_user,
                   "one-shot lowers the decode all_reduce and raises per-user speed")
    big = tp_all_reduce_bytes(PREFILL_TOKENS, get_model(MODEL).hidden_size)
    one_big, two_big = (collective_cost("all_reduce", big, num_ranks=8, fabric="nvlink4", algorithm=a).time_s
                        for a in ("one_shot", "two_shot"))
    claims.require(two_big < one_big, "two-shot beats one-shot on a 64 MiB prefill message")
    v100 = case("C41")  # the sglang-V100 PR's 4 KiB all_reduce: NCCL inside a CUDA graph vs a one-shot kernel
    return {
        "one_us": one.all_reduce.time_s * 1e6, "one_user": one.tokens_per_s_per_user,
        "one_comm_pct": 100 * one.comm_share,
        "ab_step_us": cal.LL_STEP_LATENCY_S.value * 1e6,  # the alpha-beta algorithms' fitted latency per round
        "one_big_us": one_big * 1e6, "two_big_us": two_big * 1e6,
        "steps_one_shot": steps_and_wire_bytes("all_reduce", 1, num_ranks=8, algorithm="one_shot")[0],
        "steps_two_shot": steps_and_wire_bytes("all_reduce", 1, num_ranks=8, algorithm="two_shot")[0],
        "c41_kib": int(v100["bytes"]) / KiB, "c41_nccl_us": float(v100["time_us"]), "c41_gpus": int(v100["n_gpus"]),
    }


def _sequence_parallel(ar_pre) -> dict[str, object]:
    ag, rs = sp_layer_comm(MODEL, tp_size=8, num_tokens=PREFILL_TOKENS, fabric="nvlink4")
    claims.require(ag.nccl_algorithm == rs.nccl_algorithm == ag.algorithm == rs.algorithm,
                   "NCCL's tuner and the model run both halves with the same algorithm")
    claims.require(ag.time_s + rs.time_s > ar_pre.time_s,
                   "on an NVLS system sequence parallelism pays in communication time")
    ar_ring = collective_cost("all_reduce", ar_pre.msg_bytes, num_ranks=8, fabric="nvlink4", algorithm="ring")
    # bytes per GPU link and direction: the pair (as NCCL runs it) vs the all_reduce as a ring and with NVLink SHARP
    sp_wire = sum(wire_bytes_per_link(c.collective, c.msg_bytes, num_ranks=8, algorithm=c.nccl_algorithm) for c in (ag, rs))
    ar_wire = {a: wire_bytes_per_link("all_reduce", ar_pre.msg_bytes, num_ranks=8, algorithm=a) for a in ("ring", "nvls")}
    claims.require(ag.nccl_algorithm == "ring" and sp_wire == ar_wire["ring"] > ar_wire["nvls"],
                   "the ring pair moves the ring all_reduce's bytes; the NVLS all_reduce moves fewer")
    return {
        "sp_ag_us": ag.time_s * 1e6, "sp_rs_us": rs.time_s * 1e6, "sp_us": (ag.time_s + rs.time_s) * 1e6,
        "sp_algo": ag.nccl_algorithm, "sp_over_ar": (ag.time_s + rs.time_s) / ar_pre.time_s,
        "ar_ring_us": ar_ring.time_s * 1e6, "sp_wire_mib": sp_wire / MiB,
        "ar_wire_ring_mib": ar_wire["ring"] / MiB, "ar_wire_nvls_mib": ar_wire["nvls"] / MiB,
    }


def numbers() -> dict[str, object]:
    """Every number ``book/tp_inference.md`` glues, by glue key.

    Returns
    -------
    dict of str to object
        Architecture: ``layers``, ``hidden``, ``heads``, ``kv_heads`` (Llama-3-70B), ``head_share_8b_pct`` (%),
        ``per_layer``, ``n_ar`` (all_reduces per layer and per forward pass), ``msg_prefill``/``msg_decode1``/
        ``msg_decode64`` (sizes as text). One all_reduce on 8x H100: ``ar_dec_us``, ``ar_dec_nccl_lat_us``,
        ``ar_dec_fit_lat_us``, ``ar_dec_launch_us``, ``ar_dec_xfer_us``, ``nccl_ll_base_us``, ``nccl_ll_nvlink_step_us``,
        ``nccl_ll_ring_steps_us``, ``ar_pre_us`` (us), ``ar_dec_alpha_pct``/``ar_pre_alpha_pct`` (latency and launch,
        % of the time), ``ar_dec_steps``, ``ar_dec_channels``, ``ar_dec_nccl``/``ar_pre_nccl`` (NCCL's
        algorithm/protocol). Decode table: ``h100_tp8_b1_user`` ... (tokens/s per user and per GPU), ``*_comm_pct``
        (%), ``h100_tp8_floor_ms`` (ms), ``h100_tp8_ceiling`` (tokens/s), ``h100_tp1_fits``, ``h100_tp1_mem_gb`` (GB).
        NVIDIA's blog: ``q_msg_gib`` (GiB), ``q_switch_ms``/``q_mesh_ms`` (ms), ``q_ratio``, ``mesh_pair_gbps``,
        ``nvlink4_gbps`` and their ``*_bidir_gbps`` (GB/s), ``b{30,40,50}_{tp1,mesh,nvs}`` (text: tokens/s per GPU and
        batch), ``pre_*_comm_pct``/``dec_*_comm_pct`` (%), ``pre8k_ms``, ``pre8k_steps``,
        ``h200_tp1_mem_gb`` (weights and one 8K cache at TP=1, GB), ``h200_mem_gb`` (GB). When TP hurts:
        ``s8_h100_tp4``, ``s8_h100_tp8``, ``s8_*_pre_tp2`` (speed-ups), ``s8_tp8_vs_tp4``, ``pre_word_*`` (words),
        ``s8_per_gpu_*``, ``r4090_*`` (us, ms, tokens/s, %). Custom kernels: ``one_*``, ``one_big_us``,
        ``two_big_us``, ``ab_step_us`` (the alpha-beta estimate's fitted latency per round, us), ``steps_one_shot``,
        ``steps_two_shot``, ``c41_*`` (a measured 4 KiB all_reduce on V100s).
        Sequence parallelism: ``sp_*`` (us, MiB), ``ar_ring_us``, ``ar_wire_{ring,nvls}_mib``. Self-checks:
        ``quiz_decode_ar_bytes`` (bytes); the decode-step profile: ``quiz_step_ms``, ``quiz_other_ms`` (ms),
        ``quiz_dec_algbw_gbps`` (GB/s), ``quiz_dec_link_pct`` (% of NVLink 4 per direction).

    Raises
    ------
    ClaimError
        If the numbers contradict a sentence of the page (each :func:`gpucomm.model.claims.require` names it).

    Notes
    -----
    Sources: the model catalog (:func:`gpucomm.model.tp.get_model`, Llama 3's config.json), NCCL's tuner constants
    (``baseLat`` and ``hwLat`` in ``src/graph/tuning.cc`` at v2.30.7-1, :mod:`gpucomm.model.nccl_tuner`),
    :func:`gpucomm.model.cost.collective_cost`, the roofline of :func:`gpucomm.model.tp.tp_step`, and the bundled
    measurement of :func:`gpucomm.model.measurements.case`.
    """
    f = decode_fabrics()
    out = {**_architecture(), **_one_all_reduce()}
    ar_pre = out.pop("_ar_pre")
    out.update(_decode_table(f))
    d1 = out.pop("_d1")
    out.update(_nvidia_blog(f))
    out.update(_when_tp_hurts(f, d1))
    out.update(_custom_all_reduce(f, d1))
    out.update(_sequence_parallel(ar_pre))
    hidden = get_model(MODEL).hidden_size
    out["quiz_decode_ar_bytes"] = tp_all_reduce_bytes(32, hidden, dtype="bf16")
    # quiz 4's profile of one TP=8 decode step (batch 1, 8x H100): step time, the all_reduces' share, their algbw
    algbw_gbps = tp_all_reduce_bytes(1, hidden) / (out["ar_dec_us"] * 1e-6) / 1e9
    claims.require(algbw_gbps < 0.01 * out["nvlink4_gbps"],
                   "the 16 KiB decode all_reduce reaches under 1 % of NVLink 4's bandwidth: latency-bound")
    out.update({"quiz_step_ms": 1e3 / out["h100_tp8_b1_user"],
                "quiz_other_ms": 1e3 / out["h100_tp8_b1_user"] - out["h100_tp8_floor_ms"],
                "quiz_dec_algbw_gbps": algbw_gbps, "quiz_dec_link_pct": 100 * algbw_gbps / out["nvlink4_gbps"]})
    return out
