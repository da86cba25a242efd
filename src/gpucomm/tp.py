"""Tensor-parallel (TP) communication of a transformer, Megatron style.

In Megatron-LM tensor parallelism each transformer layer splits its attention and its
MLP so that, in the forward pass, each ends with one all_reduce of the layer's
activations: two all_reduces per layer (Shoeybi et al., "Megatron-LM", arXiv:1909.08053,
sec. 3, Fig. 3: operators f and g). Each all_reduce carries the full activation tensor
``tokens x hidden_size`` in the activation dtype.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucomm import GpucommError
from gpucomm.cost import CollectiveCost, collective_cost
from gpucomm.hardware import Link

DTYPE_BYTES = {"fp32": 4, "float32": 4, "fp16": 2, "float16": 2, "bf16": 2, "bfloat16": 2, "fp8": 1}
"""Bytes per element of the activation dtypes."""

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
    """Look up a model preset by key; raise :class:`~gpucomm.GpucommError` listing the keys if unknown."""
    if isinstance(key, ModelConfig):
        return key
    model = MODELS.get(str(key).strip().lower())
    if model is None:
        raise GpucommError(f"unknown model {key!r}: expected one of {', '.join(MODELS)}")
    return model


def dtype_bytes(dtype: str) -> int:
    """Bytes per element of ``dtype`` (fp32, fp16, bf16, fp8); raise a clear error if unknown."""
    if dtype not in DTYPE_BYTES:
        raise GpucommError(f"unknown dtype {dtype!r}: expected one of {', '.join(DTYPE_BYTES)}")
    return DTYPE_BYTES[dtype]


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

    Raises
    ------
    GpucommError
        If a count is not a positive integer or the dtype is unknown.

    Examples
    --------
    The seed's example, Llama-3-70B with a 4096-token prompt in FP16: 64 MiB.

    >>> tp_all_reduce_bytes(4096, 8192, dtype="fp16") / 2**20
    64.0
    """
    for name, value in (("number of tokens", num_tokens), ("hidden size", hidden_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GpucommError(f"{name} {value!r} is not valid: expected a positive integer")
    return num_tokens * hidden_size * dtype_bytes(dtype)


@dataclass(frozen=True)
class TPForwardComm:
    """All-reduce communication of one TP forward pass. Sizes in bytes, times in s."""

    model: str
    tp_size: int
    num_tokens: int
    msg_bytes: int
    all_reduces: int
    per_all_reduce: CollectiveCost
    total_time_s: float


def tp_forward_comm(model: str | ModelConfig, *, tp_size: int, num_tokens: int, link: str | Link,
                    dtype: str = "fp16", p2p: bool = True) -> TPForwardComm:
    """All_reduce count, size and time of one TP forward pass over ``num_tokens`` tokens.

    Parameters
    ----------
    model : str or ModelConfig
        Preset key (``"llama-3-70b"``) or config.
    tp_size : int
        Tensor-parallel degree (GPUs sharing each layer), >= 1.
    num_tokens : int
        Tokens processed in the pass (prompt length x batch in prefill).
    link : str or Link
        Link between the TP GPUs.
    dtype : str
        Activation dtype.
    p2p : bool
        False: P2P disabled, staged through host memory (PCIe links only).

    Returns
    -------
    TPForwardComm
        ``all_reduces = 2 x num_layers``; ``total_time_s = all_reduces x per-all_reduce time``
        (no overlap with compute).

    Raises
    ------
    GpucommError
        For bad sizes, unknown model, link or dtype.

    Examples
    --------
    >>> comm = tp_forward_comm("llama-3-70b", tp_size=4, num_tokens=4096, link="nvlink3")
    >>> comm.all_reduces, comm.msg_bytes // 2**20
    (160, 64)
    """
    cfg = get_model(model)
    msg = tp_all_reduce_bytes(num_tokens, cfg.hidden_size, dtype=dtype)
    cost = collective_cost("all_reduce", msg, num_ranks=tp_size, link=link, p2p=p2p)
    count = ALL_REDUCES_PER_LAYER_FORWARD * cfg.num_layers
    return TPForwardComm(cfg.key, tp_size, num_tokens, msg, count, cost, count * cost.time_s)
