"""The numbers of ``book/inference_2026.md`` (inference communication in 2026).

Sections: the decode all_reduce on 8x H100 inside a CUDA graph (NCCL's pick against one-shot and two-shot kernels); NCCL's
symmetric kernels (which kernel its cost model picks by size on Hopper and Blackwell, and its estimates); the launch
term under CUDA graphs; NVLink SHARP's buffers; reduction precision; the KV cache on the wire; the self-check answer.
"""

from __future__ import annotations

from gpucomm.model import claims
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.cost import collective_cost, steps_and_wire_bytes
from gpucomm.model.hardware import get_gpu, get_network
from gpucomm.model.nccl_symmetric import KERNEL_SHAPES, pick_all_reduce_kernel
from gpucomm.model.nvls_memory import nvls_buffer_bytes, nvls_channels
from gpucomm.model.reduction_precision import all_reduce_error
from gpucomm.model.tp import ALL_REDUCES_PER_LAYER_FORWARD, get_model, kv_bytes_per_token_per_layer, tp_all_reduce_bytes
from gpucomm.model.units import MiB, format_size

__all__ = ["KERNEL_TABLE_BYTES", "numbers"]

MODEL = "llama-3-70b"
RANKS = 8
KERNEL_TABLE_BYTES = (4 * 2**10, 64 * 2**10, 1 * MiB, 16 * MiB, 256 * MiB)
"""The message sizes of the page's symmetric-kernel table."""
PROMPT_TOKENS = 8192
"""The prompt whose KV cache the disaggregated-serving paragraph moves."""


def _messages() -> tuple[int, int, int]:
    m70 = get_model(MODEL)
    return (ALL_REDUCES_PER_LAYER_FORWARD * m70.num_layers, tp_all_reduce_bytes(1, m70.hidden_size),
            tp_all_reduce_bytes(4096, m70.hidden_size))


def _decode_all_reduce() -> dict[str, object]:
    """The 16 KiB decode all_reduce on 8x H100 (NVLink 4 + NVSwitch), inside a CUDA graph."""
    n_ar, dec_bytes, pre_bytes = _messages()
    cost = {a: collective_cost("all_reduce", dec_bytes, num_ranks=RANKS, fabric="nvlink4", algorithm=a, launch="graph")
            for a in ("auto", "one_shot", "two_shot")}
    eager = collective_cost("all_reduce", dec_bytes, num_ranks=RANKS, fabric="nvlink4", launch="eager")
    auto = cost["auto"]
    # NCCL's own pick (its tuner), priced by the model; the model's fastest pair can differ near a crossover
    nccl_dec = collective_cost("all_reduce", dec_bytes, num_ranks=RANKS, fabric="nvlink4", algorithm=auto.nccl_algorithm,
                               protocol=auto.nccl_protocol, launch="graph")
    ring_steps = steps_and_wire_bytes("all_reduce", 1, num_ranks=RANKS, algorithm="ring")[0]
    claims.require(auto.nccl_algorithm == "ring" and auto.nccl_protocol == "LL",
                   "NCCL's tuner runs the decode message as a ring with LL (the ring's steps are quoted)")
    claims.require(cost["one_shot"].time_s < cost["two_shot"].time_s < nccl_dec.time_s,
                   "for the decode message one-shot beats two-shot, which beats NCCL's pick")
    claims.require(sum(v for k, v in nccl_dec.terms if "bandwidth" in k) < 0.05 * nccl_dec.time_s,
                   "the decode all_reduce's time is latency, not bandwidth")
    claims.require(dict(eager.terms)["launch"] > dict(auto.terms)["launch"], "a CUDA graph lowers the launch term")
    ring_steps_s = ring_steps * nt.HW_LATENCY_US["nvlink"]["ring"][0] * 1e-6
    claims.require(ring_steps_s > 0.5 * (nccl_dec.time_s - cost["one_shot"].time_s),
                   "the difference (NCCL's ring vs one-shot) is mostly the ring's sequential steps")
    out: dict[str, object] = {
        "n_ar": n_ar, "ring_steps": ring_steps,
        "ring_steps_us": ring_steps_s * 1e6,  # NCCL's LL latency per NVLink step, times the ring's steps
        "nccl_ll_nvlink_step_us": nt.HW_LATENCY_US["nvlink"]["ring"][0],
        "dec_size": format_size(dec_bytes), "pre_size": format_size(pre_bytes),
        "dec_nccl_algo": f"{auto.nccl_algorithm}/{auto.nccl_protocol}", "dec_nccl_alg": auto.nccl_algorithm,
        "dec_nccl_us": nccl_dec.time_s * 1e6, "dec_nccl_floor_ms": n_ar * nccl_dec.time_s * 1e3,
        "launch_eager_us": dict(eager.terms)["launch"] * 1e6, "launch_graph_us": dict(auto.terms)["launch"] * 1e6,
    }
    for a, c in cost.items():
        out[f"dec_{a}_us"] = c.time_s * 1e6
        out[f"dec_{a}_floor_ms"] = n_ar * c.time_s * 1e3
    return out


