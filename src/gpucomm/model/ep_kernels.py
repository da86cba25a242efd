"""Expert-parallel kernels below NCCL: DeepEP's message sizes, and how decode and prefill weigh latency and bytes.

:mod:`gpucomm.model.expert_parallel` prices an MoE layer's dispatch and combine as NCCL all_to_alls. This module adds
what a kernel library such as DeepEP sends instead, and what a batch's size makes matter:

* **bytes per (token, expert) copy** in DeepEP V1's low-latency kernels (:func:`ll_dispatch_copy_bytes`,
  :func:`ll_combine_copy_bytes`): an FP8 dispatch message carries the hidden state, one float32 scale per 128
  elements and a 16-byte header; a combine message the BF16 hidden state
  (DeepEP's ``csrc/kernels/internode_ll.cu`` and its test ``test_low_latency.py`` at :data:`DEEPEP_V1_COMMIT`);
* **network copies per token** (:func:`network_copies_per_token`): the low-latency kernels send each token to each
  chosen expert, so ``k (n - g) / n`` copies cross the network; the normal kernels send it once per target node
  and forward it over NVLink (DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, sec. 3.2.2), at most
  ``min(M, N) (N - 1) / N`` copies;
* **the balance of one dispatch across nodes** (:func:`dispatch_balance`): its network bytes at the NIC's line rate
  against the model's NCCL all_to_all (:func:`gpucomm.model.cost.collective_cost`), split into its latency (alpha)
  and transfer (beta) terms; :func:`latency_bound_tokens` finds the batch below which the latency term is larger.

Across nodes the model's all_to_all is an alpha-beta estimate outside NCCL's tuner (``gpucomm.model.cost``), its
latency term a fitted parameter (:data:`~gpucomm.model.hardware.calibration.SIMPLE_LATENCY_S`): the split is the
model's, a rough figure for small messages.

Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucomm import GpucommError
from gpucomm.model.cost import CollectiveCost, collective_cost
from gpucomm.model.expert_parallel import MoeModel, get_moe_model, network_fraction
from gpucomm.model.fabric import Fabric, as_fabric
from gpucomm.model.hardware import Link, get_network
from gpucomm.model.tp import dtype_bytes

__all__ = ["DEEPEP_V1_COMMIT", "DEEPEP_V2_COMMIT", "DispatchBalance", "NetworkCopies", "dispatch_balance",
           "latency_bound_tokens", "ll_combine_copy_bytes", "ll_dispatch_copy_bytes", "ll_logical_bw_bytes_per_s",
           "ll_bytes_per_token", "ll_receive_slots", "network_copies_per_token"]

DEEPEP_V1_COMMIT = "567632dd59810d77b3cc05553df953cc0f779799"
"""DeepEP's last commit before V2 (2026-02-03): the V1 (NVSHMEM) README, kernels and tests."""
DEEPEP_V2_COMMIT = "dd758caf451848bd150e1046af3d0a73e5fff38d"
"""A DeepEP V2 commit (2026-07-14): the README that announces the NCCL GIN backend."""
_DEEPEP = "https://github.com/deepseek-ai/DeepEP/blob/"
DEEPEP_V1_LL_KERNEL = f"{_DEEPEP}{DEEPEP_V1_COMMIT}/csrc/kernels/internode_ll.cu"
"""``dispatch``: ``num_bytes_per_msg = sizeof(int4) + (kUseFP8 ? (kHidden + num_scales * sizeof(float)) : kHidden *
sizeof(nv_bfloat16))`` with ``num_scales = kHidden / 128``; ``combine``: each (token, expert) put sends
``num_send_bytes = hidden * sizeof(nv_bfloat16)`` (LogFMT off; the receive slot, ``num_bytes_per_slot``, keeps
``hidden / 128 * 4`` more bytes for LogFMT's metadata, which are not sent then)."""
DEEPEP_V1_BUFFER = f"{_DEEPEP}{DEEPEP_V1_COMMIT}/deep_ep/buffer.py"
"""``low_latency_dispatch``: ``recv_x`` is ``[num_local_experts, num_max_dispatch_tokens_per_rank * num_ranks, hidden]``;
"not all tokens are valid ... as we do not synchronize CPU received count with GPU"."""
DEEPEP_V1_LL_TEST = f"{_DEEPEP}{DEEPEP_V1_COMMIT}/tests/test_low_latency.py"
"""``num_fp8_bytes, num_bf16_bytes = (hidden + hidden / 128 * 4 + 16), hidden * 2``, times the selections, over the
measured time: the "RDMA bandwidth" of DeepEP's low-latency table."""

