"""Expert parallelism (EP) of a mixture-of-experts (MoE) layer: the dispatch and combine all_to_alls.

In an MoE layer a router sends each token to ``top_k`` of the layer's experts. With expert parallelism the
experts are spread over ``ep_size`` GPUs, so every MoE layer moves tokens twice, with an all-to-all before
and after the experts (Lepikhin et al., "GShard", arXiv:2006.16668):

* **dispatch**: every GPU sends a copy of each of its tokens' hidden states (``hidden_size`` elements) to the
  GPU of each chosen expert: ``tokens x top_k x hidden_size x bytes`` leave each GPU;
* **combine**: the expert outputs travel the same way back, the same number of elements.

Under balanced routing (every expert receives as many tokens as any other, the goal of the load-balancing
loss or bias terms) each GPU sends the same amount to every GPU: exactly the collective ``all_to_all``,
whose nccl-tests size ``S`` is one GPU's whole send buffer. Its cost is then
:func:`gpucomm.model.cost.collective_cost` ``("all_to_all", S, num_ranks=ep_size, fabric=...)``, inside one
NVLink node or across nodes over the network, where each GPU's traffic leaves through its own NIC:
all_to_all cannot pool a node's NICs for one GPU (NVIDIA, nccl-tests issue #267, S. Jeaugey, 2024-11-19).

The byte counts are upper bounds for a real MoE kernel: every ``(token, expert)`` copy is counted, while a
kernel such as DeepEP sends a token once to each GPU that holds any of its experts; scale factors of FP8
data are not counted. :func:`node_limited_network_bytes_per_gpu` gives the network traffic of DeepSeek-V3's
node-limited routing, where a token crosses the network once per target node and is forwarded over
NVLink inside it (DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, sec. 3.2.2).

Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucomm import GpucommError
from gpucomm.model.catalog import lookup
from gpucomm.model.cost import CollectiveCost, collective_cost
from gpucomm.model.fabric import Fabric, as_fabric
from gpucomm.model.hardware import Link
from gpucomm.model.tp import dtype_bytes

DEEPSEEK_V3_REPORT = "https://arxiv.org/abs/2412.19437"
"""DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437 (2024-12)."""
NCCL_TESTS_267 = "https://github.com/NVIDIA/nccl-tests/issues/267"
"""nccl-tests issue #267: "Alltoall cannot aggregate the bandwidth of multiple NICs" (S. Jeaugey, 2024-11-19)."""
DEEPEP_V1_README = ("https://github.com/deepseek-ai/DeepEP/blob/0297fc801788b14b338a46554faca28d419e518a/"
                    "docs/legacy.md#performance")
"""DeepEP V1 (NVSHMEM-based) performance tables, as archived in the repository's ``docs/legacy.md``."""


@dataclass(frozen=True)
class MoeModel:
    """The MoE shape that sets expert-parallel traffic (names as in Hugging Face ``config.json``).

    ``max_nodes_per_token`` is the node limit of the router (None: no limit).
    """

    key: str
    name: str
    hidden_size: int
    num_routed_experts: int
    experts_per_token: int
    num_layers: int
    num_moe_layers: int
    max_nodes_per_token: int | None
    source: str


MOE_MODELS: dict[str, MoeModel] = {
    m.key: m
    for m in (
        # config.json: hidden_size 7168, n_routed_experts 256, num_experts_per_tok 8, num_hidden_layers 61;
        # the report (sec. 4.2): "all FFNs except for the first three layers" are MoE,
        # "each token will be ensured to be sent to at most 4 nodes".
        MoeModel("deepseek-v3", "DeepSeek-V3 (671B)", 7168, 256, 8, 61, 58, 4,
                 "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json; " + DEEPSEEK_V3_REPORT),
        # config.json: hidden_size 4096, num_local_experts 8, num_experts_per_tok 2, num_hidden_layers 32
        # (every layer's FFN is an MoE block: Jiang et al., "Mixtral of Experts", arXiv:2401.04088).
        MoeModel("mixtral-8x7b", "Mixtral 8x7B", 4096, 8, 2, 32, 32, None,
                 "https://huggingface.co/mistralai/Mixtral-8x7B-Instruct-v0.1/blob/"
                 "eba92302a2861cdc0098cc54bc9f17cb2c47eb61/config.json"),
    )
}
"""MoE presets; each cites its Hugging Face config (and the paper for what the config does not say)."""


