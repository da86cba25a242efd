"""Planning helpers: serving estimates, latency budgets, a batch served start to finish, training compute and memory.

These functions combine the model layer (:mod:`gpucomm.model.tp`, :mod:`gpucomm.model.training`,
:mod:`gpucomm.model.cost`, the hardware catalog) for one :class:`gpucomm.model.fabric.Fabric` (the
GPUs and how they are connected) into the quantities a reader sizing a
deployment asks for: does it fit, how many tokens per second per user and per GPU, what
share of the time is communication, how long a training step communicates. They add no
new communication model; the formulas they do add (training FLOPs, training memory) are
stated with their source in each docstring.

Like the rest of the model layer, this module imports neither plotly nor torch.

References
----------
Kaplan et al., "Scaling Laws for Neural Language Models", arXiv:2001.08361, sec. 2.1:
training compute C ~ 6 N per token (2 N forward, 4 N backward).
Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
SC'20, arXiv:1910.02054, sec. 3.1 and Fig. 1: mixed-precision Adam holds 2 + 2 + 12 = 16 bytes
per parameter; ZeRO-3 divides all of it by the data-parallel degree.
Llama Team, "The Llama 3 Herd of Models", arXiv:2407.21783, Table 4: 38-43 % BF16 MFU on
8,192-16,384 H100 GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucomm import GpucommError
from gpucomm.model.fabric import Fabric
from gpucomm.model.hardware.gpus import get_gpu
from gpucomm.model.tp import TPStep, get_model, tp_step
from gpucomm.model.training import STRATEGIES, StepComm, model_params, step_comm
from gpucomm.model.units import check_int

ADAM_MIXED_PRECISION_BYTES_PER_PARAM = 16
"""fp16/bf16 weights (2) + fp16/bf16 gradients (2) + fp32 master weights, momentum and variance (12): ZeRO, sec. 3.1."""

TRAINING_FLOPS_PER_PARAM_PER_TOKEN = 6
"""2 FLOPs per weight per token in the forward pass, 4 in the backward pass (Kaplan et al. 2020, sec. 2.1)."""

BACKWARD_SHARE_OF_COMPUTE = 4 / 6
"""Backward pass share of a training step's FLOPs (4 of the 6 per parameter and token): the window in which
data-parallel gradient all_reduces can overlap compute (PyTorch DDP bucketing, Li et al., VLDB 2020, arXiv:2006.15704)."""

LLAMA3_MFU = 0.40
"""Model FLOP/s utilization assumed for training: Llama 3 reports 38-43 % BF16 MFU on 8K-16K H100s
(arXiv:2407.21783, Table 4); 0.40 sits in that range."""

OVERLAPPABLE_STRATEGIES = ("dp", "fsdp")
"""Strategies whose communication frameworks overlap with compute: DP's bucketed gradient all_reduce runs during
the backward pass (Li et al., arXiv:2006.15704, sec. 3.2.3); FSDP prefetches the next layer's all_gather (Zhao et al.,
arXiv:2304.11277, sec. 3.3). Megatron TP all_reduces sit between dependent matrix multiplies (arXiv:1909.08053,
Fig. 3) and pipeline sends start a stage's work, so those stay exposed here."""


TP_LIMIT = 8
"""Largest TP degree the serving estimates offer by default: the attention heads of the presets divide by 8, and TP
beyond one node's worth of GPUs (8 in DGX/HGX systems) is rarely used."""


def max_tp_size(fabric: Fabric) -> int:
    """Largest TP degree a fabric offers: its GPUs per node (NVLink domain or PCIe box), at most :data:`TP_LIMIT`.

    Parameters
    ----------
    fabric : Fabric
        The GPUs and how they are connected (``gpus_per_node`` None: not limited by the fabric).

    Returns
    -------
    int
        ``min(fabric.gpus_per_node, TP_LIMIT)``, or :data:`TP_LIMIT` when the fabric does not say.

    Examples
    --------
    >>> from gpucomm.model.fabric import make_fabric, system_fabric
    >>> max_tp_size(system_fabric("gb200_nvl72")), max_tp_size(make_fabric("pcie4", p2p=False, gpus_per_node=2))
    (8, 2)
    """
    return min(fabric.gpus_per_node or TP_LIMIT, TP_LIMIT)