FP8_SCALE_BLOCK = 128
"""Elements per FP8 scale in DeepEP's low-latency dispatch (``kNumPerChannels``, :data:`DEEPEP_V1_LL_KERNEL`)."""
_SCALE_BYTES = 4  # one float32 per block
_HEADER_BYTES = 16  # sizeof(int4): the token's source index and padding


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GpucommError(f"{name} must be a positive integer, got {value!r}")
    return value


def ll_dispatch_copy_bytes(hidden_size: int, *, dtype: str = "fp8") -> int:
    """Bytes of one (token, expert) message of DeepEP V1's low-latency dispatch.

    Parameters
    ----------
    hidden_size : int
        Elements per token's hidden state; a multiple of 128 for FP8 (one scale per 128 elements).
    dtype : {"fp8", "bf16"}
        Element type on the wire.

    Returns
    -------
    int
        ``16 + hidden + hidden / 128 x 4`` for FP8 (header, data, float32 scales), ``16 + 2 x hidden`` for BF16
        (:data:`DEEPEP_V1_LL_KERNEL`, ``num_bytes_per_msg``).

    Raises
    ------
    GpucommError
        ``hidden_size`` not a positive integer, not a multiple of 128 with FP8, or ``dtype`` neither fp8 nor bf16.

    Examples
    --------
    DeepSeek-V3 (hidden 7168):

    >>> ll_dispatch_copy_bytes(7168), ll_dispatch_copy_bytes(7168, dtype="bf16")
    (7408, 14352)
    """
    hidden = _positive_int("hidden_size", hidden_size)
    if dtype == "fp8":
        if hidden % FP8_SCALE_BLOCK:
            raise GpucommError(f"hidden_size {hidden} with fp8: expected a multiple of {FP8_SCALE_BLOCK} "
                               "(one scale per 128 elements)")
        return _HEADER_BYTES + hidden * dtype_bytes("fp8") + hidden // FP8_SCALE_BLOCK * _SCALE_BYTES
    if dtype == "bf16":
        return _HEADER_BYTES + hidden * dtype_bytes("bf16")
    raise GpucommError(f"dtype {dtype!r}: expected 'fp8' or 'bf16' (DeepEP's low-latency dispatch)")


def ll_combine_copy_bytes(hidden_size: int) -> int:
    """Bytes of one (token, expert) message of DeepEP V1's low-latency combine: the BF16 hidden state.

    Parameters
    ----------
    hidden_size : int
        Elements per token's hidden state.

    Returns
    -------
    int
        ``2 x hidden`` (:data:`DEEPEP_V1_LL_KERNEL`: ``num_send_bytes`` with LogFMT off).

    Raises
    ------
    GpucommError
        ``hidden_size`` not a positive integer.

    Examples
    --------
    >>> ll_combine_copy_bytes(7168)
    14336
    """
    return _positive_int("hidden_size", hidden_size) * dtype_bytes("bf16")


def ll_bytes_per_token(model: str | MoeModel, *, direction: str) -> int:
    """Bytes one token costs its rank in a low-latency dispatch (FP8) or combine (BF16): one message per chosen expert.

    Parameters
    ----------
    model : str or MoeModel
        Key of :data:`~gpucomm.model.expert_parallel.MOE_MODELS` or a model (``hidden_size``, ``experts_per_token``).
    direction : {"dispatch", "combine"}
        FP8 dispatch messages (:func:`ll_dispatch_copy_bytes`) or BF16 combine messages (:func:`ll_combine_copy_bytes`).

    Returns
    -------
    int
        ``k x`` the message bytes: what the rank sends per token, wherever the experts are (its own GPU included,
        as DeepEP's benchmark counts it, :data:`DEEPEP_V1_LL_TEST`).

    Raises
    ------
    GpucommError
        Unknown model or direction.

    Examples
    --------
    >>> ll_bytes_per_token("deepseek-v3", direction="dispatch"), ll_bytes_per_token("deepseek-v3", direction="combine")
    (59264, 114688)
    """
    m = get_moe_model(model)
    if direction == "dispatch":
        return m.experts_per_token * ll_dispatch_copy_bytes(m.hidden_size)
    if direction == "combine":
        return m.experts_per_token * ll_combine_copy_bytes(m.hidden_size)
    raise GpucommError(f"direction {direction!r}: expected 'dispatch' or 'combine'")


