"""Tensor-parallel (TP) communication of a transformer, Megatron style.

In Megatron-LM tensor parallelism each transformer layer splits its attention and its
MLP so that, in the forward pass, each ends with one all_reduce of the layer's
activations: two all_reduces per layer (Shoeybi et al., "Megatron-LM", arXiv:1909.08053,
sec. 3, Fig. 3: operators f and g). Each all_reduce carries the full activation tensor
``tokens x hidden_size`` in the activation dtype.

The formulas of the layer :mod:`gpucomm.measure.tp_layer` measures live here too: its FLOPs per rank
(:func:`tp_layer_flops_per_rank`), the size of its all_reduce (:func:`tp_layer_all_reduce_bytes`) and
the time of the layer whose all_reduces overlap compute (:func:`overlapped_time_s`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpucomm import GpucommError
from gpucomm.model.catalog import lookup
from gpucomm.model.collectives import check_num_ranks
from gpucomm.model.cost import CollectiveCost, collective_cost
from gpucomm.model.dtypes import element_type
from gpucomm.model.fabric import Fabric, as_fabric
from gpucomm.model.hardware import Link
from gpucomm.model.units import check_int

DTYPE_BYTES = {s: element_type(s).size_bytes for s in ("fp32", "float32", "fp16", "float16", "bf16", "bfloat16", "fp8")}
"""Bytes per element of the activation dtypes, by the spellings accepted here (sizes: :mod:`gpucomm.model.dtypes`)."""

ALL_REDUCES_PER_LAYER_FORWARD = 2
"""Megatron-LM TP forward: one all_reduce after attention, one after the MLP (arXiv:1909.08053, Fig. 3)."""


@dataclass(frozen=True)
class ModelConfig:
    """The transformer shape that sets TP communication (fields as in Hugging Face ``config.json``)."""

    key: str
    name: str
    num_layers: int
    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    num_key_value_heads: int
    vocab_size: int
    source: str


MODELS: dict[str, ModelConfig] = {
    m.key: m
    for m in (
        ModelConfig("llama-3-8b", "Llama 3 / 3.1 8B", 32, 4096, 14336, 32, 8, 128256,
                    "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json"),
        ModelConfig("llama-3-70b", "Llama 3 / 3.1 / 3.3 70B", 80, 8192, 28672, 64, 8, 128256,
                    "https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json"),
        ModelConfig("llama-3.1-405b", "Llama 3.1 405B", 126, 16384, 53248, 128, 8, 128256,
                    "https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json"),
    )
}
"""Model presets; each cites its Hugging Face config (gated; values checked in verbatim copies)."""


def get_model(key: str | ModelConfig) -> ModelConfig:
    """Look up a model preset by key (case-insensitive); a :class:`ModelConfig` is returned unchanged.

    Parameters
    ----------
    key : str or ModelConfig
        Key of :data:`MODELS` (``"llama-3-70b"``) or a config.

    Returns
    -------
    ModelConfig
        The preset, whose values come from the Hugging Face ``config.json`` in its ``source``.

    Raises
    ------
    GpucommError
        If the key is unknown; the message lists the accepted keys.
    """
    return lookup(MODELS, key, what='model', entry_type=ModelConfig)


def dtype_bytes(dtype: str) -> int:
    """Bytes per element of ``dtype``.

    Parameters
    ----------
    dtype : str
        A key of :data:`DTYPE_BYTES`: ``fp32``/``float32``, ``fp16``/``float16``, ``bf16``/``bfloat16``
        or ``fp8`` (exact spelling).

    Returns
    -------
    int
        4, 2 or 1 bytes: IEEE 754 binary32 and binary16, bfloat16 (16 bits) and FP8 (E4M3/E5M2,
        Micikevicius et al., "FP8 Formats for Deep Learning", arXiv:2209.05433).

    Raises
    ------
    GpucommError
        If the dtype is unknown; the message lists the accepted names.
    """
    if dtype not in DTYPE_BYTES:
        raise GpucommError(f"unknown dtype {dtype!r}: expected one of {', '.join(DTYPE_BYTES)}")
    return DTYPE_BYTES[dtype]


def check_tp_size(model: str | ModelConfig, tp_size: int) -> int:
    """Return ``tp_size`` if it splits the model's attention heads evenly, else raise.

    Megatron-LM splits attention by heads, so the TP degree must divide ``num_attention_heads``
    (and the KV heads are split, or replicated when there are fewer than ``tp_size``).

    Parameters
    ----------
    model : str or ModelConfig
        Preset key or config.
    tp_size : int
        TP degree to check.

    Returns
    -------
    int
        ``tp_size`` unchanged: a divisor of ``num_attention_heads`` that also divides
        ``num_key_value_heads`` when it is smaller than them (Megatron-LM, arXiv:1909.08053, sec. 3:
        attention is split by heads).

    Raises
    ------
    GpucommError
        Unknown model; ``tp_size`` not an integer degree as above (the message lists the valid ones).
    """
    cfg = get_model(model)
    divisors = [d for d in range(1, cfg.num_attention_heads + 1) if cfg.num_attention_heads % d == 0
                and cfg.num_key_value_heads % min(d, cfg.num_key_value_heads) == 0]
    if isinstance(tp_size, bool) or not isinstance(tp_size, int) or tp_size not in divisors:
        raise GpucommError(f"TP degree {tp_size!r} does not divide the {cfg.num_attention_heads} attention heads of "
                           f"{cfg.key}: expected one of {', '.join(map(str, divisors))}")
    return tp_size


def tp_all_reduce_bytes(num_tokens: int, hidden_size: int, *, dtype: str = "fp16") -> int:
    """Size in bytes of one TP all_reduce: the activations ``num_tokens x hidden_size``.

    Parameters
    ----------
    num_tokens : int
        Tokens in the batch (prompt tokens in prefill; batch size in decode), >= 1.
    hidden_size : int
        Model width (``hidden_size`` in ``config.json``), >= 1.
    dtype : str
        Activation dtype.

    Returns
    -------
    int
        ``num_tokens x hidden_size x dtype_bytes(dtype)`` bytes: the activation tensor each Megatron-LM
        all_reduce carries (arXiv:1909.08053, sec. 3, Fig. 3).

    Raises
    ------
    GpucommError
        If a count is not a positive integer or the dtype is unknown.

    Examples
    --------
    Llama-3-70B with a 4096-token prompt in FP16 (the example of Baobao Algorithm Notes' article on
    NVLink and Llama-3-70B TP=4 inference): 64 MiB.

    >>> tp_all_reduce_bytes(4096, 8192, dtype="fp16") / 2**20
    64.0
    """
    return _activation_bytes(num_tokens, hidden_size, dtype, dtype_bytes)


def _activation_bytes(num_tokens: int, hidden_size: int, dtype: str, bytes_of: Callable[[str], int]) -> int:
    """``num_tokens x hidden_size x bytes_of(dtype)``: the one formula of a TP all_reduce's size (counts checked first)."""
    for name, value in (("number of tokens", num_tokens), ("hidden size", hidden_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GpucommError(f"{name} {value!r} is not valid: expected a positive integer")
    return num_tokens * hidden_size * bytes_of(dtype)


# --- the measured TP layer (gpucomm.measure.tp_layer): its FLOPs, its all_reduce, overlap -------------

def tp_layer_flops_per_rank(hidden: int, ffn: int, tokens: int, *, num_ranks: int, attention: bool = False,
                            seq_len: int | None = None) -> float:
    """Floating-point operations of one rank's share of a Megatron-style TP layer's matrix products.

    The layer :func:`gpucomm.measure.tp_layer.run_tp_layer` measures: a column-parallel then a
    row-parallel linear (MLP), optionally after attention split by heads (Megatron-LM,
    arXiv:1909.08053, sec. 3, Fig. 3).

    Parameters
    ----------
    hidden, ffn, tokens : int
        Width ``h``, MLP inner width ``f`` and tokens ``T``.
    num_ranks : int
        Tensor-parallel degree ``N``.
    attention : bool
        Include the attention block.
    seq_len : int or None
        Tokens per sequence ``S`` for the attention scores (None: ``min(tokens, 64)``).

    Returns
    -------
    float
        FLOPs (one multiply-add = 2).

    Raises
    ------
    GpucommError
        If ``num_ranks`` is not a valid rank count (:func:`gpucomm.model.collectives.check_num_ranks`).

    Notes
    -----
    MLP: ``2 T h f / N`` per linear, two linears: ``4 T h f / N``. Attention: Q, K, V and the
    output projection ``8 T h^2 / N``, scores and weighted sum ``4 T S h / N`` (counted for the
    full ``S x S`` score matrix, as the math kernel computes it before the causal mask). Layer
    norms, GeLU, softmax and residuals are left out (a few FLOPs per element).

    Examples
    --------
    >>> tp_layer_flops_per_rank(1024, 4096, 256, num_ranks=2) / 1e9
    2.147483648
    """
    n = check_num_ranks(num_ranks)
    flops = 4.0 * tokens * hidden * ffn / n
    if attention:
        s = seq_len if seq_len is not None else min(tokens, 64)
        flops += 8.0 * tokens * hidden * hidden / n + 4.0 * tokens * s * hidden / n
    return flops


def _any_spelling_bytes(dtype: str) -> int:
    return element_type(str(dtype).lower()).size_bytes


def tp_layer_all_reduce_bytes(hidden: int, tokens: int, *, dtype: str = "float32") -> int:
    """Bytes of one all_reduce of the measured TP layer: the activations ``tokens x hidden``.

    The same tensor as :func:`tp_all_reduce_bytes` (arguments in the measured layer's order), with
    the dtype in any spelling of :mod:`gpucomm.model.dtypes` (torch names as the layer records them).

    Parameters
    ----------
    hidden, tokens : int
        Width ``h`` and tokens ``T``, >= 1.
    dtype : str
        Element type: ``float32``, ``bfloat16``..., ``bf16``, ``half`` (case-insensitive).

    Returns
    -------
    int
        ``tokens x hidden x`` the element's bytes.

    Raises
    ------
    GpucommError
        If a count is not a positive integer or the dtype is unknown.

    Examples
    --------
    >>> tp_layer_all_reduce_bytes(1024, 256) / 2**20
    1.0
    """
    return _activation_bytes(tokens, hidden, dtype, _any_spelling_bytes)


def overlapped_time_s(compute_s: float, comm_s: float, *, chunks: int) -> float:
    """Time of a layer whose all_reduces overlap compute over ``chunks`` equal chunks.

    Parameters
    ----------
    compute_s : float
        Compute of the whole layer (all chunks), seconds.
    comm_s : float
        All_reduces of the whole layer (all chunks), seconds.
    chunks : int
        Chunks ``C`` >= 1.

    Returns
    -------
    float
        ``max(compute, comm) + min(compute, comm) / C`` seconds.

    Raises
    ------
    GpucommError
        If ``chunks`` is not an integer >= 1 or a time is negative.

    Notes
    -----
    A two-stage pipeline (compute a chunk, then all_reduce it) over ``C`` equal chunks: the
    slower stage runs back to back, and the faster stage's first (or last) chunk cannot be
    hidden, as in the fill-and-drain cost of a pipeline. ``C = 1`` gives the serial
    ``compute + comm``; large ``C`` approaches ``max(compute, comm)``, but each chunk pays the
    all_reduce's fixed cost ``alpha`` again, so ``comm_s`` itself grows with ``C``.

    Examples
    --------
    >>> overlapped_time_s(8.0, 2.0, chunks=4)
    8.5
    >>> overlapped_time_s(8.0, 2.0, chunks=1)
    10.0
    """
    check_int(chunks, "chunks", 1)
    if compute_s < 0 or comm_s < 0:
        raise GpucommError(f"times must be >= 0 s, got compute {compute_s!r} and comm {comm_s!r}")
    return max(compute_s, comm_s) + min(compute_s, comm_s) / chunks


@dataclass(frozen=True)
class TPForwardComm:
    """All-reduce communication of one TP forward pass (all layers). Sizes in bytes, times in s.

    Attributes
    ----------
    model : str
        Preset key.
    tp_size : int
        TP degree.
    num_tokens : int
        Tokens processed in the pass.
    msg_bytes : int
        Size of each all_reduce: the activations of ``num_tokens`` tokens.
    all_reduces_per_pass : int
        All_reduces in the pass: :data:`ALL_REDUCES_PER_LAYER_FORWARD` per layer, 0 at TP=1.
    per_all_reduce : CollectiveCost or None
        Cost of one all_reduce; None at TP=1 (one GPU holds every layer whole: nothing to exchange).
    comm_per_pass_s : float
        ``all_reduces_per_pass x per_all_reduce.time_s``: communication of the whole pass, no overlap.
    """

    model: str
    tp_size: int
    num_tokens: int
    msg_bytes: int
    all_reduces_per_pass: int
    per_all_reduce: CollectiveCost | None
    comm_per_pass_s: float


def tp_forward_comm(model: str | ModelConfig, *, tp_size: int, num_tokens: int, fabric: Fabric | str | Link,
                    dtype: str = "fp16", algorithm: str = "auto") -> TPForwardComm:
    """All_reduce count, size and time of one TP forward pass over ``num_tokens`` tokens.

    Parameters
    ----------
    model : str or ModelConfig
        Preset key (``"llama-3-70b"``) or config.
    tp_size : int
        Tensor-parallel degree (GPUs sharing each layer), >= 1.
    num_tokens : int
        Tokens processed in the pass (prompt length x batch in prefill).
    fabric : Fabric, str or Link
        How the TP GPUs are connected (:func:`gpucomm.model.fabric.make_fabric`; a link key for a plain link).
    dtype : str
        Activation dtype.
    algorithm : str
        All_reduce algorithm, as :func:`gpucomm.model.cost.collective_cost` (``auto``: NCCL's choice;
        ``one_shot``: an inference engine's custom all_reduce).

    Returns
    -------
    TPForwardComm
        ``all_reduces_per_pass = 2 x num_layers``; ``comm_per_pass_s = all_reduces_per_pass x per-all_reduce
        time`` (no overlap with compute). At TP=1 no all_reduce is issued (Megatron-LM's all_reduce of a
        one-GPU group is the identity): 0 all_reduces, 0 s, ``per_all_reduce`` None.

    Raises
    ------
    GpucommError
        For bad sizes, unknown model or dtype, or a fabric the cost model refuses.

    Examples
    --------
    >>> comm = tp_forward_comm("llama-3-70b", tp_size=4, num_tokens=4096, fabric="nvlink3")
    >>> comm.all_reduces_per_pass, comm.msg_bytes // 2**20
    (160, 64)
    >>> tp_forward_comm("llama-3-8b", tp_size=1, num_tokens=128, fabric="nvlink4").comm_per_pass_s
    0.0
    """
    cfg = get_model(model)
    check_tp_size(cfg, tp_size)
    fabric = as_fabric(fabric)
    msg = tp_all_reduce_bytes(num_tokens, cfg.hidden_size, dtype=dtype)
    if tp_size == 1:
        return TPForwardComm(cfg.key, tp_size, num_tokens, msg, 0, None, 0.0)
    cost = collective_cost("all_reduce", msg, num_ranks=tp_size, fabric=fabric, algorithm=algorithm)
    count = ALL_REDUCES_PER_LAYER_FORWARD * cfg.num_layers
    return TPForwardComm(cfg.key, tp_size, num_tokens, msg, count, cost, count * cost.time_s)


# --- TP inference: compute from a roofline, communication from the cost model -------------------------

def layer_params(model: str | ModelConfig) -> int:
    """Weights of one transformer layer (attention + SwiGLU MLP), weight matrices only (no norms).

    ``hidden x (hidden + 2 x kv_dim)`` for Q, K, V, ``hidden x hidden`` for the output
    projection, ``3 x hidden x intermediate`` for the gated MLP, with
    ``kv_dim = num_key_value_heads x hidden / num_attention_heads`` (grouped-query attention).

    Parameters
    ----------
    model : str or ModelConfig
        Preset key or config.

    Returns
    -------
    int
        Number of parameters (a count, not bytes).

    Raises
    ------
    GpucommError
        If the model is unknown.

    References
    ----------
    Shapes from the Llama 3 ``config.json`` files cited in :data:`MODELS`. Ainslie et al., "GQA",
    arXiv:2305.13245, sec. 2.2: K and V have ``num_key_value_heads`` heads of ``hidden / num_attention_heads``
    each. Shazeer, "GLU Variants Improve Transformer", arXiv:2002.05202, sec. 2: the SwiGLU FFN has three
    weight matrices (W, V, W2), each ``hidden x intermediate``.

    Examples
    --------
    >>> round(layer_params("llama-3-70b") * 80 / 1e9, 1)  # + embeddings and head = 70.6 B
    68.5
    """
    cfg = get_model(model)
    kv_dim = cfg.num_key_value_heads * cfg.hidden_size // cfg.num_attention_heads
    attn = cfg.hidden_size * (cfg.hidden_size + 2 * kv_dim) + cfg.hidden_size * cfg.hidden_size
    mlp = 3 * cfg.hidden_size * cfg.intermediate_size
    return attn + mlp


def head_params(model: str | ModelConfig) -> int:
    """Weights of the output head (the LM head that turns the last hidden state into logits): ``vocab x hidden``.

    Parameters
    ----------
    model : str or ModelConfig
        Preset key or config.

    Returns
    -------
    int
        Number of parameters (a count, not bytes). Every preset has ``"tie_word_embeddings": false`` in its
        ``config.json`` (:data:`MODELS`): the head is its own matrix, read in full at every decode step, while
        the input embedding is only looked up (one row per token).

    Raises
    ------
    GpucommError
        If the model is unknown.

    Examples
    --------
    >>> head_params("llama-3-8b") / 1e9  # with 6.98 B in its 32 layers: 7 % of what a decode step reads
    0.525336576
    """
    cfg = get_model(model)
    return cfg.vocab_size * cfg.hidden_size


def kv_bytes_per_token_per_layer(model: str | ModelConfig, *, dtype: str = "fp16") -> int:
    """KV-cache bytes of one token in one layer: ``2 x kv_dim x bytes`` (K and V).

    Parameters
    ----------
    model : str or ModelConfig
        Preset key or config.
    dtype : str
        KV-cache dtype (:data:`DTYPE_BYTES`).

    Returns
    -------
    int
        ``2 x num_key_value_heads x (hidden / num_attention_heads) x dtype_bytes(dtype)`` bytes: one K and
        one V vector per KV head (grouped-query attention, Ainslie et al., arXiv:2305.13245, sec. 2.2).

    Raises
    ------
    GpucommError
        Unknown model or dtype.

    Examples
    --------
    >>> kv_bytes_per_token_per_layer("llama-3-70b", dtype="fp16")  # 2 x 8 heads x 128 x 2 bytes
    4096
    """
    cfg = get_model(model)
    return 2 * cfg.num_key_value_heads * cfg.hidden_size // cfg.num_attention_heads * dtype_bytes(dtype)


@dataclass(frozen=True)
class TPStep:
    """One forward pass (a prefill, or one decode step) of a TP group. Times in s; each says per layer or per pass."""

    model: str
    gpu: str
    tp_size: int
    phase: str
    batch: int
    num_tokens: int
    """Tokens processed in this pass (batch x prompt in prefill, batch in decode)."""
    context_len: int
    num_layers: int
    """Transformer layers in the pass."""
    compute_per_layer_s: float
    """Roofline time of one layer on one GPU: max(FLOPs / peak, bytes / HBM bandwidth)."""
    memory_bound: bool
    comm_per_layer_s: float
    """All_reduce time of one layer (2 all_reduces); 0 at TP=1."""
    head_s: float
    """Roofline time of the output head on one GPU, once per pass (after the last layer)."""
    msg_bytes: int
    """Size of each all_reduce (the activations of ``num_tokens`` tokens)."""
    all_reduce: CollectiveCost | None
    """Cost of one all_reduce; None at TP=1 (nothing to exchange)."""
    time_per_pass_s: float
    """Whole pass: layers x (compute + communication) + output head, no overlap."""
    comm_share: float
    """Communication / whole pass: ``comm_per_pass_s / time_per_pass_s``."""
    tokens_per_s_per_user: float
    """Decode: 1 / pass time. Prefill: prompt tokens / pass time."""
    tokens_per_s_per_gpu: float
    mem_bytes_per_gpu: float
    """Weights (layers, embedding, head) and KV cache held by each GPU, in bytes (activations and framework
    overhead excluded: a lower bound)."""
    fits_memory: bool
    """Whether ``mem_bytes_per_gpu`` fits the GPU's memory."""

    @property
    def compute_per_pass_s(self) -> float:
        """Roofline compute of the whole pass: ``num_layers x compute_per_layer_s + head_s``, in s."""
        return self.num_layers * self.compute_per_layer_s + self.head_s

    @property
    def comm_per_pass_s(self) -> float:
        """All_reduce time of the whole pass: ``num_layers x comm_per_layer_s``, in s (0 at TP=1)."""
        return self.num_layers * self.comm_per_layer_s


def tp_step(model: str | ModelConfig, *, fabric: Fabric, tp_size: int, phase: str = "decode", batch: int = 1,
            prompt_len: int = 1024, context_len: int | None = None, dtype: str = "fp16",
            algorithm: str = "auto") -> TPStep:
    """Roofline compute + all_reduce communication of one TP forward pass.

    Parameters
    ----------
    model : str or ModelConfig
        Model preset.
    fabric : Fabric
        The TP GPUs and how they are connected; its ``gpu`` (:func:`gpucomm.model.fabric.make_fabric` with
        ``gpu=``, or :func:`gpucomm.model.fabric.system_fabric`) needs dense FP16/BF16 FLOP/s and memory
        bandwidth in the catalog.
    tp_size : int
        TP degree, >= 1 (a divisor of the attention heads).
    phase : {"prefill", "decode"}
        Prefill processes ``batch x prompt_len`` tokens at once; decode one token per sequence.
    batch : int
        Sequences in flight, >= 1.
    prompt_len : int
        Prompt tokens per sequence (prefill), >= 1.
    context_len : int, optional
        Tokens already in the KV cache during decode (default ``prompt_len``).
    dtype : str
        Weights, activations and KV cache dtype.
    algorithm : str
        All_reduce algorithm, as :func:`gpucomm.model.cost.collective_cost`.

    Returns
    -------
    TPStep

    Raises
    ------
    GpucommError
        Unknown model or phase; a fabric without a GPU, or a GPU without FLOP/s or bandwidth in the
        catalog; a TP degree that does not divide the attention heads or does not fit the fabric; counts below 1.

    Notes
    -----
    Per layer and GPU: FLOPs = ``2 x params x tokens / tp`` (one multiply-add per weight per token) plus
    attention ``4 x tokens x context x hidden / tp`` (scores and weighted sum); bytes = weights / tp +
    KV cache read / tp. Compute time = max(FLOPs / peak FLOP/s, bytes / memory bandwidth): the roofline
    (Williams, Waterman, Patterson, CACM 52(4), 2009), an upper bound on speed. Once per pass, the output
    head (:func:`head_params`, vocab-parallel over the TP group as in Megatron-LM's and vLLM's parallel LM head)
    adds its own roofline term: bytes = head / tp, FLOPs = ``2 x head x batch / tp``, for the one token per
    sequence that is sampled (each decode token, the last prompt token in prefill). In decode it is about 7 % of
    the weight bytes of Llama-3-8B. The input embedding lookup reads ``tokens`` rows only and is left out, as is
    the gather of the logits across the TP group. Communication: two all_reduces of ``tokens x hidden`` per layer
    (Megatron-LM, arXiv:1909.08053). No overlap.

    Examples
    --------
    >>> from gpucomm.model.fabric import make_fabric
    >>> a100 = make_fabric("nvlink3", gpu="a100_sxm4_80gb")
    >>> s = tp_step("llama-3-70b", fabric=a100, tp_size=4, phase="decode", batch=1)
    >>> s.memory_bound, s.msg_bytes
    (True, 16384)
    """
    from gpucomm.model.hardware.gpus import GPUS, get_gpu

    cfg = get_model(model)
    fabric = as_fabric(fabric)
    if fabric.gpu is None:
        raise GpucommError(f"no GPU in the fabric ({fabric.label}): expected a fabric with its GPU, e.g. "
                           f"make_fabric({fabric.link.key!r}, gpu='h100_sxm5') or system_fabric('dgx_h100')")
    spec = get_gpu(fabric.gpu)
    peak = spec.peak_16bit_flops_per_s
    if not spec.has_roofline:
        raise GpucommError(f"GPU {spec.key!r} has no FLOP/s or memory bandwidth in the catalog: expected one of "
                           + ", ".join(k for k, g in GPUS.items() if g.has_roofline))
    if phase not in ("prefill", "decode"):
        raise GpucommError(f"unknown phase {phase!r}: expected prefill or decode")
    for name, value in (("TP degree", tp_size), ("batch", batch), ("prompt length", prompt_len)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GpucommError(f"{name} {value!r} is not valid: expected a positive integer")
    check_tp_size(cfg, tp_size)
    context = prompt_len if context_len is None else context_len
    tokens = batch * prompt_len if phase == "prefill" else batch
    attn_context = prompt_len if phase == "prefill" else context
    nbytes = dtype_bytes(dtype)
    flops = (2 * layer_params(cfg) * tokens + 4 * tokens * attn_context * cfg.hidden_size) / tp_size
    kv_read = kv_bytes_per_token_per_layer(cfg, dtype=dtype) * batch * context if phase == "decode" else 0
    mem_bytes = (layer_params(cfg) * nbytes + kv_read) / tp_size
    t_flops, t_mem = flops / peak, mem_bytes / spec.mem_bw_bytes_per_s
    compute_per_layer_s = max(t_flops, t_mem)
    msg = tp_all_reduce_bytes(tokens, cfg.hidden_size, dtype=dtype)
    ar = None  # TP=1: one GPU holds every layer whole, no all_reduce is issued
    comm_per_layer_s = 0.0
    if tp_size > 1:
        ar = collective_cost("all_reduce", msg, num_ranks=tp_size, fabric=fabric, algorithm=algorithm)
        comm_per_layer_s = ALL_REDUCES_PER_LAYER_FORWARD * ar.time_s
    # the output head, once per pass, for the one token per sequence that is sampled (see Notes)
    head_bytes, head_flops = head_params(cfg) * nbytes / tp_size, 2 * head_params(cfg) * batch / tp_size
    head_s = max(head_flops / peak, head_bytes / spec.mem_bw_bytes_per_s)
    time_per_pass_s = cfg.num_layers * (compute_per_layer_s + comm_per_layer_s) + head_s
    per_user = (1.0 if phase == "decode" else prompt_len) / time_per_pass_s
    # layers + input embedding + output head (vocab-parallel in Megatron, so split over tp as well)
    held = (cfg.num_layers * (layer_params(cfg) * nbytes + kv_bytes_per_token_per_layer(cfg, dtype=dtype) * batch * context)
            + 2 * head_params(cfg) * nbytes) / tp_size
    return TPStep(cfg.key, spec.key, tp_size, phase, batch, tokens, context, cfg.num_layers, compute_per_layer_s,
                  t_mem >= t_flops, comm_per_layer_s, head_s, msg, ar, time_per_pass_s,
                  cfg.num_layers * comm_per_layer_s / time_per_pass_s, per_user,
                  tokens / time_per_pass_s / tp_size, held, spec.mem_bytes is not None and held <= spec.mem_bytes)


def tp_speedup(model: str | ModelConfig, *, fabric: Fabric, tp_size: int, **kwargs) -> float:
    """Speed-up of one pass at TP degree ``tp_size`` over one GPU: ``step(TP=1) / step(TP=tp_size)``.

    Compute shrinks as 1/tp, communication does not: Amdahl's law with a serial part that *grows*
    with tp (Amdahl, AFIPS 1967).

    Parameters
    ----------
    model : str or ModelConfig
        Preset key or config.
    fabric : Fabric
        The TP GPUs (with their ``gpu``) and how they are connected, as :func:`tp_step`.
    tp_size : int
        TP degree to compare with one GPU.
    **kwargs
        ``phase``, ``batch``, ``prompt_len``, ``context_len``, ``dtype``, ``algorithm``, as :func:`tp_step`.

    Returns
    -------
    float
        ``tp_step(tp_size=1).time_per_pass_s / tp_step(tp_size).time_per_pass_s``; below 1 when TP slows the
        pass down.

    Raises
    ------
    GpucommError
        As :func:`tp_step`.
    """
    one = tp_step(model, fabric=fabric, tp_size=1, **kwargs)
    return one.time_per_pass_s / tp_step(model, fabric=fabric, tp_size=tp_size, **kwargs).time_per_pass_s


def sp_layer_comm(model: str | ModelConfig, *, tp_size: int, num_tokens: int, fabric: Fabric | str | Link,
                  dtype: str = "fp16", algorithm: str = "auto") -> tuple[CollectiveCost, CollectiveCost]:
    """Sequence parallelism: per layer forward, 2 all_gathers + 2 reduce_scatters instead of 2 all_reduces.

    Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models", arXiv:2205.05198,
    sec. 4.2.2: an all_reduce is a reduce_scatter followed by an all_gather, so for a ring the bytes on the wire
    are the same; with NVLink SHARP (``nvls``) the all_reduce moves fewer, the switch reducing in flight
    (:func:`gpucomm.model.cost.wire_bytes_per_link`), and the pair costs more. What changes in any case is that the
    norms and dropout between them run on 1/tp of the tokens.

    Parameters
    ----------
    model : str or ModelConfig
        Preset key or config.
    tp_size : int
        TP (and sequence-parallel) degree: the ranks of each collective.
    num_tokens : int
        Tokens in the pass, >= 1.
    fabric : Fabric, str or Link
        How the TP GPUs are connected, as :func:`tp_forward_comm`.
    dtype : str
        Activation dtype.
    algorithm : str
        Algorithm of both collectives, as :func:`gpucomm.model.cost.collective_cost`.

    Returns
    -------
    tuple of CollectiveCost
        (all_gather cost, reduce_scatter cost) of one call each, for the full ``tokens x hidden``
        buffer of :func:`tp_all_reduce_bytes`; a layer's forward issues two of each.

    Raises
    ------
    GpucommError
        Unknown model, dtype or link; counts out of range (as :func:`tp_all_reduce_bytes` and
        :func:`gpucomm.model.cost.collective_cost`).
    """
    msg = tp_all_reduce_bytes(num_tokens, get_model(model).hidden_size, dtype=dtype)
    return (collective_cost("all_gather", msg, num_ranks=tp_size, fabric=fabric, algorithm=algorithm),
            collective_cost("reduce_scatter", msg, num_ranks=tp_size, fabric=fabric, algorithm=algorithm))