def _gpu_of(fabric: Fabric) -> str:
    """The fabric's GPU key; estimates with compute or memory need one."""
    if fabric.gpu is None:
        raise GpucommError(f"no GPU in the fabric ({fabric.label}): expected a fabric with its GPU, e.g. "
                           f"make_fabric({fabric.link.key!r}, gpu='h100_sxm5') or system_fabric('dgx_h100')")
    return fabric.gpu


@dataclass(frozen=True)
class BudgetPoint:
    """The best batch under a per-user speed budget. Rates in tokens/s."""

    batch: int
    step: TPStep
    tokens_per_s_per_user: float
    tokens_per_s_per_gpu: float


def max_batch_within_budget(model: str, fabric: Fabric, *, tp_size: int, min_tokens_per_s_per_user: float,
                            max_batch: int = 4096, prompt_len: int = 1024, context_len: int | None = None,
                            dtype: str = "fp16", algorithm: str = "auto") -> BudgetPoint | None:
    """Largest decode batch that still gives every user ``min_tokens_per_s_per_user`` and fits in memory.

    Cloud services fix a per-user speed (a latency budget) and batch as many users as that allows, to
    maximise tokens/s per GPU (NVIDIA, "NVLink and NVSwitch supercharge LLM inference", Table 2). Per-user
    speed falls as the batch grows (more KV cache to read, bigger all_reduces), so the largest admissible
    batch is found by bisection.

    Parameters
    ----------
    model : str
        Model preset.
    fabric : Fabric
        The GPUs (with their ``gpu``) and how they are connected.
    tp_size : int
        TP degree.
    min_tokens_per_s_per_user : float
        The budget, tokens/s per user, > 0.
    max_batch : int
        Largest batch considered.
    prompt_len, context_len, dtype, algorithm
        As :func:`gpucomm.model.tp.tp_step` (decode phase).

    Returns
    -------
    BudgetPoint or None
        None when even a batch of 1 misses the budget or does not fit in memory.

    Raises
    ------
    GpucommError
        Non-positive budget, ``max_batch`` < 1, or any error of :func:`gpucomm.model.tp.tp_step`.

    Examples
    --------
    >>> from gpucomm.model.fabric import make_fabric
    >>> h100 = make_fabric("nvlink4", gpu="h100_sxm5")
    >>> p = max_batch_within_budget("llama-3-70b", h100, tp_size=4, min_tokens_per_s_per_user=40)
    >>> p.tokens_per_s_per_user >= 40
    True
    """
    if not min_tokens_per_s_per_user > 0:
        raise GpucommError(f"budget {min_tokens_per_s_per_user!r} tokens/s per user is not valid: expected > 0")
    if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
        raise GpucommError(f"max batch {max_batch!r} is not valid: expected a positive integer")

    def step(batch: int) -> TPStep:
        return tp_step(model, fabric=fabric, tp_size=tp_size, phase="decode", batch=batch, prompt_len=prompt_len,
                       context_len=context_len, dtype=dtype, algorithm=algorithm)

    def ok(s: TPStep) -> bool:
        return s.fits_memory and s.tokens_per_s_per_user >= min_tokens_per_s_per_user

    if not ok(step(1)):
        return None
    lo, hi = 1, max_batch
    while lo < hi:  # per-user speed and memory fit both get worse as the batch grows: monotone
        mid = (lo + hi + 1) // 2
        if ok(step(mid)):
            lo = mid
        else:
            hi = mid - 1
    best = step(lo)
    return BudgetPoint(lo, best, best.tokens_per_s_per_user, best.tokens_per_s_per_gpu)


@dataclass(frozen=True)
class ServingEstimate:
    """Serving one model on one TP group: memory, speed, communication. Times in s, rates in tokens/s."""

    fabric: Fabric
    model: str
    tp_size: int
    batch: int
    fits_memory: bool
    mem_bytes_per_gpu: float
    gpu_mem_bytes: float | None
    decode: TPStep
    prefill: TPStep
    tokens_per_s_per_user: float
    tokens_per_s_per_gpu: float
    decode_comm_share: float
    time_to_first_token_s: float
    """Prefill of one batch of prompts (communication included, no queueing)."""