def ll_logical_bw_bytes_per_s(tokens_per_gpu: int, experts_per_token: int, hidden_size: int, time_s: float, *,
                              direction: str) -> float:
    """The "RDMA bandwidth" DeepEP's low-latency benchmark prints: every (token, expert) message over the time.

    Parameters
    ----------
    tokens_per_gpu : int
        Tokens each rank dispatches.
    experts_per_token : int
        Experts chosen per token (every choice counted, as when none is masked).
    hidden_size : int
        Elements per token.
    time_s : float
        The measured dispatch or combine time, s (> 0).
    direction : {"dispatch", "combine"}
        FP8 dispatch messages or BF16 combine messages.

    Returns
    -------
    float
        ``tokens x k x message bytes / time_s`` in bytes/s (:data:`DEEPEP_V1_LL_TEST`). Local and NVLink copies are
        counted too: a "logical" bandwidth, not what one NIC carries.

    Raises
    ------
    GpucommError
        A count that is not a positive integer, a time that is not positive, or an unknown direction.

    Examples
    --------
    DeepEP's EP 64 row (128 tokens, top-8, 173 us dispatch), which prints 43 GB/s:

    >>> round(ll_logical_bw_bytes_per_s(128, 8, 7168, 173e-6, direction="dispatch") / 1e9, 1)
    43.8
    """
    tokens = _positive_int("tokens_per_gpu", tokens_per_gpu)
    k = _positive_int("experts_per_token", experts_per_token)
    if not isinstance(time_s, (int, float)) or not time_s > 0:
        raise GpucommError(f"time_s must be a positive number of seconds, got {time_s!r}")
    if direction == "dispatch":
        copy = ll_dispatch_copy_bytes(hidden_size)
    elif direction == "combine":
        copy = ll_combine_copy_bytes(hidden_size)
    else:
        raise GpucommError(f"direction {direction!r}: expected 'dispatch' or 'combine'")
    return tokens * k * copy / time_s


def ll_receive_slots(model: str | MoeModel, max_tokens_per_rank: int, *, ep_size: int) -> tuple[int, float]:
    """Token slots of one GPU's low-latency receive tensor, and how many of them balanced routing fills.

    Parameters
    ----------
    model : str or MoeModel
        Key of :data:`~gpucomm.model.expert_parallel.MOE_MODELS` or a model: ``E`` routed experts, ``k`` per token.
    max_tokens_per_rank : int
        ``num_max_dispatch_tokens_per_rank``: the most tokens any rank dispatches in one call, ``T``.
    ep_size : int
        Ranks ``n``; ``E`` must be a multiple of ``n`` (each rank holds ``E / n`` experts).

    Returns
    -------
    tuple of (int, float)
        ``(E / n) x T x n``: the receive tensor holds, for each local expert, a slot for every token of every rank,
        so its shape never depends on the routing and no count goes back to the CPU (:data:`DEEPEP_V1_BUFFER`);
        and ``T x k``, the (token, expert) copies a rank receives when every expert gets the same share. Their ratio
        is ``E / k``, whatever ``T`` and ``n``.

    Raises
    ------
    GpucommError
        Unknown model, a count that is not a positive integer, or ``E`` not a multiple of ``ep_size``.

    Examples
    --------
    DeepSeek-V3 (256 experts, top-8), 128 tokens per rank, EP 64:

    >>> ll_receive_slots("deepseek-v3", 128, ep_size=64)
    (32768, 1024.0)
    """
    m = get_moe_model(model)
    tokens = _positive_int("max_tokens_per_rank", max_tokens_per_rank)
    n = _positive_int("ep_size", ep_size)
    if m.num_routed_experts % n:
        raise GpucommError(f"{m.num_routed_experts} experts over {n} ranks: expected ep_size to divide the experts")
    return m.num_routed_experts // n * tokens * n, float(tokens * m.experts_per_token)


@dataclass(frozen=True)
class NetworkCopies:
    """Copies of one token's hidden state that cross the network in one dispatch, averaged over balanced routing."""

    low_latency: float
    """One copy per chosen expert on another node: ``k (n - g) / n`` (DeepEP's low-latency kernels)."""
    node_limited: float
    """One copy per target node other than the token's own: ``min(M, N) (N - 1) / N`` at most (the normal kernels)."""