def _symmetric_kernels() -> dict[str, object]:
    """NCCL's symmetric-kernel choice and estimate (``src/sym_kernels.cc``) against its tuner's estimate for its pick."""
    _, dec_bytes, pre_bytes = _messages()
    auto = collective_cost("all_reduce", dec_bytes, num_ranks=RANKS, fabric="nvlink4", launch="graph")
    pre = collective_cost("all_reduce", pre_bytes, num_ranks=RANKS, fabric="nvlink4", launch="graph")
    sym_dec = pick_all_reduce_kernel(dec_bytes, num_ranks=RANKS, compute_capability=90)
    sym_pre = pick_all_reduce_kernel(pre_bytes, num_ranks=RANKS, compute_capability=90)
    claims.require(sym_dec.kernel.startswith("AGxLL"), "the decode message gets an LL one-shot symmetric kernel")
    claims.require(sym_pre.time_s < pre.nccl_time_s,
                   "NCCL estimates the multimem symmetric kernel below its own pick for prefill")
    claims.require(sym_pre.kernel == "RSxLDMC_AGxSTMC", "a prefill message gets the multimem two-shot kernel")
    out: dict[str, object] = {
        "nccl_ring_est_us": auto.nccl_time_s * 1e6, "sym_dec_kernel": sym_dec.kernel,
        "sym_dec_shape": KERNEL_SHAPES[sym_dec.kernel], "sym_dec_us": sym_dec.time_s * 1e6,
        "sym_dec_blocks": sym_dec.blocks,
        "sym_vs_ring": claims.compare_word(sym_dec.time_s, auto.nccl_time_s, higher="more", lower="less"),
        "pre_nccl_algo": f"{pre.nccl_algorithm}/{pre.nccl_protocol}", "pre_nccl_est_us": pre.nccl_time_s * 1e6,
        "sym_pre_kernel": sym_pre.kernel, "sym_pre_shape": KERNEL_SHAPES[sym_pre.kernel],
        "sym_pre_us": sym_pre.time_s * 1e6, "sym_pre_blocks": sym_pre.blocks,
    }
    # the kernel NCCL picks by size, Hopper and Blackwell, 8 GPUs, bf16
    for i, size in enumerate(KERNEL_TABLE_BYTES):
        out[f"sz_{i}"] = format_size(size)
        for cc in (90, 100):
            c = pick_all_reduce_kernel(size, num_ranks=RANKS, compute_capability=cc)
            out[f"k_{cc}_{i}"], out[f"t_{cc}_{i}"], out[f"b_{cc}_{i}"] = c.kernel, f"{c.time_s * 1e6:.1f}", c.blocks
    small, large = KERNEL_TABLE_BYTES[0], KERNEL_TABLE_BYTES[-1]
    claims.require(pick_all_reduce_kernel(small, num_ranks=RANKS, compute_capability=100).time_s
                   > pick_all_reduce_kernel(small, num_ranks=RANKS, compute_capability=90).time_s
                   and pick_all_reduce_kernel(large, num_ranks=RANKS, compute_capability=100).time_s
                   < pick_all_reduce_kernel(large, num_ranks=RANKS, compute_capability=90).time_s,
                   "NCCL estimates B200 slower than H100 for small messages and faster for large ones")
    no_mc = pick_all_reduce_kernel(64 * MiB, num_ranks=RANKS, compute_capability=90, multimem=False)
    out.update({"no_mc_kernel": no_mc.kernel, "no_mc_us": no_mc.time_s * 1e6,
                "no_mc_ratio": no_mc.time_s / pick_all_reduce_kernel(64 * MiB, num_ranks=RANKS,
                                                                     compute_capability=90).time_s})
    return out


def _nvls_memory() -> dict[str, object]:
    """NVLS buffers per GPU and communicator (``ncclNvlsBufferSetup``, ``src/transport/nvls.cc``)."""
    h100 = get_gpu("h100_sxm5")
    nv_h100, nv_b200 = nvls_buffer_bytes(90, RANKS), nvls_buffer_bytes(100, RANKS)
    return {
        "nvls_ch_h100": nvls_channels(90), "nvls_ch_b200": nvls_channels(100),
        "nvls_h100_mib": nv_h100 / MiB, "nvls_b200_mib": nv_b200 / MiB, "nvls_h100_pct": 100 * nv_h100 / h100.mem_bytes,
        "nvls_3comm_mib": 3 * nv_h100 / MiB, "nvls_3comm_gb": 3 * nv_h100 / 1e9,
        "quiz_nvls_3comm_mib": 3 * nv_h100 / MiB,
    }


