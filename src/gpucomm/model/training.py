"""Communication volume and time per training step: data parallel (DP), ZeRO/FSDP, pipeline (PP), TP.

Volumes are bytes per GPU per step; times come from :func:`gpucomm.model.cost.collective_cost`.

References
----------
Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", SC'20,
arXiv:1910.02054, sec. 7: DP all_reduce moves 2 x Psi per GPU (reduce-scatter + all-gather); ZeRO-3 moves
3 x Psi (all-gather in forward, all-gather in backward, reduce-scatter of gradients), 1.5x DP.
Shoeybi et al., "Megatron-LM", arXiv:1909.08053, sec. 3: TP needs 4 all_reduces per layer per
forward + backward. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters
Using Megatron-LM", SC'21, arXiv:2104.04473, sec. 2.2/3.2: PP sends activations of
``micro_batch x seq x hidden`` between stages, forward and backward.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucomm import GpucommError
from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import Fabric, as_fabric
from gpucomm.model.hardware import Link
from gpucomm.model.tp import dtype_bytes, get_model, layer_params, tp_all_reduce_bytes

STRATEGIES = ("dp", "fsdp", "pp", "tp")


def model_params(model: str) -> int:
    """All transformer-layer weights plus input embedding and output head (untied): the ``Psi`` of ZeRO.

    Parameters
    ----------
    model : str
        Preset key of :data:`gpucomm.model.tp.MODELS` (a :class:`~gpucomm.model.tp.ModelConfig` is accepted too).

    Returns
    -------
    int
        ``num_layers x layer_params + 2 x vocab_size x hidden_size`` parameters (a count):
        :func:`gpucomm.model.tp.layer_params` per layer, and separate embedding and head matrices, as in the
        Llama 3 ``config.json`` files (``tie_word_embeddings`` false). Norm weights are left out.

    Raises
    ------
    GpucommError
        If the model is unknown.

    Examples
    --------
    >>> round(model_params("llama-3-70b") / 1e9, 1)
    70.6
    """
    cfg = get_model(model)
    return cfg.num_layers * layer_params(cfg) + 2 * cfg.vocab_size * cfg.hidden_size


@dataclass(frozen=True)
class StepComm:
    """Communication of one training step for one strategy. Bytes per GPU, seconds."""

    strategy: str
    volume_bytes: float
    """Bytes each GPU sends (per direction) during the step."""
    time_s: float
    """Communication time without overlap."""
    exposed_s: float
    """Time left visible after overlap with ``compute_s`` (0 when fully hidden)."""
    collectives: tuple[tuple[str, int, int], ...]
    """(collective, message bytes, count) issued per step."""


def step_comm(model: str, strategy: str, *, num_gpus: int, fabric: Fabric | str | Link,
              global_batch_tokens: int = 4 * 2**20, seq_len: int = 8192, micro_batch: int = 1, grad_dtype: str = "bf16",
              act_dtype: str = "bf16", compute_s: float = 0.0, overlap: bool = False,
              algorithm: str = "auto") -> StepComm:
    """Bytes and time of the communication of one training step.

    Parameters
    ----------
    model : str
        Model preset.
    strategy : {"dp", "fsdp", "pp", "tp"}
        ``dp``: gradient all_reduce of all weights. ``fsdp``: ZeRO-3 (all_gather weights in forward and
        backward, reduce_scatter gradients). ``pp``: ``num_gpus`` stages, activations sent forward and
        gradients backward for each micro-batch. ``tp``: 4 all_reduces per layer (forward + backward) for
        each micro-batch, each over that micro-batch's ``seq_len x micro_batch`` tokens.
    num_gpus : int
        GPUs in the group (DP/FSDP replicas, PP stages, or TP degree), >= 2.
    fabric : Fabric, str or Link
        How the GPUs are connected, nodes and network included (:func:`gpucomm.model.fabric.make_fabric`);
        a link key for a plain link inside one node.
    global_batch_tokens : int
        Tokens per optimizer step over all replicas (default 4 Mi, Llama-3-scale).
    seq_len, micro_batch : int
        Sequence length and sequences per micro-batch (PP and TP message sizes).
    grad_dtype, act_dtype : str
        dtypes of gradients/weights on the wire and of activations.
    compute_s : float
        Compute time of the step, to compute the exposed part when ``overlap`` is True.
    overlap : bool
        Whether communication overlaps compute (DP bucketed all_reduce in backward, FSDP prefetch, PP
        sends behind other micro-batches). The exposed time is then ``max(0, time - compute_s)``.
        TP all_reduces sit on the critical path of every layer (the next matmul needs their result),
        so for ``tp`` the whole time stays exposed.
    algorithm : str
        Algorithm of every collective, as :func:`gpucomm.model.cost.collective_cost`.

    Returns
    -------
    StepComm

    Raises
    ------
    GpucommError
        Unknown strategy, model or dtype; ``num_gpus`` < 2; non-positive sizes.

    Examples
    --------
    DP on 8 GPUs sends 2 (n-1)/n x 2 bytes x Psi per GPU; FSDP 1.5x that (ZeRO, sec. 7).

    >>> dp = step_comm("llama-3-8b", "dp", num_gpus=8, fabric="nvlink4")
    >>> fsdp = step_comm("llama-3-8b", "fsdp", num_gpus=8, fabric="nvlink4")
    >>> round(fsdp.volume_bytes / dp.volume_bytes, 2)
    1.5
    """
    if strategy not in STRATEGIES:
        raise GpucommError(f"unknown strategy {strategy!r}: expected one of {', '.join(STRATEGIES)}")
    if isinstance(num_gpus, bool) or not isinstance(num_gpus, int) or num_gpus < 2:
        raise GpucommError(f"number of GPUs {num_gpus!r} is not valid: expected an integer >= 2")
    for name, value in (("global batch tokens", global_batch_tokens), ("sequence length", seq_len),
                        ("micro-batch", micro_batch)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise GpucommError(f"{name} {value!r} is not valid: expected a positive integer")
    if compute_s < 0:
        raise GpucommError(f"compute time {compute_s!r} s is not valid: expected >= 0")
    cfg = get_model(model)
    fabric = as_fabric(fabric)
    n = num_gpus
    grad_bytes = model_params(model) * dtype_bytes(grad_dtype)

    def cost(coll: str, size: int) -> float:
        return collective_cost(coll, size, num_ranks=n, fabric=fabric, algorithm=algorithm).time_s

    if strategy == "dp":
        calls = (("all_reduce", grad_bytes, 1),)
        volume = grad_bytes * 2 * (n - 1) / n
    elif strategy == "fsdp":
        calls = (("all_gather", grad_bytes, 2), ("reduce_scatter", grad_bytes, 1))
        volume = 3 * grad_bytes * (n - 1) / n
    elif strategy == "pp":
        micro_batches = max(global_batch_tokens // (seq_len * micro_batch), 1)
        act = micro_batch * seq_len * cfg.hidden_size * dtype_bytes(act_dtype)
        # each stage boundary: one activation forward + one gradient backward per micro-batch
        calls = (("send_recv", act, 2 * micro_batches),)
        volume = 2 * micro_batches * act
        # stages spread over several nodes: the slowest boundary is the one between two nodes, over the network
        boundary = fabric.replace(num_nodes=2) if fabric.num_nodes > 1 else fabric
        t = 2 * micro_batches * collective_cost("send_recv", act, num_ranks=2, fabric=boundary, algorithm=algorithm).time_s
        return StepComm(strategy, volume, t, max(0.0, t - compute_s) if overlap else t, calls)
    else:  # tp
        # each micro-batch runs its own forward and backward: the all_reduces carry one micro-batch's tokens,
        # and a last, shorter micro-batch takes whatever tokens remain
        per_micro = seq_len * micro_batch
        full, rest = divmod(global_batch_tokens, per_micro)
        sizes = [(per_micro, full)] + ([(rest, 1)] if rest else [])
        calls = tuple(("all_reduce", tp_all_reduce_bytes(tokens, cfg.hidden_size, dtype=act_dtype), 4 * cfg.num_layers * k)
                      for tokens, k in sizes if k)
        volume = sum(size * count for _, size, count in calls) * 2 * (n - 1) / n
    t = sum(cost(coll, size) * count for coll, size, count in calls)
    hideable = overlap and strategy != "tp"
    return StepComm(strategy, volume, t, max(0.0, t - compute_s) if hideable else t, calls)