def network_copies_per_token(model: str | MoeModel, *, ep_size: int, gpus_per_node: int) -> NetworkCopies:
    """How many copies of a token cross the network in one dispatch, per kernel family.

    Parameters
    ----------
    model : str or MoeModel
        Key of :data:`~gpucomm.model.expert_parallel.MOE_MODELS` or a model: its ``experts_per_token`` ``k`` and node
        limit ``M`` (a model without one is limited by ``k``).
    ep_size : int
        GPUs in the expert-parallel group, ``n``.
    gpus_per_node : int
        GPUs of the group per node, ``g`` (a divisor of ``n``); ``N = n / g`` nodes.

    Returns
    -------
    NetworkCopies
        ``low_latency = k (n - g) / n``: DeepEP's low-latency dispatch writes each (token, expert) message to the
        expert's rank (:data:`DEEPEP_V1_LL_KERNEL`), over NVLink where the rank shares the node (DeepEP #173, V1
        README news of 2025-06-05), else over RDMA; experts spread evenly. ``node_limited = min(M, N) (N - 1) / N``:
        the normal kernels send a token over the network once per target node, to the GPU with the same in-node
        index, which forwards it over NVLink (arXiv:2412.19437, sec. 3.2.2), the token's nodes spread evenly; an
        upper bound, as a token may reach fewer nodes.

    Raises
    ------
    GpucommError
        Unknown model, a count that is not a positive integer, or ``gpus_per_node`` not dividing ``ep_size``.

    Examples
    --------
    DeepSeek-V3 on 8 nodes of 8 GPUs:

    >>> c = network_copies_per_token("deepseek-v3", ep_size=64, gpus_per_node=8)
    >>> c.low_latency, c.node_limited
    (7.0, 3.5)
    """
    m = get_moe_model(model)
    remote = network_fraction(ep_size, gpus_per_node)  # checks both counts
    nodes = ep_size // gpus_per_node
    limit = m.max_nodes_per_token or m.experts_per_token
    return NetworkCopies(low_latency=m.experts_per_token * remote,
                         node_limited=min(limit, m.experts_per_token, nodes) * (nodes - 1) / nodes)


@dataclass(frozen=True)
class DispatchBalance:
    """One low-latency-format dispatch across nodes: its bytes, their time at line rate, and NCCL's all_to_all."""

    tokens_per_gpu: int
    ep_size: int
    num_nodes: int
    dispatch_bytes_per_gpu: int
    """Every (token, expert) message one GPU sends, bytes: the all_to_all's buffer ``S``."""
    network_bytes_per_gpu: float
    """The share of it bound for other nodes, bytes: ``S (n - g) / n``."""
    nic_bw_bytes_per_s: float
    """Nominal per-direction rate of the GPU's own NIC, bytes/s (an all_to_all cannot pool a node's NICs)."""
    nccl: CollectiveCost
    """The model's NCCL all_to_all of ``S`` over the fabric."""

    @property
    def line_rate_s(self) -> float:
        """The network bytes at the NIC's nominal rate, s: no kernel sends them faster."""
        return self.network_bytes_per_gpu / self.nic_bw_bytes_per_s

    @property
    def latency_share(self) -> float:
        """Fraction of the model's all_to_all time that is its latency (alpha) term."""
        return self.nccl.latency_s / self.nccl.time_s


