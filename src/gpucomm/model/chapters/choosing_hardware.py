"""The numbers of ``book/choosing_hardware.md`` (Choosing hardware).

Sections follow the page's decision table: Llama-3-8B on one GPU, Llama-3-70B with TP=8 (DGX H100 against eight RTX 4090),
Llama-3-70B pre-training on 16 nodes (four clusters), and two RTX 4090s; then where the communication model was checked.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model.course import checked_on, serving_figures
from gpucomm.model.fabric import make_fabric, system_fabric
from gpucomm.model.hardware import get_gpu, get_network
from gpucomm.model.planning import hybrid_step_estimate, serving_estimate
from gpucomm.model.tp import get_model, tp_all_reduce_bytes, tp_speedup
from gpucomm.model.units import format_size
from gpucomm.model.validation import CASES, SWEEPS, validate

__all__ = ["CLUSTERS", "PROMPT_LEN", "numbers"]

PROMPT_LEN = 1024
"""Context length of every serving row (tokens)."""
CLUSTERS = {"r3_ndr": ("h100_sxm5", "nvlink4", "ib_ndr"), "r3_roce": ("h100_sxm5", "nvlink4", "eth_400g"),
            "r3_a100": ("a100_sxm4_80gb", "nvlink3", "ib_hdr"), "r3_pcie": ("h100_pcie", "pcie5", "ib_ndr")}
"""Row 3's clusters of 16 nodes: glue prefix -> (GPU, link inside the node, network)."""


def _serving_rows() -> dict[str, tuple]:
    """Every serving row: glue prefix -> (model, fabric, TP, batch, dtype); rows 1, 2 and 4 of the decision table."""
    rtx4090 = make_fabric("pcie4", p2p=False, gpu="rtx_4090", name="RTX 4090")
    h100 = make_fabric("nvlink4", gpu="h100_sxm5", name="H100 SXM")
    dgx, box = system_fabric("dgx_h100"), system_fabric("pcie_8x_rtx4090")
    two = _two_4090s()
    return {"r1_4090": ("llama-3-8b", rtx4090, 1, 1, "fp16"), "r1_h100": ("llama-3-8b", h100, 1, 1, "fp16"),
            "r1_4090_b32": ("llama-3-8b", rtx4090, 1, 32, "fp16"), "r1_h100_b32": ("llama-3-8b", h100, 1, 32, "fp16"),
            "r2_dgx": ("llama-3-70b", dgx, 8, 1, "fp16"), "r2_dgx_b32": ("llama-3-70b", dgx, 8, 32, "fp16"),
            "r2_4090": ("llama-3-70b", box, 8, 1, "fp16"), "r2_4090_b32": ("llama-3-70b", box, 8, 32, "fp16"),
            "r4_8b_tp1": ("llama-3-8b", two, 1, 1, "fp16"), "r4_8b_tp2": ("llama-3-8b", two, 2, 1, "fp16"),
            "r4_70b_fp16": ("llama-3-70b", two, 2, 1, "fp16"), "r4_70b_fp8": ("llama-3-70b", two, 2, 1, "fp8")}


def _two_4090s():
    return make_fabric("pcie4", p2p=False, gpu="rtx_4090", gpus_per_node=2, name="2x RTX 4090")