@dataclass(frozen=True)
class DeepEpMeasurement:
    """One row of DeepEP's published V1 benchmark (H800, one CX7 400 Gb/s InfiniBand NIC per GPU).

    Bandwidths are DeepEP's "bottleneck bandwidth" (normal kernels) or "RDMA bandwidth" (low-latency
    kernels) in bytes/s; latencies in s (low-latency kernels only).
    """

    kernel: str
    ep_size: int
    tokens_per_gpu: int
    link: str
    dispatch_bw_bytes_per_s: float
    combine_bw_bytes_per_s: float
    dispatch_latency_s: float | None = None
    combine_latency_s: float | None = None
    source: str = DEEPEP_V1_README


_GB = 1e9
DEEPEP_V1: tuple[DeepEpMeasurement, ...] = (
    # normal kernels: 4096 tokens per batch, hidden 7168, top-4 groups, top-8 experts, FP8 dispatch, BF16 combine
    DeepEpMeasurement("normal", 8, 4096, "NVLink", 153 * _GB, 158 * _GB),
    DeepEpMeasurement("normal", 16, 4096, "RDMA", 43 * _GB, 43 * _GB),
    DeepEpMeasurement("normal", 32, 4096, "RDMA", 58 * _GB, 57 * _GB),
    DeepEpMeasurement("normal", 64, 4096, "RDMA", 51 * _GB, 50 * _GB),
    # low-latency kernels: 128 tokens per batch, hidden 7168, top-8 experts, FP8 dispatch, BF16 combine. Measured with
    # NVLink for peers of the same node (the table changed with DeepEP #173, commit de8cfca): EP 8's 98 GB/s is more
    # than one NIC carries. The README's "pure RDMA" predates that.
    DeepEpMeasurement("low_latency", 8, 128, "RDMA", 98 * _GB, 127 * _GB, 77e-6, 114e-6),
    DeepEpMeasurement("low_latency", 16, 128, "RDMA", 63 * _GB, 74 * _GB, 118e-6, 195e-6),
    DeepEpMeasurement("low_latency", 32, 128, "RDMA", 48 * _GB, 53 * _GB, 155e-6, 273e-6),
    DeepEpMeasurement("low_latency", 64, 128, "RDMA", 43 * _GB, 46 * _GB, 173e-6, 314e-6),
    DeepEpMeasurement("low_latency", 128, 128, "RDMA", 39 * _GB, 39 * _GB, 192e-6, 369e-6),
    DeepEpMeasurement("low_latency", 256, 128, "RDMA", 39 * _GB, 40 * _GB, 194e-6, 360e-6),
)
"""DeepEP V1's published tables, verbatim (:data:`DEEPEP_V1_README`); H800 NVLink "~160 GB/s maximum",
CX7 NIC "~50 GB/s maximum" per the same page."""


def get_moe_model(key: str | MoeModel) -> MoeModel:
    """Look up an MoE preset by key (case-insensitive); a :class:`MoeModel` is returned unchanged.

    Parameters
    ----------
    key : str or MoeModel
        Key of :data:`MOE_MODELS` (``"deepseek-v3"``, ``"mixtral-8x7b"``) or a model.

    Returns
    -------
    MoeModel
        The preset, with its ``source``.

    Raises
    ------
    GpucommError
        If the key is unknown; the message lists the accepted keys.
    """
    return lookup(MOE_MODELS, key, what="MoE model", entry_type=MoeModel)


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GpucommError(f"{name} must be a positive integer, got {value!r}")
    return value