def serving_estimate(model: str, fabric: Fabric, *, tp_size: int, batch: int = 1, prompt_len: int = 1024,
                     dtype: str = "fp16", algorithm: str = "auto") -> ServingEstimate:
    """Decode and prefill of one TP group, summarised for a decision table.

    Parameters
    ----------
    model : str
        Model preset.
    fabric : Fabric
        The GPUs (with their ``gpu``) and how they are connected.
    tp_size : int
        TP degree.
    batch : int
        Concurrent sequences.
    prompt_len : int
        Prompt tokens per sequence; decode reads a KV cache of that length.
    dtype : str
        Weights, activations and KV cache dtype.
    algorithm : str
        All_reduce algorithm (``one_shot``: an inference engine's custom all_reduce), as
        :func:`gpucomm.model.cost.collective_cost`.

    Returns
    -------
    ServingEstimate

    Raises
    ------
    GpucommError
        Any error of :func:`gpucomm.model.tp.tp_step`.

    Examples
    --------
    >>> from gpucomm.model.fabric import make_fabric
    >>> e = serving_estimate("llama-3-8b", make_fabric("pcie4", p2p=False, gpu="rtx_4090"), tp_size=1)
    >>> e.fits_memory, e.decode_comm_share
    (True, 0.0)
    """
    common = dict(fabric=fabric, tp_size=tp_size, batch=batch, prompt_len=prompt_len, dtype=dtype, algorithm=algorithm)
    dec = tp_step(model, phase="decode", **common)
    pre = tp_step(model, phase="prefill", **common)
    return ServingEstimate(fabric, get_model(model).key, tp_size, batch, dec.fits_memory, dec.mem_bytes_per_gpu,
                           get_gpu(_gpu_of(fabric)).mem_bytes, dec, pre, dec.tokens_per_s_per_user, dec.tokens_per_s_per_gpu,
                           dec.comm_share, pre.time_per_pass_s)


@dataclass(frozen=True)
class RequestThroughput:
    """One batch of requests served start to finish by one TP group. Times in s, rates in tokens/s.

    Attributes
    ----------
    prefill : TPStep
        The prefill of the whole batch (``batch x isl`` tokens), communication included.
    decode : TPStep
        One decode step at the mean context length ``isl + osl / 2``.
    output_len : int
        Output tokens per request (``osl``): decode steps of the batch.
    request_s : float
        ``prefill_s + osl x decode_step_s``: the batch from first prompt token to last output token.
    tokens_per_s_per_user : float
        Decode speed one user sees: ``1 / decode_step_s``.
    tokens_per_s_per_gpu : float
        Output tokens per second per GPU: ``batch x osl / request_s / tp_size``.
    """

    prefill: TPStep
    decode: TPStep
    output_len: int
    request_s: float
    tokens_per_s_per_user: float
    tokens_per_s_per_gpu: float

    @property
    def prefill_s(self) -> float:
        """The prefill pass, in s."""
        return self.prefill.time_per_pass_s

    @property
    def decode_step_s(self) -> float:
        """One decode pass at the mean context, in s."""
        return self.decode.time_per_pass_s

    @property
    def prefill_comm_share(self) -> float:
        """Share of the prefill spent in all_reduce."""
        return self.prefill.comm_share

    @property
    def decode_comm_share(self) -> float:
        """Share of a decode step spent in all_reduce."""
        return self.decode.comm_share

    @property
    def fits_memory(self) -> bool:
        """Whether weights and KV cache of the batch fit in each GPU's memory."""
        return self.decode.fits_memory