def _serving() -> tuple[dict[str, object], dict[str, dict]]:
    served = {key: serving_figures(serving_estimate(model, fabric, tp_size=tp, batch=batch, dtype=dtype,
                                                    prompt_len=PROMPT_LEN))
              for key, (model, fabric, tp, batch, dtype) in _serving_rows().items()}
    out: dict[str, object] = {f"{key}_{name}": value for key, figures in served.items() for name, value in figures.items()}
    dgx_fabric, box_fabric = system_fabric("dgx_h100"), system_fabric("pcie_8x_rtx4090")
    one = serving_estimate("llama-3-70b", dgx_fabric, tp_size=8, batch=1, dtype="fp16", prompt_len=PROMPT_LEN,
                           algorithm="one_shot")
    dec = {key: serving_estimate("llama-3-70b", f, tp_size=8, batch=1, dtype="fp16", prompt_len=PROMPT_LEN).decode
           for key, f in (("dgx", dgx_fabric), ("box", box_fabric))}
    dgx, box = served["r2_dgx"], served["r2_4090"]
    r4_tp1, r4_tp2 = served["r4_8b_tp1"], served["r4_8b_tp2"]
    out.update({
        "r2_one_user": one.tokens_per_s_per_user, "r2_one_comm": 100 * one.decode_comm_share,
        # batch 1: the all_reduces of one token (every layer's two), in ms, and the message they carry
        "r2_dgx_token_comm_ms": dec["dgx"].comm_per_layer_s * dec["dgx"].num_layers * 1e3,
        "r2_box_token_comm_ms": dec["box"].comm_per_layer_s * dec["box"].num_layers * 1e3,
        "r2_msg": format_size(dec["dgx"].msg_bytes),
        "r2_4090_mem_tbs": get_gpu("rtx_4090").mem_bw_bytes_per_s / 1e12,
        "r2_h100_mem_tbs": get_gpu("h100_sxm5").mem_bw_bytes_per_s / 1e12,
        "r2_ttft_ratio": box["ttft"] / dgx["ttft"],
        "r4_room_tp1_gb": r4_tp1["cap"] - r4_tp1["mem"], "r4_room_tp2_gb": r4_tp2["cap"] - r4_tp2["mem"],
    })
    claims.require(box["comm"] < dgx["comm"] and abs(dec["box"].comm_per_layer_s / dec["dgx"].comm_per_layer_s - 1) < 0.25,
                   "at batch 1 the 4090 box's share is lower only because its steps are longer: the all_reduce time is "
                   "about the same")
    claims.require(dgx["comm"] > 25, "even on NVLink the decode all_reduces are a large share at batch 1")
    claims.require(r4_tp1["gpu"] > r4_tp2["gpu"] and r4_tp2["user"] > r4_tp1["user"]
                   and out["r4_room_tp2_gb"] > out["r4_room_tp1_gb"],
                   "replicas: more tokens/s per GPU; TP=2: more per user and more KV-cache room per card")
    claims.require(served["r1_4090"]["fits"] == served["r1_h100"]["fits"] == "yes",
                   "Llama-3-8B fits one RTX 4090 or one H100")
    claims.require(min(served["r1_4090"]["user"], served["r1_h100"]["user"]) > 30,
                   "one GPU already exceeds 30 tokens/s per user")
    claims.require(dgx["fits"] == box["fits"] == "yes", "both fit with TP=8")
    claims.require(dgx["user"] > box["user"] and served["r2_dgx_b32"]["gpu"] > served["r2_4090_b32"]["gpu"],
                   "the DGX H100 serves Llama-3-70B faster than 8x RTX 4090, at batch 1 and 32")
    claims.require(served["r2_4090_b32"]["gpu"] / served["r2_dgx_b32"]["gpu"] < box["user"] / dgx["user"],
                   "the RTX 4090 box falls further behind at batch 32 than at batch 1")
    claims.require(served["r2_4090_b32"]["comm"] > 50, "the PCIe box spends most of its time in all_reduces once batches grow")
    claims.require(box["ttft"] / dgx["ttft"] > 8, "its prefill (time to first token) is an order of magnitude slower")
    claims.require(one.tokens_per_s_per_user > dgx["user"] and one.decode_comm_share * 100 < dgx["comm"],
                   "a one-shot all_reduce raises the per-user speed and lowers the communication share")
    claims.require(served["r4_70b_fp8"]["fits"] == served["r4_70b_fp16"]["fits"] == "no",
                   "Llama-3-70B does not fit two RTX 4090s even in FP8")
    return out, served