def dispatch_balance(model: str | MoeModel, tokens_per_gpu: int, *, ep_size: int,
                     fabric: Fabric | str | Link) -> DispatchBalance:
    """The bytes of one dispatch in DeepEP's low-latency format across nodes, at line rate and as an NCCL all_to_all.

    Parameters
    ----------
    model : str or MoeModel
        Key of :data:`~gpucomm.model.expert_parallel.MOE_MODELS` or a model.
    tokens_per_gpu : int
        Tokens each GPU dispatches (decode: its batch of sequences; prefill: its chunk of tokens).
    ep_size : int
        GPUs in the expert-parallel group.
    fabric : Fabric, str or Link
        Nodes joined by a network (:func:`gpucomm.model.fabric.system_fabric` with ``num_nodes`` > 1 and ``network``).

    Returns
    -------
    DispatchBalance
        ``S = tokens x k x`` :func:`ll_dispatch_copy_bytes` (FP8); network bytes ``S (n - g) / n``
        (:func:`~gpucomm.model.expert_parallel.network_fraction`); the NIC's nominal rate
        (:func:`gpucomm.model.hardware.get_network`); the all_to_all priced by
        :func:`~gpucomm.model.cost.collective_cost`.

    Raises
    ------
    GpucommError
        Unknown model; a count that is not a positive integer; a fabric of one node (no network); ``ep_size`` not a
        multiple of the fabric's nodes, or more GPUs per node than it holds.

    Examples
    --------
    DeepSeek-V3, 128 decode tokens per GPU, EP 64 over 8 DGX H100 on NDR InfiniBand:

    >>> from gpucomm.model.fabric import system_fabric
    >>> b = dispatch_balance("deepseek-v3", 128, ep_size=64,
    ...                      fabric=system_fabric("dgx_h100", num_nodes=8, network="ib_ndr"))
    >>> b.dispatch_bytes_per_gpu, round(b.line_rate_s * 1e6)
    (7585792, 133)
    """
    m = get_moe_model(model)
    fab = as_fabric(fabric)
    if fab.num_nodes < 2 or fab.network is None:
        raise GpucommError(f"{fab.label} is one node: expected a fabric of several nodes joined by a network "
                           "(system_fabric(..., num_nodes=N, network=...))")
    tokens = _positive_int("tokens_per_gpu", tokens_per_gpu)
    n = _positive_int("ep_size", ep_size)
    size = tokens * m.experts_per_token * ll_dispatch_copy_bytes(m.hidden_size)
    nccl = collective_cost("all_to_all", size, num_ranks=n, fabric=fab)  # checks n against the fabric
    return DispatchBalance(tokens_per_gpu=tokens, ep_size=n, num_nodes=fab.num_nodes, dispatch_bytes_per_gpu=size,
                           network_bytes_per_gpu=size * network_fraction(n, n // fab.num_nodes),
                           nic_bw_bytes_per_s=get_network(fab.network).bw_bytes_per_s, nccl=nccl)


def latency_bound_tokens(model: str | MoeModel, *, ep_size: int, fabric: Fabric | str | Link,
                         max_tokens: int = 2**16) -> int:
    """The smallest batch whose dispatch, as the model's NCCL all_to_all, spends no more on latency than on transfer.

    Parameters
    ----------
    model : str or MoeModel
        Key of :data:`~gpucomm.model.expert_parallel.MOE_MODELS` or a model.
    ep_size : int
        GPUs in the expert-parallel group.
    fabric : Fabric, str or Link
        Nodes joined by a network, as for :func:`dispatch_balance`.
    max_tokens : int
        Largest batch searched (default 65536 tokens per GPU).

    Returns
    -------
    int
        Tokens per GPU ``t`` with ``transfer_s >= latency_s`` at ``t`` and not at ``t - 1`` (bisection over
        :func:`dispatch_balance`; the transfer term grows with the bytes while the latency term depends only on the
        protocol, which the model switches once, from LL to Simple, as the message grows).

    Raises
    ------
    GpucommError
        As :func:`dispatch_balance`; or no batch up to ``max_tokens`` reaches the balance.

    Examples
    --------
    >>> from gpucomm.model.fabric import system_fabric
    >>> fab = system_fabric("dgx_h100", num_nodes=8, network="ib_ndr")
    >>> t = latency_bound_tokens("deepseek-v3", ep_size=64, fabric=fab)
    >>> b = dispatch_balance("deepseek-v3", t, ep_size=64, fabric=fab)
    >>> b.nccl.transfer_s >= b.nccl.latency_s
    True
    """
    top = _positive_int("max_tokens", max_tokens)

    def bandwidth_bound(tokens: int) -> bool:
        b = dispatch_balance(model, tokens, ep_size=ep_size, fabric=fabric)
        return b.nccl.transfer_s >= b.nccl.latency_s

    if bandwidth_bound(1):
        return 1
    if not bandwidth_bound(top):
        raise GpucommError(f"the all_to_all is still latency-bound at {top} tokens per GPU: expected a larger max_tokens")
    low, high = 1, top  # latency-bound at low, bandwidth-bound at high
    while high - low > 1:
        mid = (low + high) // 2
        if bandwidth_bound(mid):
            high = mid
        else:
            low = mid
    return high