def all_to_all_bytes_per_gpu(tokens_per_gpu: int, experts_per_token: int, hidden_size: int, *,
                             dtype: str = "bf16") -> int:
    """Bytes one GPU sends in one dispatch (or one combine): ``tokens x top_k x hidden_size x bytes``.

    Parameters
    ----------
    tokens_per_gpu : int
        Tokens each GPU routes in this MoE layer (its micro-batch: batch x sequence length in training and
        prefill, the batch of sequences in decoding).
    experts_per_token : int
        ``top_k``: routed experts per token (``num_experts_per_tok`` in ``config.json``).
    hidden_size : int
        Elements per token's hidden state.
    dtype : str
        Element type on the wire (:func:`gpucomm.model.tp.dtype_bytes`): ``fp8`` for a DeepSeek-V3 dispatch,
        ``bf16`` for its combine (DeepEP's benchmark setting, "FP8 dispatching and BF16 combining",
        :data:`DEEPEP_V1_README`).

    Returns
    -------
    int
        The send buffer ``S`` of the all_to_all in bytes, the local share included (as nccl-tests counts it).
        Every (token, expert) copy counts, so this is an upper bound for kernels that send a token once
        per target GPU.

    Raises
    ------
    GpucommError
        A count that is not a positive integer, or an unknown dtype.

    Examples
    --------
    DeepSeek-V3 (hidden 7168, top-8), 4096 tokens per GPU, FP8 dispatch: 235 MB.

    >>> all_to_all_bytes_per_gpu(4096, 8, 7168, dtype="fp8")
    234881024
    """
    tokens = _positive_int("tokens_per_gpu", tokens_per_gpu)
    k = _positive_int("experts_per_token", experts_per_token)
    hidden = _positive_int("hidden_size", hidden_size)
    return tokens * k * hidden * dtype_bytes(dtype)


def network_fraction(ep_size: int, gpus_per_node: int) -> float:
    """Fraction of a balanced all_to_all's buffer that leaves the node: ``(n - g) / n``.

    Parameters
    ----------
    ep_size : int
        GPUs in the expert-parallel group, ``n``.
    gpus_per_node : int
        GPUs of the group in each node, ``g`` (a divisor of ``n``).

    Returns
    -------
    float
        ``(n - g) / n``: each GPU sends ``1/n`` of its buffer to every GPU, ``g`` of which (itself included)
        are in its own node. 0 in one node, ``(N-1)/N`` for ``N`` nodes.

    Raises
    ------
    GpucommError
        ``gpus_per_node`` does not divide ``ep_size``.
    """
    n, g = _positive_int("ep_size", ep_size), _positive_int("gpus_per_node", gpus_per_node)
    if n % g:
        raise GpucommError(f"{n} GPUs over nodes of {g}: expected ep_size to be a multiple of gpus_per_node")
    return (n - g) / n


def node_limited_network_bytes_per_gpu(tokens_per_gpu: int, hidden_size: int, *, num_nodes: int,
                                       max_nodes_per_token: int, dtype: str = "fp8") -> float:
    """Network bytes one GPU sends in a dispatch when each token crosses the network once per target node.

    DeepSeek-V3 sends a token "to at most 4 nodes" (arXiv:2412.19437, sec. 4.2), first over InfiniBand to the
    GPU with the same in-node index on each target node, then over NVLink to the GPUs of its experts
    (sec. 3.2.2), the scheme DeepEP's normal kernels implement ("forwarding data from NVLink domain to RDMA
    domain", :data:`DEEPEP_V1_README`). With the ``M`` target nodes spread evenly over ``N`` nodes, a token
    has on average ``M (N - 1) / N`` of them away from its own node.

    Parameters
    ----------
    tokens_per_gpu : int
        Tokens each GPU routes.
    hidden_size : int
        Elements per token.
    num_nodes : int
        Nodes ``N`` the expert-parallel group spans.
    max_nodes_per_token : int
        The router's node limit ``M`` (DeepSeek-V3: 4); the token goes to ``min(M, N)`` nodes, the most
        it can reach (an upper bound: a token may pick fewer).
    dtype : str
        Element type on the wire (:func:`gpucomm.model.tp.dtype_bytes`).

    Returns
    -------
    float
        ``tokens x min(M, N) x (N - 1) / N x hidden_size x bytes``.

    Raises
    ------
    GpucommError
        A count that is not a positive integer, or an unknown dtype.

    Examples
    --------
    DeepSeek-V3, 4096 tokens per GPU, 8 nodes: 3.5 copies of each token cross the network instead of 7.

    >>> node_limited_network_bytes_per_gpu(4096, 7168, num_nodes=8, max_nodes_per_token=4) / (4096 * 7168)
    3.5
    """
    nodes = _positive_int("num_nodes", num_nodes)
    limit = _positive_int("max_nodes_per_token", max_nodes_per_token)
    per_node = all_to_all_bytes_per_gpu(tokens_per_gpu, 1, hidden_size, dtype=dtype)
    return per_node * min(limit, nodes) * (nodes - 1) / nodes


