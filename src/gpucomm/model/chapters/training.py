"""The numbers of ``book/training.md`` (communication in training).

Sections: what each strategy (DP, FSDP, PP, TP) sends per step for Llama-3-8B on 8 GPUs, over NVLink 4 and over PCIe 4.0
staged through host memory; overlap with the backward pass; memory per GPU; a pre-training layout (TP=8 in each DGX H100,
DP across 16 nodes); where the collective times were checked; the self-check answers. The figure is drawn by
:mod:`gpucomm.viz` and stays in the page.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model.collectives import busbw_factor
from gpucomm.model.course import checked_on
from gpucomm.model.fabric import Fabric, make_fabric
from gpucomm.model.hardware import get_gpu
from gpucomm.model.planning import (
    BACKWARD_SHARE_OF_COMPUTE,
    LLAMA3_MFU,
    hybrid_step_estimate,
    training_comm_estimate,
    training_memory_bytes_per_gpu,
)
from gpucomm.model.tp import get_model
from gpucomm.model.training import model_params, step_comm
from gpucomm.model.units import format_size
from gpucomm.model.validation import CASES, SWEEPS, validate

__all__ = ["NUM_GPUS", "STRATEGIES", "TOKENS_PER_GPU", "numbers", "systems"]

M8, M70 = "llama-3-8b", "llama-3-70b"
NUM_GPUS = 8
TOKENS_PER_GPU = 8192
"""One 8192-token sequence per GPU per step."""
STRATEGIES = ("dp", "fsdp", "pp", "tp")
DDP_BUCKET_BYTES = 25 * 2**20
"""PyTorch DDP's default bucket (``bucket_cap_mb=None`` -> 25 MiB, ``_DEFAULT_BUCKET_CAP_MB`` in
``torch/nn/parallel/distributed.py``)."""


def systems() -> dict[str, Fabric]:
    """The table's two machines: ``nv`` (8x H100 SXM, NVLink 4) and ``pc`` (8x RTX 4090, PCIe 4.0 via host memory).

    Returns
    -------
    dict of str to Fabric
        From :func:`gpucomm.model.fabric.make_fabric`.
    """
    return {"nv": make_fabric("nvlink4", gpu="h100_sxm5"), "pc": make_fabric("pcie4", p2p=False, gpu="rtx_4090")}


def _strategies() -> dict[str, object]:
    out: dict[str, object] = {
        "n": NUM_GPUS, "tpg": TOKENS_PER_GPU, "psi8_b": model_params(M8) / 1e9, "psi70_b": model_params(M70) / 1e9,
        "layers8": get_model(M8).num_layers, "hidden8": get_model(M8).hidden_size, "mfu_pct": 100 * LLAMA3_MFU,
        "bwd_pct": 100 * BACKWARD_SHARE_OF_COMPUTE,
    }
    volumes = {}
    for s in STRATEGIES:
        for key, fabric in systems().items():
            e = training_comm_estimate(M8, s, fabric=fabric, num_gpus=NUM_GPUS, tokens_per_gpu=TOKENS_PER_GPU, overlap=True)
            out[f"{s}_{key}_s"] = e.comm.time_s
            out[f"{s}_{key}_exp_s"] = e.exposed_s
            if s == "dp":
                out[f"{key}_compute_s"] = e.compute_s
        volumes[s] = e.comm.volume_bytes
        out[f"{s}_vol"] = format_size(e.comm.volume_bytes)
        out[f"{s}_mem_gb"] = e.mem_bytes_per_gpu / 1e9
        coll, size, count = e.comm.collectives[0]
        out[f"{s}_calls"] = f"{count} x {coll} of {format_size(size)}"
    claims.require(volumes["pp"] == min(volumes.values()), "PP moves the least")
    fsdp = step_comm(M8, "fsdp", num_gpus=NUM_GPUS, fabric="nvlink4")
    dp = step_comm(M8, "dp", num_gpus=NUM_GPUS, fabric="nvlink4")
    psi8, n = model_params(M8), NUM_GPUS
    claims.require(abs(dp.volume_bytes / (2 * (n - 1) / n * 2 * psi8) - 1) < 1e-9
                   and abs(fsdp.volume_bytes / (3 * (n - 1) / n * 2 * psi8) - 1) < 1e-9,
                   "DP moves 2(n-1)/n x 2 bytes x Psi per GPU (reduce_scatter + all_gather), FSDP 3(n-1)/n x 2 bytes x Psi")
    pp = step_comm(M8, "pp", num_gpus=n, fabric="nvlink4", global_batch_tokens=n * TOKENS_PER_GPU, seq_len=TOKENS_PER_GPU)
    out.update({
        "fsdp_over_dp": fsdp.volume_bytes / dp.volume_bytes, "pp_micro": pp.collectives[0][2] // 2,
        "pp_act": format_size(pp.collectives[0][1]), "dp_buckets": dp.collectives[0][1] / DDP_BUCKET_BYTES,
        # quiz 1: 16 GB of gradients on 16 GPUs, by DP's ring and by FSDP
        "quiz_dp_ring_gb": busbw_factor("all_reduce", 16) * 16,
        "quiz_fsdp_gb": busbw_factor("all_reduce", 16) * 16 * fsdp.volume_bytes / dp.volume_bytes,
    })
    return out


def _overlap() -> dict[str, object]:
    nv, pc = systems()["nv"], systems()["pc"]
    h100_pcie = make_fabric("pcie5", gpu="h100_pcie")
    tp_nv = training_comm_estimate(M8, "tp", fabric=nv, num_gpus=NUM_GPUS)
    tp_pc = training_comm_estimate(M8, "tp", fabric=h100_pcie, num_gpus=NUM_GPUS)
    tp_pc4 = training_comm_estimate(M8, "tp", fabric=pc, num_gpus=NUM_GPUS, tokens_per_gpu=TOKENS_PER_GPU)
    dp_small = training_comm_estimate(M8, "dp", fabric=pc, num_gpus=NUM_GPUS, tokens_per_gpu=2048, overlap=True)
    dp_pc = training_comm_estimate(M8, "dp", fabric=pc, num_gpus=NUM_GPUS, tokens_per_gpu=TOKENS_PER_GPU, overlap=True)
    claims.require(dp_pc.exposed_s < 0.1 * dp_pc.compute_s < dp_small.exposed_s,
                   "8192 tokens per GPU hide DP on PCIe; with 2048 its exposed time is no longer small")
    claims.require(tp_pc.exposed_s / tp_pc.compute_s > tp_nv.exposed_s / tp_nv.compute_s
                   and tp_pc4.comm.time_s > tp_pc4.compute_s,
                   "TP takes a larger share of the step over PCIe than over NVLink, and on PCIe via host it exceeds the compute")
    return {
        "tp_share_nv_pct": 100 * tp_nv.exposed_s / (tp_nv.compute_s + tp_nv.exposed_s),
        "tp_share_pcie5_pct": 100 * tp_pc.exposed_s / (tp_pc.compute_s + tp_pc.exposed_s),
        "dp_small_exp_s": dp_small.exposed_s, "dp_small_compute_s": dp_small.compute_s,
    }


def _memory() -> dict[str, object]:
    """Weights + gradients + Adam per GPU (ZeRO's 16 bytes per parameter), activations excluded."""
    dp8 = training_memory_bytes_per_gpu(M8, "dp", num_gpus=NUM_GPUS)
    claims.require(dp8 > max(get_gpu(g).mem_bytes for g in ("h100_sxm5", "rtx_4090")),
                   "plain DP does not fit Llama-3-8B on either GPU of the table")
    b200 = get_gpu("b200_hgx").mem_bytes
    claims.require(dp8 < b200, "a B200 (the figure's largest GPU) holds plain DP's weights, gradients and Adam state")
    return {
        "b200_mem_gb": b200 / 1e9, "mem_dp8_gb": dp8 / 1e9,
        "mem_fsdp8_gb": training_memory_bytes_per_gpu(M8, "fsdp", num_gpus=NUM_GPUS) / 1e9,
        "mem_dp70_tb": training_memory_bytes_per_gpu(M70, "dp", num_gpus=NUM_GPUS) / 1e12,
        "mem_fsdp70_8_gb": training_memory_bytes_per_gpu(M70, "fsdp", num_gpus=8) / 1e9,
        "mem_fsdp70_16_gb": training_memory_bytes_per_gpu(M70, "fsdp", num_gpus=16) / 1e9,
    }


def _pretraining_layout() -> dict[str, object]:
    """TP=8 in each DGX H100, DP across 16 nodes over NDR (and EDR), 16 Mi tokens per step; H100 PCIe nodes."""
    cluster = make_fabric("nvlink4", gpu="h100_sxm5", num_nodes=16, network="ib_ndr")
    h = hybrid_step_estimate(M70, fabric=cluster)
    hp = hybrid_step_estimate(M70, fabric=make_fabric("pcie5", gpu="h100_pcie", num_nodes=16, network="ib_ndr"))
    he = hybrid_step_estimate(M70, fabric=cluster.replace(network="ib_edr"), overlap_dp=False)
    claims.require(hp.tp.time_s > 10 * hp.dp.time_s and hp.tp.time_s > hp.compute_s,
                   "quiz 4: on H100 PCIe nodes TP over PCIe dwarfs the DP all_reduce over NDR and exceeds the compute")
    claims.require(h.dp.time_s < BACKWARD_SHARE_OF_COMPUTE * h.compute_s
                   and he.dp.time_s < BACKWARD_SHARE_OF_COMPUTE * he.compute_s,
                   "the DP all_reduce hides behind the backward pass on NDR, and even on EDR")
    claims.require(he.dp.time_s < 0.1 * he.compute_s and hp.tp.time_s > he.dp.time_s,
                   "EDR's DP all_reduce is still small next to the compute; the network matters far less than NVLink under TP")
    claims.require(h.tp.time_s >= 0.9 * h.exposed_s, "the exposed communication is almost all TP over NVLink")
    return {
        "hy_compute_s": h.compute_s, "hy_tp_s": h.tp.time_s, "hy_dp_s": h.dp.time_s, "hy_share_pct": 100 * h.comm_share,
        "hy_tp_msg": format_size(h.tp.collectives[0][1]),
        "hyp_compute_s": hp.compute_s, "hyp_tp_s": hp.tp.time_s, "hyp_share_pct": 100 * hp.comm_share,
        "hyp_dp_s": hp.dp.time_s, "hye_dp_s": he.dp.time_s,
    }


def numbers() -> dict[str, object]:
    """Every number ``book/training.md`` glues, by glue key.

    Returns
    -------
    dict of str to object
        Setup: ``n``, ``tpg`` (tokens per GPU), ``psi8_b``/``psi70_b`` (billions of parameters), ``layers8``,
        ``hidden8``, ``mfu_pct``, ``bwd_pct`` (%). Strategies (``dp``, ``fsdp``, ``pp``, ``tp``) on ``nv`` and ``pc``:
        ``<s>_<sys>_s`` (communication per step, s), ``<s>_<sys>_exp_s`` (exposed, s), ``<s>_vol`` (bytes per GPU per
        direction, text), ``<s>_mem_gb`` (GB), ``<s>_calls`` (text), ``nv_compute_s``/``pc_compute_s`` (s),
        ``fsdp_over_dp``, ``pp_micro``, ``pp_act``, ``dp_buckets``. Overlap: ``tp_share_nv_pct``,
        ``tp_share_pcie5_pct`` (%), ``dp_small_exp_s``, ``dp_small_compute_s`` (s). Memory: ``mem_*_gb``, ``b200_mem_gb`` (GB),
        ``mem_dp70_tb`` (TB). Pre-training layout: ``hy_*``, ``hyp_*``, ``hye_dp_s`` (s), ``*_share_pct`` (%),
        ``hy_tp_msg``. Validation: ``checked_nvlink``, ``checked_network`` (sentences). Self-check:
        ``quiz_dp_ring_gb``, ``quiz_fsdp_gb`` (GB).

    Raises
    ------
    ClaimError
        If the numbers contradict a sentence of the page (each :func:`gpucomm.model.claims.require` names it).

    Notes
    -----
    Sources: :mod:`gpucomm.model.training` (bytes per strategy: ZeRO, arXiv:1910.02054, sec. 7; Megatron-LM,
    arXiv:1909.08053), :mod:`gpucomm.model.planning` (compute at Llama 3's MFU, arXiv:2407.21783 Table 4; overlap with
    the backward pass), :func:`gpucomm.model.cost.collective_cost` underneath, and
    :func:`gpucomm.model.validation.validate` for where the collective times were checked.
    """
    out = {**_strategies(), **_overlap(), **_memory(), **_pretraining_layout()}
    results = validate()
    out["checked_nvlink"] = checked_on(results, (*SWEEPS, *CASES), transport="nvlink").sentence
    out["checked_network"] = checked_on(results, (*SWEEPS, *CASES), transport="network").sentence
    return out