def request_throughput(model: str, fabric: Fabric, *, tp_size: int, batch: int, isl: int, osl: int,
                       dtype: str = "fp16", algorithm: str = "auto") -> RequestThroughput:
    """Output tokens/s per GPU of a batch served start to finish (prefill, then ``osl`` decode steps).

    Parameters
    ----------
    model : str
        Model preset (``"llama-3-70b"``).
    fabric : Fabric
        The GPUs (with their ``gpu``) and how they are connected (``topology="mesh", mesh_size=8`` for the
        point-to-point board of NVIDIA's Table 3).
    tp_size : int
        TP degree.
    batch : int
        Requests served together, >= 1.
    isl, osl : int
        Input (prompt) and output sequence lengths in tokens, >= 1.
    dtype : str
        Weights, activations and KV cache dtype.
    algorithm : str
        All_reduce algorithm, as :func:`gpucomm.model.cost.collective_cost`.

    Returns
    -------
    RequestThroughput

    Raises
    ------
    GpucommError
        Lengths below 1, or any error of :func:`gpucomm.model.tp.tp_step`.

    Notes
    -----
    A composition of :func:`gpucomm.model.tp.tp_step` (roofline compute + all_reduce, no overlap):
    ``request_s = prefill(batch, isl) + osl x decode(batch, context = isl + osl/2)``. The decode step is
    evaluated once, at the mean context: exact while the step time is linear in the context (it stays
    memory- or compute-bound over the output), which holds for the presets unless a batch sits right at
    the roofline's ridge. This is static
    batching: every request of the batch starts and ends together, which is what "throughput at a
    fixed batch size" (Table 3 of :data:`gpucomm.model.measurements.NVIDIA_BLOG_URL`) measures; in-flight batching overlaps the
    prefill of new requests with the decode of others and gives somewhat higher numbers.

    Examples
    --------
    >>> from gpucomm.model.fabric import make_fabric
    >>> switch = make_fabric("nvlink4", gpu="h200_sxm")
    >>> mesh = make_fabric("nvlink4", gpu="h200_sxm", topology="mesh", mesh_size=8)
    >>> a = request_throughput("llama-3-70b", switch, tp_size=2, batch=32, isl=8192, osl=256)
    >>> b = request_throughput("llama-3-70b", mesh, tp_size=2, batch=32, isl=8192, osl=256)
    >>> round(a.tokens_per_s_per_gpu / b.tokens_per_s_per_gpu, 1)
    1.4
    """
    for name, value in (("input length", isl), ("output length", osl)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GpucommError(f"{name} {value!r} is not valid: expected a positive integer number of tokens")
    common = dict(fabric=fabric, tp_size=tp_size, batch=batch, prompt_len=isl, dtype=dtype, algorithm=algorithm)
    pre = tp_step(model, phase="prefill", **common)
    dec = tp_step(model, phase="decode", context_len=isl + osl // 2, **common)
    request_s = pre.time_per_pass_s + osl * dec.time_per_pass_s
    return RequestThroughput(pre, dec, osl, request_s, dec.tokens_per_s_per_user, batch * osl / request_s / tp_size)


# --- training ---------------------------------------------------------------------------------------------

def training_compute_s(model: str, *, gpu: str, num_gpus: int, global_batch_tokens: int, mfu: float = LLAMA3_MFU) -> float:
    """Compute time of one training step, in s: ``6 x params x tokens / (num_gpus x peak x mfu)``.

    Parameters
    ----------
    model : str
        Model preset (``params`` = :func:`gpucomm.model.training.model_params`).
    gpu : str
        GPU key; its dense BF16 (else FP16) tensor FLOP/s is the peak.
    num_gpus : int
        GPUs sharing the step's work, >= 1.
    global_batch_tokens : int
        Tokens per optimizer step, >= 1.
    mfu : float
        Model FLOP/s utilization, 0 < mfu <= 1 (default :data:`LLAMA3_MFU`).

    Returns
    -------
    float
        Seconds.

    Raises
    ------
    GpucommError
        Unknown model or GPU, a GPU without FLOP/s in the catalog, counts below 1, mfu outside (0, 1].

    Notes
    -----
    6 FLOPs per parameter per token (Kaplan et al., arXiv:2001.08361, sec. 2.1), attention FLOPs neglected.

    Examples
    --------
    >>> round(training_compute_s("llama-3-8b", gpu="h100_sxm5", num_gpus=8, global_batch_tokens=8 * 8192), 2)
    1.0
    """
    spec = get_gpu(gpu)
    peak = spec.peak_16bit_flops_per_s
    if not peak:
        raise GpucommError(f"GPU {spec.key!r} has no dense FP16/BF16 FLOP/s in the catalog: expected a GPU with one")
    for name, value in (("number of GPUs", num_gpus), ("global batch tokens", global_batch_tokens)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GpucommError(f"{name} {value!r} is not valid: expected a positive integer")
    if not 0 < mfu <= 1:
        raise GpucommError(f"MFU {mfu!r} is not valid: expected 0 < mfu <= 1")
    flops = TRAINING_FLOPS_PER_PARAM_PER_TOKEN * model_params(model) * global_batch_tokens
    return flops / (num_gpus * peak * mfu)


def training_memory_bytes_per_gpu(model: str, strategy: str, *, num_gpus: int) -> float:
    """Weights, gradients and Adam state per GPU (activations excluded), in bytes.

    ``dp``: every GPU holds all 16 bytes per parameter. ``fsdp`` (ZeRO-3), ``tp`` and ``pp``: the 16 bytes
    per parameter are split over ``num_gpus``.

    Parameters
    ----------
    model : str
        Preset key of :data:`gpucomm.model.tp.MODELS`.
    strategy : {"dp", "fsdp", "pp", "tp"}
        Training strategy, as :func:`gpucomm.model.training.step_comm`.
    num_gpus : int
        GPUs the state is split over (ignored for ``dp``), >= 1.

    Returns
    -------
    float
        ``16 x Psi`` bytes for ``dp``, ``16 x Psi / num_gpus`` otherwise, with ``Psi`` from
        :func:`gpucomm.model.training.model_params` and 16 bytes per parameter for mixed-precision Adam
        (:data:`ADAM_MIXED_PRECISION_BYTES_PER_PARAM`, ZeRO arXiv:1910.02054, sec. 3.1). The even split
        is ZeRO-3's (sec. 5.3); for TP and PP it assumes every GPU holds an equal share of the layers.

    Raises
    ------
    GpucommError
        Unknown strategy or model; ``num_gpus`` < 1.

    Examples
    --------
    ZeRO's example (sec. 3.1): a 7.5 B-parameter model needs 120 GB with plain DP.

    >>> round(training_memory_bytes_per_gpu("llama-3-8b", "dp", num_gpus=8) / 1e9)
    128
    >>> round(training_memory_bytes_per_gpu("llama-3-8b", "fsdp", num_gpus=8) / 1e9)
    16
    """
    if strategy not in STRATEGIES:
        raise GpucommError(f"unknown strategy {strategy!r}: expected one of {', '.join(STRATEGIES)}")
    if isinstance(num_gpus, bool) or not isinstance(num_gpus, int) or num_gpus < 1:
        raise GpucommError(f"number of GPUs {num_gpus!r} is not valid: expected a positive integer")
    total = ADAM_MIXED_PRECISION_BYTES_PER_PARAM * model_params(model)
    return total if strategy == "dp" else total / num_gpus


@dataclass(frozen=True)
class TrainingCommEstimate:
    """One strategy's communication in one training step, next to the step's compute. Times in s."""

    strategy: str
    comm: StepComm
    compute_s: float
    exposed_s: float
    """Communication left visible: all of it, or what exceeds the backward pass when overlapped."""
    overlapped: bool
    mem_bytes_per_gpu: float


def training_comm_estimate(model: str, strategy: str, *, fabric: Fabric, num_gpus: int, tokens_per_gpu: int = 8192,
                           seq_len: int = 8192, overlap: bool = False, mfu: float = LLAMA3_MFU) -> TrainingCommEstimate:
    """Communication of one training step for one strategy, with overlap against the backward pass.

    Parameters
    ----------
    model, strategy : str
        As :func:`gpucomm.model.training.step_comm`.
    fabric : Fabric
        The GPUs (their ``gpu`` sets the compute time) and how they are connected, nodes and network included.
    num_gpus : int
        GPUs in the group, >= 2.
    tokens_per_gpu : int
        Tokens each GPU's share of the step holds (weak scaling: the global batch is ``num_gpus x tokens_per_gpu``).
    seq_len : int
        Sequence length (pipeline micro-batches of one sequence).
    overlap : bool
        Overlap communication with the backward pass, for :data:`OVERLAPPABLE_STRATEGIES` only.
    mfu : float
        For the compute time (:func:`training_compute_s`).

    Returns
    -------
    TrainingCommEstimate

    Raises
    ------
    GpucommError
        A fabric without a GPU; any error of :func:`gpucomm.model.training.step_comm` or :func:`training_compute_s`.

    Examples
    --------
    >>> from gpucomm.model.fabric import make_fabric
    >>> h100 = make_fabric("nvlink4", gpu="h100_sxm5")
    >>> e = training_comm_estimate("llama-3-8b", "dp", fabric=h100, num_gpus=8, overlap=True)
    >>> e.exposed_s < e.comm.time_s
    True
    """
    tokens = num_gpus * tokens_per_gpu
    compute = training_compute_s(model, gpu=_gpu_of(fabric), num_gpus=num_gpus, global_batch_tokens=tokens, mfu=mfu)
    comm = step_comm(model, strategy, num_gpus=num_gpus, fabric=fabric, global_batch_tokens=tokens, seq_len=seq_len)
    hide = overlap and strategy in OVERLAPPABLE_STRATEGIES
    exposed = max(0.0, comm.time_s - BACKWARD_SHARE_OF_COMPUTE * compute) if hide else comm.time_s
    return TrainingCommEstimate(strategy, comm, compute, exposed, hide,
                                training_memory_bytes_per_gpu(model, strategy, num_gpus=num_gpus))


@dataclass(frozen=True)
class HybridStepEstimate:
    """TP inside each node, DP across nodes: one training step. Times in s."""

    tp: StepComm
    dp: StepComm
    compute_s: float
    comm_s: float
    exposed_s: float
    comm_share: float
    """Exposed communication / (compute + exposed communication)."""


def hybrid_step_estimate(model: str, *, fabric: Fabric, gpus_per_node: int = 8, global_batch_tokens: int = 16 * 2**20,
                         seq_len: int = 8192, overlap_dp: bool = True, mfu: float = LLAMA3_MFU) -> HybridStepEstimate:
    """One pre-training step with TP over the GPUs of a node and DP across the fabric's nodes.

    Parameters
    ----------
    model : str
        Model preset.
    fabric : Fabric
        The GPUs (their ``gpu`` sets the compute time), the link inside a node, and ``num_nodes`` (= DP
        replicas, >= 2) over ``network`` with ``nics_per_node`` (default one per GPU).
    gpus_per_node : int
        TP degree, >= 2.
    global_batch_tokens : int
        Tokens per optimizer step (default 16 Mi, Llama 3 405B's batch, arXiv:2407.21783 Table 4).
    seq_len : int
        Sequence length.
    overlap_dp : bool
        Overlap the DP all_reduce with the backward pass.
    mfu : float
        For the compute time.

    Returns
    -------
    HybridStepEstimate

    Raises
    ------
    GpucommError
        Fewer than 2 nodes or GPUs per node; a batch smaller than one sequence per node; errors of the callees.

    Notes
    -----
    TP: :func:`gpucomm.model.training.step_comm` with ``"tp"`` over ``global_batch_tokens / num_nodes`` tokens per
    node. DP: each GPU all_reduces the gradients of its 1/``gpus_per_node`` shard with the same-rank GPU of
    every other node (one rail). All ``gpus_per_node`` rails run at once and share the node's NICs: that is the
    network stage of a hierarchical all_reduce of the full gradient over all GPUs, which
    :func:`gpucomm.model.training.step_comm` with ``"dp"`` and ``num_nodes`` computes (its intra-node
    reduce-scatter/all-gather, pipelined with the network stage, adds little).

    Examples
    --------
    >>> from gpucomm.model.fabric import make_fabric
    >>> cluster = make_fabric("nvlink4", gpu="h100_sxm5", num_nodes=16, network="ib_ndr")
    >>> e = hybrid_step_estimate("llama-3-70b", fabric=cluster)
    >>> 0 < e.comm_share < 1
    True
    """
    num_nodes = fabric.num_nodes
    check_int(num_nodes, "number of nodes", 2)
    check_int(gpus_per_node, "GPUs per node", 2)
    per_node = global_batch_tokens // num_nodes
    if per_node < seq_len:
        raise GpucommError(f"global batch of {global_batch_tokens} tokens over {num_nodes} nodes is less than one "
                           f"{seq_len}-token sequence per node: expected at least {num_nodes * seq_len} tokens")
    num_gpus = num_nodes * gpus_per_node
    compute = training_compute_s(model, gpu=_gpu_of(fabric), num_gpus=num_gpus, global_batch_tokens=global_batch_tokens,
                                 mfu=mfu)
    tp = step_comm(model, "tp", num_gpus=gpus_per_node, fabric=fabric.one_node(), global_batch_tokens=per_node,
                   seq_len=seq_len)
    dp = step_comm(model, "dp", num_gpus=num_gpus, fabric=fabric)
    dp_exposed = max(0.0, dp.time_s - BACKWARD_SHARE_OF_COMPUTE * compute) if overlap_dp else dp.time_s
    exposed = tp.time_s + dp_exposed
    return HybridStepEstimate(tp, dp, compute, tp.time_s + dp.time_s, exposed, exposed / (compute + exposed))