@dataclass(frozen=True)
class MoeLayerTraffic:
    """Dispatch and combine of one MoE layer on one GPU (bytes, seconds), from :func:`moe_layer_all_to_all`."""

    model: MoeModel
    tokens_per_gpu: int
    ep_size: int
    num_nodes: int
    dispatch_bytes_per_gpu: int
    combine_bytes_per_gpu: int
    network_bytes_per_gpu: float
    """Bytes each GPU sends over the network in dispatch + combine (0 inside one node)."""
    dispatch: CollectiveCost
    combine: CollectiveCost

    @property
    def time_s(self) -> float:
        """Dispatch + combine time of one MoE layer, s (forward; backward repeats both in reverse)."""
        return self.dispatch.time_s + self.combine.time_s

    @property
    def forward_time_s(self) -> float:
        """:attr:`time_s` over all the model's MoE layers, s: one forward pass, no overlap with compute."""
        return self.time_s * self.model.num_moe_layers


def moe_layer_all_to_all(model: str | MoeModel, tokens_per_gpu: int, *, ep_size: int,
                         fabric: Fabric | str | Link, dispatch_dtype: str = "fp8",
                         combine_dtype: str = "bf16") -> MoeLayerTraffic:
    """Bytes and time of one MoE layer's dispatch and combine, each a balanced ``all_to_all`` of the EP group.

    Parameters
    ----------
    model : str or MoeModel
        Key of :data:`MOE_MODELS` or a model.
    tokens_per_gpu : int
        Tokens each GPU routes through this layer.
    ep_size : int
        GPUs in the expert-parallel group (``num_ranks`` of the all_to_all).
    fabric : Fabric, str or Link
        How they are connected (:func:`gpucomm.model.fabric.system_fabric`,
        :func:`gpucomm.model.fabric.make_fabric`): one NVLink node, or ``num_nodes`` nodes with a network.
    dispatch_dtype, combine_dtype : str
        Element types on the wire; defaults as DeepSeek-V3 and DeepEP (FP8 dispatch, BF16 combine).

    Returns
    -------
    MoeLayerTraffic
        Each direction priced by :func:`gpucomm.model.cost.collective_cost` ``("all_to_all", S, ...)`` with
        ``S`` from :func:`all_to_all_bytes_per_gpu`; network bytes from :func:`network_fraction`.

    Raises
    ------
    GpucommError
        Unknown model or dtype; ``ep_size`` not a multiple of the fabric's nodes, or more GPUs per node
        than the fabric holds (:func:`~gpucomm.model.cost.collective_cost`).

    Examples
    --------
    DeepSeek-V3, 4096 tokens per GPU, EP = 8 in one DGX H100:

    >>> t = moe_layer_all_to_all("deepseek-v3", 4096, ep_size=8, fabric="nvlink4")
    >>> t.dispatch_bytes_per_gpu, t.combine_bytes_per_gpu, t.network_bytes_per_gpu
    (234881024, 469762048, 0.0)
    """
    m = get_moe_model(model)
    fab = as_fabric(fabric)
    n = _positive_int("ep_size", ep_size)
    dispatch_bytes = all_to_all_bytes_per_gpu(tokens_per_gpu, m.experts_per_token, m.hidden_size, dtype=dispatch_dtype)
    combine_bytes = all_to_all_bytes_per_gpu(tokens_per_gpu, m.experts_per_token, m.hidden_size, dtype=combine_dtype)
    dispatch = collective_cost("all_to_all", dispatch_bytes, num_ranks=n, fabric=fab)  # checks n against the fabric
    combine = collective_cost("all_to_all", combine_bytes, num_ranks=n, fabric=fab)
    remote = network_fraction(n, n // fab.num_nodes)
    return MoeLayerTraffic(model=m, tokens_per_gpu=tokens_per_gpu, ep_size=n, num_nodes=fab.num_nodes,
                           dispatch_bytes_per_gpu=dispatch_bytes, combine_bytes_per_gpu=combine_bytes,
                           network_bytes_per_gpu=(dispatch_bytes + combine_bytes) * remote,
                           dispatch=dispatch, combine=combine)