def _precision() -> dict[str, object]:
    """Relative error of an 8-rank sum by where it rounds (:func:`gpucomm.model.reduction_precision.all_reduce_error`)."""
    err = {(d, o): all_reduce_error(d, o, num_ranks=RANKS) for d in ("bf16", "fp8")
           for o in ("ring", "accumulate_fp32", "switch_fp16")}
    err64 = all_reduce_error("bf16", "ring", num_ranks=64, num_elements=512)
    claims.require(err["bf16", "ring"] > 1.5 * err["bf16", "accumulate_fp32"] and err64 > err["bf16", "ring"],
                   "rounding at every ring hop loses more than one rounding, and more with more ranks")
    claims.require(err["fp8", "ring"] > err["fp8", "switch_fp16"], "fp8 summed in fp16 inside the switch beats fp8 ring hops")
    return {
        "e_bf16_ring_pct": 100 * err["bf16", "ring"], "e_bf16_acc_pct": 100 * err["bf16", "accumulate_fp32"],
        "e_bf16_ratio": err["bf16", "ring"] / err["bf16", "accumulate_fp32"], "e_bf16_ring64_pct": 100 * err64,
        "e_fp8_ring_pct": 100 * err["fp8", "ring"], "e_fp8_switch_pct": 100 * err["fp8", "switch_fp16"],
        "e_fp8_acc_pct": 100 * err["fp8", "accumulate_fp32"],
    }


def _kv_cache() -> dict[str, object]:
    """The KV cache of Llama-3-70B (bf16): disaggregated prefill/decode over NDR, and context parallelism."""
    m70 = get_model(MODEL)
    kv_tok_layer = kv_bytes_per_token_per_layer(m70, dtype="bf16")
    act_tok_layer = tp_all_reduce_bytes(1, m70.hidden_size)
    kv_prompt = kv_tok_layer * m70.num_layers * PROMPT_TOKENS
    ndr = get_network("ib_ndr")
    claims.require(kv_tok_layer < act_tok_layer,
                   "with grouped-query attention a token's K and V are smaller than its hidden-state row")
    return {
        "kv_tok": format_size(kv_tok_layer * m70.num_layers), "kv_prompt_tokens": f"{PROMPT_TOKENS:,}",
        "kv_prompt": format_size(kv_prompt), "nic_name": ndr.name,
        "kv_one_nic_ms": kv_prompt / ndr.bw_bytes_per_s * 1e3, "kv_eight_nic_ms": kv_prompt / (8 * ndr.bw_bytes_per_s) * 1e3,
        "kv_tok_layer": format_size(kv_tok_layer), "act_tok_layer": format_size(act_tok_layer),
        "kv_act_ratio": act_tok_layer / kv_tok_layer,
    }


def numbers() -> dict[str, object]:
    """Every number ``book/inference_2026.md`` glues, by glue key.

    Returns
    -------
    dict of str to object
        Decode all_reduce (8x H100, CUDA graph): ``n_ar``, ``ring_steps``, ``ring_steps_us`` and
        ``nccl_ll_nvlink_step_us`` (NCCL's LL latency per NVLink step, us), ``dec_size``/``pre_size`` (text),
        ``dec_{auto,one_shot,two_shot,nccl}_us`` (us), ``dec_*_floor_ms`` (ms per token), ``dec_nccl_algo``,
        ``dec_nccl_alg``, ``launch_eager_us``, ``launch_graph_us`` (us). Symmetric kernels: ``sym_dec_*``,
        ``sym_pre_*`` (kernel, shape, us, blocks), ``nccl_ring_est_us``, ``pre_nccl_est_us`` (us), ``pre_nccl_algo``,
        ``sym_vs_ring`` (word), the table's ``sz_i``, ``k_<cc>_i``, ``t_<cc>_i`` (us, text), ``b_<cc>_i`` (blocks),
        ``no_mc_kernel``, ``no_mc_us``, ``no_mc_ratio``. NVLS memory: ``nvls_ch_*``, ``nvls_*_mib`` (MiB),
        ``nvls_h100_pct`` (%), ``nvls_3comm_gb`` (GB), ``quiz_nvls_3comm_mib`` (MiB). Precision: ``e_*_pct`` (%),
        ``e_bf16_ratio``. KV cache: ``kv_tok``, ``kv_prompt``, ``kv_tok_layer``, ``act_tok_layer`` (text),
        ``kv_prompt_tokens``, ``nic_name``, ``kv_*_nic_ms`` (ms), ``kv_act_ratio``.

    Raises
    ------
    ClaimError
        If the numbers contradict a sentence of the page (each :func:`gpucomm.model.claims.require` names it).

    Notes
    -----
    Sources: :func:`gpucomm.model.cost.collective_cost` (NCCL's tuner, ``src/graph/tuning.cc`` at v2.30.7-1, and the
    alpha-beta estimate of the custom kernels), NCCL's symmetric-kernel model (``src/sym_kernels.cc`` at v2.30.7-1,
    :mod:`gpucomm.model.nccl_symmetric`), NVLS buffer sizes (``src/transport/nvls.cc``,
    :mod:`gpucomm.model.nvls_memory`), :mod:`gpucomm.model.reduction_precision`, and the catalog.
    """
    return {**_decode_all_reduce(), **_symmetric_kernels(), **_nvls_memory(), **_precision(), **_kv_cache()}