def _training() -> dict[str, object]:
    steps = {prefix: hybrid_step_estimate("llama-3-70b", fabric=make_fabric(link, num_nodes=16, network=net, gpu=gpu))
             for prefix, (gpu, link, net) in CLUSTERS.items()}
    out: dict[str, object] = {}
    for prefix, h in steps.items():
        out.update({f"{prefix}_compute": h.compute_s, f"{prefix}_tp": h.tp.time_s, f"{prefix}_dp": h.dp.time_s,
                    f"{prefix}_share": 100 * h.comm_share, f"{prefix}_step": h.compute_s + h.exposed_s})
    ndr_gbps, roce_gbps = get_network("ib_ndr").bw_bytes_per_s / 1e9, get_network("eth_400g").bw_bytes_per_s / 1e9
    out["ndr_port_gbps"] = ndr_gbps
    claims.require(steps["r3_ndr"].comm_share < steps["r3_pcie"].comm_share
                   and steps["r3_pcie"].tp.time_s > steps["r3_pcie"].dp.time_s,
                   "NVLink inside the node: the exposed share is lower than with PCIe, where TP dominates, not the network")
    claims.require(steps["r3_pcie"].tp.time_s > steps["r3_pcie"].compute_s,
                   "quiz 4: on the H100 PCIe cluster the TP all_reduces take longer than the compute")
    claims.require(steps["r3_a100"].comm_share < steps["r3_ndr"].comm_share
                   and steps["r3_a100"].compute_s > steps["r3_ndr"].compute_s,
                   "the A100 cluster's share is lower than the H100's because its compute is slower")
    claims.require(ndr_gbps == roce_gbps and abs(steps["r3_roce"].comm_share / steps["r3_ndr"].comm_share - 1) < 0.01,
                   "IB and RoCE at the same rate are the same in the model")
    return out


def _two_cards() -> dict[str, object]:
    two = _two_4090s()
    dec_speedup = tp_speedup("llama-3-8b", fabric=two, tp_size=2, phase="decode")
    pre_speedup = tp_speedup("llama-3-8b", fabric=two, tp_size=2, phase="prefill", prompt_len=2048)
    claims.require(dec_speedup > 1, "on two RTX 4090s without P2P, TP=2 still helps decode")
    return {
        "r4_dec_speedup": dec_speedup, "r4_pre_speedup": pre_speedup,
        "r4_pre_word": claims.compare_word(pre_speedup, 1.0, higher="gets faster too", lower="gets slower",
                                           same="stays the same", rel_tol=0.005),
        "r4_msg": format_size(tp_all_reduce_bytes(1, get_model("llama-3-8b").hidden_size)),
        "r4_4090_gb": get_gpu("rtx_4090").mem_bytes / 1e9,
    }


def numbers() -> dict[str, object]:
    """Every number ``book/choosing_hardware.md`` glues, by glue key.

    Returns
    -------
    dict of str to object
        Serving rows (prefixes ``r1_*``, ``r2_*``, ``r4_8b_*``, ``r4_70b_*``, see :func:`_serving_rows`), each with the
        keys of :func:`gpucomm.model.course.serving_figures` (``mem`` and ``cap`` in GB, ``fits`` yes/no, ``user`` and
        ``gpu`` in tokens/s, ``comm`` in %, ``ttft`` in ms); ``r2_one_user``, ``r2_one_comm`` (one-shot all_reduce),
        ``r2_{dgx,box}_token_comm_ms`` (ms), ``r2_msg`` (size), ``r2_{4090,h100}_mem_tbs`` (TB/s), ``r2_ttft_ratio``,
        ``r4_room_tp{1,2}_gb`` (GB). Training (prefixes of :data:`CLUSTERS`): ``_compute``, ``_tp``, ``_dp``, ``_step``
        (s per step), ``_share`` (exposed communication, %); ``ndr_port_gbps`` (GB/s). Two cards: ``r4_dec_speedup``,
        ``r4_pre_speedup``, ``r4_pre_word``, ``r4_msg``, ``r4_4090_gb``. ``checked_{nvlink,pcie,network}`` (sentences).

    Raises
    ------
    ClaimError
        If the numbers contradict a sentence of the page (each :func:`gpucomm.model.claims.require` names it).

    Notes
    -----
    Sources: :func:`gpucomm.model.planning.serving_estimate` (roofline decode and prefill with the all_reduce cost
    model), :func:`gpucomm.model.planning.hybrid_step_estimate`, :func:`gpucomm.model.tp.tp_speedup`, the GPU and
    network catalog, and :func:`gpucomm.model.validation.validate`.
    """
    out, _ = _serving()
    out.update(_training())
    out.update(_two_cards())
    results = validate()
    for transport in ("nvlink", "pcie", "network"):
        out[f"checked_{transport}"] = checked_on(results, (*SWEEPS, *CASES), transport=transport).sentence
    return out
