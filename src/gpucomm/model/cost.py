"""Cost of collectives per algorithm and protocol, in NCCL's own structure, with NCCL's choice.

For the collectives and algorithms NCCL's tuner knows (ring, tree, NVLS, NVLS Tree, CollNet, PAT; protocols LL,
LL128, Simple), :func:`collective_cost` builds the communicator NCCL would build
(:func:`gpucomm.model.nccl_fabric.fabric_to_comm`), lets NCCL's tuner (:mod:`gpucomm.model.nccl_tuner`, v2.30.7-1
constants) estimate every enabled (algorithm, protocol) as ``lat + bytes / bw`` (``src/graph/tuning.cc``) and picks
the lowest, as NCCL does. The reported time then adds what that estimate leaves out or plans differently, each a named
parameter of :mod:`gpucomm.model.hardware.calibration` with its data:

    time = launch + latency x scale(transport) + transfer at the delivered bandwidth on the channels in use + fill

- launch: eager, CUDA graph, or one synchronised torch.distributed call at a time
  (:data:`~gpucomm.model.hardware.calibration.LAUNCH_S`);
- the latency scale of the hops' transport, NVLink per generation, PCIe, host memory, network
  (:data:`~gpucomm.model.hardware.calibration.TUNER_LATENCY_SCALE`);
- the bandwidth the links deliver (nominal x measured efficiency) instead of NCCL's quantised plan
  (:func:`_delivered_bw_ratio`), with NCCL's protocol factors and caps kept;
- the channels NCCL runs at this size (:func:`~gpucomm.model.nccl_tuner.channels_and_threads`), and the pipeline
  fill of NVLS (:data:`~gpucomm.model.hardware.calibration.NVLS_PIPELINE_FILL_CHUNKS`) and of a ring's Simple steps
  over NVLink 3 (:data:`~gpucomm.model.hardware.calibration.RING_FILL_STEPS_NVLINK3`; for every transport the joint
  fit put it at zero);
- a ring's LL steps move their data while their latency elapses (:data:`CUT_THROUGH_PROTOCOLS`): only the transfer
  beyond the steps' latency adds;
- one host thread driving several GPUs sets a floor on back-to-back eager calls (``gpus_per_thread``,
  :data:`~gpucomm.model.hardware.calibration.HOST_LAUNCH_PER_GPU_S`, plus
  :data:`~gpucomm.model.hardware.calibration.HOST_LAUNCH_PER_CHANNEL_S` per channel before NCCL 2.13; none in a
  CUDA graph or with ``sync``, whose launch term already holds the whole dispatch).

The algorithms NCCL does not run (:data:`NOT_NCCL`: one-shot and two-shot custom all-reduce as vLLM and
TensorRT-LLM run them, recursive halving-doubling, the explicit ``hierarchical`` schedule across nodes) and the
collectives outside its tuner (all_to_all, send_recv) keep a plain alpha-beta form: every algorithm is described by
its sequential ``steps`` (each costs a latency) and the ``wire_bytes`` its busiest GPU link carries per direction,

    t = alpha(protocol, steps) + wire_bytes / (B * protocol_bw_fraction)

with fitted alphas, stated once in the collective's file of :mod:`gpucomm.model.collectives` and read by
:func:`steps_and_wire_bytes`. Across nodes all_to_all and send_recv run one ring per NIC through every GPU of every
node: the node's NICs together carry one ring's traffic.

References
----------
Hockney, "The communication challenge for MPP", Parallel Computing 20 (1994): t = alpha + n / B.
Thakur, Rabenseifner, Gropp, "Optimization of collective communication operations in MPICH", IJHPCA 19 (2005).
Sanders, Speck, Traeff, "Two-tree algorithms for full bandwidth broadcast, reduction and scan", Parallel Computing 35 (2009).
nccl-tests ``doc/PERFORMANCE.md`` (busbw), NCCL ``src/graph/tuning.cc`` (protocols, the tuner's cost form).
"""

from __future__ import annotations

import functools
import math
import operator
from dataclasses import asdict, dataclass

from gpucomm import GpucommError
from gpucomm.model import cost_terms as ct
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.collectives import REGISTRY, busbw_factor, check_collective, check_num_ranks, get_collective
from gpucomm.model.fabric import Fabric, as_fabric, make_fabric
from gpucomm.model.hardware import Link, get_gpu, get_inter_socket_link
from gpucomm.model.hardware import calibration as cal
from gpucomm.model.hardware.network import get_network
from gpucomm.model.nccl_fabric import (
    DEFAULT_NCCL_VERSION,
    comm_and_table,
    delivered_bw_bytes_per_s,
    nic_feed_bw_bytes_per_s,
    p2p_nvlinks,
    parse_nccl_version,
)
from gpucomm.model.nccl_p2p import p2p_channels

ALGORITHMS = ("auto", "ring", "tree", "binary_tree", "rhd", "one_shot", "two_shot", "nvls", "nvls_tree", "pat",
              "hierarchical")
PROTOCOLS = ("LL", "LL128", "Simple")
NCCL_ALGORITHMS = ("ring", "tree", "nvls", "nvls_tree", "pat")
"""The algorithms of NCCL's tuner (:data:`gpucomm.model.nccl_tuner.ALGORITHMS`): for the collectives the tuner
models (:data:`gpucomm.model.nccl_tuner.COLLECTIVES`), ``auto`` is NCCL's own choice
(:func:`gpucomm.model.nccl_tuner.choose`) and each of these names is NCCL's estimate for it plus the terms
outside NCCL (:data:`LAUNCH_MODES`, the ramp and pipeline fill). ``one_shot``, ``two_shot`` and ``rhd`` are not
NCCL (custom all-reduce as vLLM/TensorRT-LLM run it, a textbook algorithm) and stay alpha-beta;
``hierarchical`` is an explicit schedule, not NCCL's default."""

COLLNET_REFUSAL = ("CollNet needs in-network reduction (SHARP switches and NCCL's CollNet plugin), which no fabric "
                   "of the catalog describes; expected one of")
"""Why ``collnet_direct`` and ``collnet_chain`` are refused (NCCL's tuner port keeps them: ``Comm.collnet_enable``)."""

NOT_NCCL = {"binary_tree": "not NCCL: a pipelined binary tree (alpha-beta; NCCL runs broadcast and reduce as a ring)",
            "one_shot": "not NCCL: custom all-reduce as vLLM/TensorRT-LLM run it (alpha-beta)",
            "two_shot": "not NCCL: custom all-reduce as vLLM/TensorRT-LLM run it (alpha-beta)",
            "rhd": "not NCCL: recursive halving-doubling (alpha-beta)",
            "hierarchical": "not NCCL's default: the explicit intra/inter-node schedule (alpha-beta)"}
"""What each algorithm outside NCCL's tuner is, as ``CollectiveCost.note`` says it."""

LAUNCH_MODES = ("eager", "graph", "sync")
"""How the collective is launched and timed: ``eager`` (one launch per call, back to back, as nccl-tests without -G),
``graph`` (captured in a CUDA graph) or ``sync`` (one torch.distributed call at a time, timed from before the host
dispatches it); :data:`~gpucomm.model.hardware.calibration.LAUNCH_S` gives the term."""


MAX_MSG_BYTES = 1 << 50  # 1 PiB: anything larger is a typo, not a collective

HIERARCHICAL_COLLECTIVES = ("all_reduce",)
"""Collectives with the across-nodes ``hierarchical`` schedule of this module (:func:`_hierarchical_cost`)."""

ALGORITHMS_FOR = {
    name: tuple(a.name for a in c.algorithms) + (("hierarchical",) if name in HIERARCHICAL_COLLECTIVES else ())
    for name, c in REGISTRY.items()
}
"""The algorithms that implement each collective: those of its file in :mod:`gpucomm.model.collectives`,
then ``hierarchical`` (across nodes only) where it applies."""


def _network_bw(key: str) -> float:
    from gpucomm.model.hardware.network import get_network

    return get_network(key).bw_bytes_per_s


def effective_bw_bytes_per_s(link: str | Link, *, p2p: bool = True) -> float:
    """Large-message ring busbw per direction that a GPU's link reaches, in bytes/s.

    Parameters
    ----------
    link : str or Link
        Catalog key or entry.
    p2p : bool
        False models NCCL with P2P disabled or unsupported: staged through host memory
        (PCIe links only).

    Returns
    -------
    float
        ``nominal x efficiency``: :data:`~gpucomm.model.hardware.calibration.RING_EFFICIENCY`
        for NVLink, :data:`~gpucomm.model.hardware.calibration.PCIE_P2P_EFFICIENCY` or
        :data:`~gpucomm.model.hardware.calibration.HOST_STAGED_EFFICIENCY` for PCIe.

    Raises
    ------
    GpucommError
        For an unknown link, or ``p2p=False`` on a non-PCIe link.

    Examples
    --------
    >>> effective_bw_bytes_per_s("nvlink3") / 1e9
    228.24
    """
    fabric = make_fabric(link, p2p=p2p)  # refuses p2p=False on a link that is not PCIe
    return delivered_bw_bytes_per_s(fabric.link, p2p=p2p)


def per_gpu_bw_bytes_per_s(fabric: Fabric, num_ranks: int) -> float:
    """Effective bandwidth per direction each GPU has towards the other ``num_ranks - 1``, in bytes/s.

    On a switch it is the link's effective bandwidth. On a point-to-point mesh of
    ``m`` GPUs each peer link carries ``1/(m-1)`` of the GPU's bandwidth, and a
    collective among ``n`` of them can use ``n-1`` of those links at once (NCCL builds
    several rings over disjoint links), so a GPU gets ``(n-1)/(m-1)`` of it: the table of
    NVIDIA's blog "NVIDIA NVLink and NVIDIA NVSwitch Supercharge Large Language Model Inference" (Aug 2024;
    2 GPUs: 128 GB/s of 900; 8 GPUs: 7 x 128 GB/s).

    Parameters
    ----------
    fabric : Fabric
        A fabric built by :func:`gpucomm.model.fabric.make_fabric` or :func:`~gpucomm.model.fabric.system_fabric`.
    num_ranks : int
        GPUs taking part in the collective (on one node).

    Returns
    -------
    float
        Bytes/s per direction: :func:`effective_bw_bytes_per_s` of the link, times
        ``(n-1)/(m-1)`` on a mesh; for ``pairs`` with more than 2 GPUs, at most the effective
        bandwidth of ``pcie_link``; divided by ``min(gpus_per_uplink, num_ranks)`` (GPUs sharing
        one host uplink); at most the inter-socket link's ``bw_bytes_per_s`` when there is one.
        The minima model the slowest hop of the ring setting its pace (as :class:`~gpucomm.model.fabric.Fabric` describes).

    Raises
    ------
    GpucommError
        If ``num_ranks`` exceeds the mesh.
    """
    bw = effective_bw_bytes_per_s(fabric.link, p2p=fabric.p2p)
    if fabric.topology == "mesh":
        if num_ranks > fabric.mesh_size:
            raise GpucommError(f"{num_ranks} GPUs do not fit a mesh of {fabric.mesh_size}: expected at most {fabric.mesh_size}")
        bw *= max(num_ranks - 1, 1) / (fabric.mesh_size - 1)
    if fabric.topology == "pairs" and num_ranks > 2:
        # the ring leaves each bridged pair over PCIe: the NVLink pairs collapse to the PCIe rate
        bw = min(bw, effective_bw_bytes_per_s(fabric.pcie_link))
    bw /= min(fabric.gpus_per_uplink, num_ranks)
    if fabric.inter_socket is not None and (fabric.topology != "pairs" or num_ranks > 2):
        # every ring channel crosses the socket link once each way: the slowest hop sets the pace
        bw = min(bw, get_inter_socket_link(fabric.inter_socket).bw_bytes_per_s)
    return bw


def pair_bw_bytes_per_s(fabric: Fabric) -> float:
    """Nominal per-direction bandwidth between one pair of GPUs, in bytes/s.

    Parameters
    ----------
    fabric : Fabric
        A fabric built by :func:`gpucomm.model.fabric.make_fabric` or :func:`~gpucomm.model.fabric.system_fabric`.

    Returns
    -------
    float
        The link's nominal ``bw_bytes_per_s`` (catalog, no efficiency factor); on a mesh of ``m``
        GPUs, ``bw / (m-1)``: each GPU's links are split evenly over its ``m-1`` peers (see
        :class:`~gpucomm.model.fabric.Fabric`).
    """
    bw = fabric.link.bw_bytes_per_s
    return bw / (fabric.mesh_size - 1) if fabric.topology == "mesh" else bw


@dataclass(frozen=True)
class CollectiveCost:
    """Predicted cost of one collective. Times in s, bandwidths in bytes/s, sizes in bytes."""

    collective: str
    algorithm: str
    protocol: str
    link: str
    p2p: bool
    num_ranks: int
    msg_bytes: int
    time_s: float
    latency_s: float
    """The alpha part of ``time_s``."""
    transfer_s: float
    """The bandwidth (beta) part of ``time_s``."""
    bus_bytes: float
    """``msg_bytes * busbw_factor``: the bytes nccl-tests' busbw assumes per link."""
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float
    num_nodes: int = 1
    launch_s: float = 0.0
    """The launch part of ``time_s`` (:data:`LAUNCH_MODES`); 0 for the alpha-beta algorithms, whose latency holds it."""
    launch: str = "eager"
    host_floor_s: float = 0.0
    """What one host thread takes to launch the call on all the GPUs it drives (``gpus_per_thread`` x
    :data:`~gpucomm.model.hardware.calibration.HOST_LAUNCH_PER_GPU_S`, plus
    :data:`~gpucomm.model.hardware.calibration.HOST_LAUNCH_PER_CHANNEL_S` per channel before NCCL 2.13; eager
    launch, more than one GPU per thread); ``time_s`` is at least this. 0 with one GPU per process, a CUDA graph or
    ``sync``."""
    nccl_version: str = ""
    """The NCCL release followed (``"2.30.7"``), empty where the time is not NCCL's estimate."""
    nccl_time_s: float | None = None
    """NCCL's own estimate of the pair it picks (``ncclTopoGetAlgoTime``, for :attr:`nccl_algorithm`), None outside
    NCCL's tuner."""
    num_channels: int | None = None
    """Channels NCCL runs for this size (``topoGetAlgoInfo``), None outside NCCL's tuner."""
    alternatives: tuple = ()
    """Every (algorithm, protocol, NCCL's estimate in s) NCCL considers for this call, fastest first."""
    note: str = ""
    """Where the number comes from: NCCL's tuner plus fitted terms, or why it is not NCCL."""
    terms: tuple = ()
    """Why this number: ``(name, seconds)`` pairs that sum to ``time_s``, each continuous in the message size
    (:mod:`gpucomm.model.cost_terms`)."""
    nccl_algorithm: str = ""
    """The algorithm NCCL's own estimate picks at this size (``topoGetAlgoInfo``); empty outside NCCL's tuner.
    ``algorithm`` is the pair whose time is reported: the fastest of the pairs NCCL enables, each priced by NCCL's
    estimate plus the terms. Near NCCL's crossovers it can differ from NCCL's pick: NCCL's estimate says two pairs
    tie where the terms say one is faster. Reporting NCCL's pick there would make the time fall as the message grows
    (a step at NCCL's switch point, of the size of the terms' difference), which the model must not; so where the
    two differ the answer is the model's best pair, and NCCL's own is kept here."""
    nccl_protocol: str = ""
    """The protocol of NCCL's own pick (see :attr:`nccl_algorithm`)."""
    time_low_s: float = 0.0
    """The low end of the 10-90 % prediction band of ``time_s``: measured times fall below it for a tenth of the
    cross-validated points of this transport and size band (:func:`~gpucomm.model.hardware.calibration.prediction_band`)."""
    time_high_s: float = 0.0
    """The high end of the 10-90 % prediction band: measured times exceed it for a tenth of those points."""

    def as_dict(self) -> dict:
        """A plain dict, with GB/s keys added for people (1 GB/s = 1e9 B/s).

        Returns
        -------
        dict
            Every field (``terms`` as a dict name -> seconds), plus ``algbw_gb_per_s`` and ``busbw_gb_per_s``.
        """
        out = asdict(self)
        out["alternatives"] = [{"algorithm": a, "protocol": p, "nccl_time_s": t} for a, p, t in self.alternatives]
        out["terms"] = dict(self.terms)
        out["algbw_gb_per_s"] = self.algbw_bytes_per_s / 1e9
        out["busbw_gb_per_s"] = self.busbw_bytes_per_s / 1e9
        return out


def band_transport(fabric: Fabric) -> str:
    """The transport class whose cross-validated errors give a fabric's prediction band
    (:data:`~gpucomm.model.hardware.calibration.TRANSPORTS`): ``network`` across nodes, ``nvlink`` for NVLink (switch,
    mesh or bridge), else ``pcie``.

    Parameters
    ----------
    fabric : Fabric
        How the GPUs connect.

    Returns
    -------
    str

    Examples
    --------
    >>> band_transport(make_fabric("pcie5")), band_transport(make_fabric("nvlink4", num_nodes=2, network="ib_ndr"))
    ('pcie', 'network')
    """
    if fabric.num_nodes > 1:
        return "network"
    return "nvlink" if fabric.link.kind == "nvlink" else "pcie"


def _check_msg_bytes(msg_bytes) -> int:
    if (isinstance(msg_bytes, bool) or not isinstance(msg_bytes, (int, float)) or not 1 <= msg_bytes <= MAX_MSG_BYTES
            or msg_bytes != int(msg_bytes)):
        raise GpucommError(f"message size {msg_bytes!r} bytes is not valid: expected a whole number of bytes "
                           f"from 1 to {MAX_MSG_BYTES} (1 PiB)")
    return int(msg_bytes)


def ring_steps(collective: str, num_ranks: int) -> int:
    """Sequential steps of the ring algorithm: 2(n-1) for all_reduce, n-1 otherwise, 1 for send_recv.

    Parameters
    ----------
    collective : str
        One of :data:`~gpucomm.model.collectives.COLLECTIVES`.
    num_ranks : int
        Ranks ``n`` in the ring, 1 to 1000000.

    Returns
    -------
    int
        ``2(n-1)`` for all_reduce (reduce-scatter then all-gather, Thakur et al. 2005, sec. 4.4);
        ``n-1`` for all_gather, reduce_scatter, all_to_all (sec. 4.1) and for broadcast and reduce
        (a pipelined chain, as NCCL's ring); ``1`` for send_recv.

    Raises
    ------
    GpucommError
        Unknown collective, or ``num_ranks`` not an integer in range.

    Examples
    --------
    >>> ring_steps("all_reduce", 4)
    6
    """
    ring = get_collective(collective).algorithm("ring")
    return ring.steps(check_num_ranks(num_ranks))


def _steps_and_wire(algorithm: str, collective: str, size: int, n: int) -> tuple[int, float]:
    """(sequential steps, bytes per direction on the busiest GPU link) of one algorithm inside a node, as the
    collective's file in :mod:`gpucomm.model.collectives` states them; nothing moves on one rank."""
    if n == 1:
        return 0, 0.0
    algo = get_collective(collective).algorithm(algorithm)
    if algo.power_of_two_ranks and n & (n - 1):
        raise GpucommError(f"algorithm {algorithm!r} ({algo.title}) with {n} ranks: expected a power of two")
    return algo.steps(n), algo.wire_bytes(size, n)


def steps_and_wire_bytes(collective: str, msg_bytes: float, *, num_ranks: int, algorithm: str) -> tuple[int, float]:
    """Sequential steps and bytes per direction on the busiest GPU link of one algorithm, per the cost model.

    Parameters
    ----------
    collective : str
        torch.distributed name.
    msg_bytes : float
        Message size ``S`` in bytes as nccl-tests reports it.
    num_ranks : int
        GPUs taking part.
    algorithm : str
        One of the algorithms :mod:`gpucomm.model.cost` implements for that collective inside a node (not
        ``auto`` or ``hierarchical``).

    Returns
    -------
    (int, float)
        Steps (each pays a per-step latency in the LL protocol) and bytes per direction:
        ``2(n-1)`` and ``2(n-1)/n S`` for a ring all_reduce, ``1`` and ``(1 + 1/n) S`` for NVLS, ...

    Raises
    ------
    GpucommError
        Unknown collective, an algorithm that does not implement it, or ``rhd`` on a rank count that
        is not a power of two.

    Notes
    -----
    The "steps" and "wire bytes" columns of the table in the module docstring, exposed so that a page
    can compare them with nccl-tests' busbw assumption ``S x busbw_factor``.

    Examples
    --------
    >>> steps_and_wire_bytes("all_reduce", 8.0, num_ranks=8, algorithm="ring")
    (14, 14.0)
    >>> steps_and_wire_bytes("all_reduce", 8.0, num_ranks=8, algorithm="nvls")
    (1, 9.0)
    """
    check_collective(collective)
    n = check_num_ranks(num_ranks)
    if algorithm not in ALGORITHMS_FOR[collective] or algorithm == "hierarchical":
        raise GpucommError(f"algorithm {algorithm!r} does not implement {collective} inside a node: expected one of "
                           + ", ".join(a for a in ALGORITHMS_FOR[collective] if a != "hierarchical"))
    return _steps_and_wire(algorithm, collective, int(msg_bytes), n)


def _protocol_costs(fabric: Fabric, steps: int, wire: float, bw: float) -> dict[str, tuple[float, float]]:
    """(latency_s, transfer_s) per protocol of an alpha-beta algorithm: LL (latency per step, half the bandwidth) and
    Simple (a fitted intercept, the full bandwidth)."""
    return {
        "LL": (_ll_latency_s(fabric, steps, 0), wire / (bw * cal.LL_BW_FRACTION.value)),
        "Simple": (cal.SIMPLE_LATENCY_S.value, wire / bw),
    }


def _single_node_cost(collective: str, size: int, n: int, fabric: Fabric, algorithm: str,
                      protocol: str) -> tuple[str, str, float, float]:
    bw = per_gpu_bw_bytes_per_s(fabric, n)
    if algorithm in ("one_shot", "two_shot") and not fabric.p2p:
        raise GpucommError(f"algorithm {algorithm!r} reads peers' memory directly: expected P2P (drop --no-p2p)")
    steps, wire = _steps_and_wire(algorithm, collective, size, n)
    costs = _protocol_costs(fabric, steps, wire, bw)
    if protocol != "auto":  # LL or Simple: collective_cost refuses the others before an alpha-beta path
        costs = {protocol: costs[protocol]}
    best = min(costs, key=lambda p: sum(costs[p]))
    return algorithm, best, *costs[best]


P2P_COLLECTIVES = ("all_to_all", "send_recv")
"""The collectives NCCL runs as point-to-point sends and receives (outside its tuner): :func:`_p2p_cost` inside a node."""

P2P_NOTE = ("NCCL's point-to-point path (a send and a receive per peer, all at once; outside its tuner): channels and "
            "protocol by NCCL's rules (src/enqueue.cc, nccl_p2p), latency NCCL's Ring row for one step x the "
            "transport's fitted scale, the link's delivered bandwidth on the channels in use, launch")
"""``CollectiveCost.note`` of :func:`_p2p_cost`."""


def _p2p_cost(collective: str, size: int, n: int, fabric: Fabric, protocol: str,
              nccl_version: tuple) -> tuple[str, str, dict]:
    """all_to_all and send_recv inside a node as NCCL runs them: one send and one receive per peer, all at once.

    :func:`gpucomm.model.nccl_p2p.p2p_channels` gives each operation its channels by NCCL's rules, continuous in
    size (NCCL's count at every size where it changes, never falling). The channels in use, all the peers' together,
    move data at most at the link's delivered bandwidth (:func:`per_gpu_bw_bytes_per_s`; LL at ``LL_BW_FRACTION`` of
    it), each at most at the rate one channel reaches in NCCL's ring (that bandwidth over ``comm->nChannels``): one
    send to one peer uses a few channels, so it gets a share of the link. The latency is NCCL's tuner row for one
    Ring step (base + one hop, ``tuning.cc``: every peer is one hop away) times the transport's fitted scale
    (:data:`~gpucomm.model.hardware.calibration.TUNER_LATENCY_SCALE`). NCCL picks LL up to 16 KiB per channel
    (:func:`~gpucomm.model.nccl_p2p.p2p_plan`); under ``auto`` the model takes the faster of LL and Simple, so the
    time never falls as the size grows. Returns (algorithm, protocol, terms); ``ring`` is the collective's one
    algorithm key."""
    comm, _ = comm_and_table(fabric, n, nccl_version)
    peers, peer_bytes = (n - 1, size / n) if collective == "all_to_all" else (1, size)
    nvlinks = p2p_nvlinks(fabric, n)
    channels = p2p_channels(peer_bytes, num_ranks=n, comm_channels=comm.num_channels, nvlinks=nvlinks)
    _, wire = _steps_and_wire("ring", collective, size, n)
    share = min(1.0, channels * peers / comm.num_channels)
    hop_row = nt.HW_LATENCY_US["nvlink" if nvlinks else "pci"]["ring"]
    scale = cal.TUNER_LATENCY_SCALE[_latency_transport(fabric, comm.graph("ring"))].value
    options = {}
    for proto in (("LL", "Simple") if protocol == "auto" else (protocol,)):
        if proto not in ("LL", "Simple"):
            raise GpucommError(f"protocol {protocol!r} for {collective}: NCCL's send/recv run LL or Simple; expected one "
                               "of auto, LL, Simple")
        p = nt.PROTOCOLS.index(proto)
        bw = per_gpu_bw_bytes_per_s(fabric, n) * share * (cal.LL_BW_FRACTION.value if proto == "LL" else 1.0)
        latency = (nt.BASE_LATENCY_US["ring"][p] + hop_row[p]) * 1e-6
        if not peers:  # an all_to_all of one rank: nothing moves, as for the collectives on one rank
            options[proto] = {"p2p_latency": 0.0, "transport_latency": 0.0, "p2p_transfer": 0.0}
            continue
        options[proto] = {"p2p_latency": latency, "transport_latency": latency * (scale - 1), "p2p_transfer": wire / bw}
    best = min(options, key=lambda k: (sum(options[k].values()), nt.PROTOCOLS.index(k)))
    return "ring", best, options[best]


def _hierarchical_cost(size: int, n: int, fabric: Fabric, protocol: str) -> tuple[str, str, float, float]:
    """all_reduce across nodes: intra-node reduce-scatter, inter-node ring all_reduce of S/g per GPU,
    intra-node all-gather, pipelined (NCCL streams chunks, so the slower stage sets the pace). One protocol
    for the whole collective, as NCCL picks one per call."""
    nodes = fabric.num_nodes
    g = n // nodes
    intra = fabric.one_node()
    net_bw_per_gpu = min(_net_bw_per_gpu(fabric, g), _gpu_feed_bw(fabric))
    inter_wire = (size / g) * busbw_factor("all_reduce", nodes)
    inter_steps = 2 * (nodes - 1)
    options = {}
    for proto in ((protocol,) if protocol != "auto" else ("LL", "Simple")):
        if g > 1:
            _, _, lat_rs, tr_rs = _single_node_cost("reduce_scatter", size, g, intra, "ring", proto)
        else:
            lat_rs, tr_rs = 0.0, 0.0
        if proto == "LL":
            lat_net, tr_net = _ll_latency_s(fabric, 0, inter_steps), inter_wire / (net_bw_per_gpu * cal.LL_BW_FRACTION.value)
        else:
            lat_net, tr_net = cal.SIMPLE_LATENCY_S.value, inter_wire / net_bw_per_gpu
        latency = max(lat_rs, lat_net) + (lat_rs if g > 1 else 0.0)
        options[proto] = (latency, max(2 * tr_rs, tr_net))  # intra RS + AG vs the network stage, overlapped
    best = min(options, key=lambda p: sum(options[p]))
    return "hierarchical", best, *options[best]


def _net_bw_per_gpu(fabric: Fabric, g: int) -> float:
    """Each GPU's effective share of its node's NICs, per direction, in bytes/s (NET_EFFICIENCY applied)."""
    nics = fabric.nics_per_node or g
    return _network_bw(fabric.network) * nics / g * cal.NET_EFFICIENCY.value


def _gpu_feed_bw(fabric: Fabric) -> float:
    """What one GPU can push towards its NIC, per direction, in bytes/s (:func:`~gpucomm.model.nccl_fabric.nic_feed_bw_bytes_per_s`:
    a PCIe GPU's link, host-staged without P2P or GPUDirect RDMA; an NVLink GPU's host PCIe only without GDR)."""
    return nic_feed_bw_bytes_per_s(fabric)


def _ll_latency_s(fabric: Fabric, intra_steps: float, net_steps: float) -> float:
    """LL start-up plus the steps a chunk waits for: NVLink/PCIe hops inside a node, network hops between nodes."""
    intra = (cal.LL_STEP_LATENCY_S if fabric.p2p else cal.LL_STEP_LATENCY_HOST_STAGED_S).value
    return cal.LL_BASE_LATENCY_S.value + intra_steps * intra + net_steps * cal.NET_STEP_LATENCY_S.value


def _ring_across_nodes_cost(collective: str, size: int, n: int, fabric: Fabric,
                            protocol: str) -> tuple[str, str, float, float]:
    """all_to_all and send_recv across nodes (NCCL's tuner prices the other collectives there): rings through every
    GPU of every node, one ring (channel) per NIC, each carrying its share of the buffer and leaving the node through
    its own NIC. A chunk going round the ring crosses a node boundary on (N-1)/(n-1) of its steps (N nodes, n ranks)
    and waits a network hop there, an intra-node hop elsewhere. all_to_all sends (n-g)/n of every buffer over the
    network, through all of a node's NICs; send_recv crosses it as one flow on one NIC."""
    nodes = fabric.num_nodes
    g = n // nodes
    intra = fabric.one_node()
    intra_bw = per_gpu_bw_bytes_per_s(intra, g) if g > 1 else _gpu_feed_bw(fabric)
    nic_bw = min(_network_bw(fabric.network) * cal.NET_EFFICIENCY.value, _gpu_feed_bw(fabric))
    node_bw = nic_bw * (fabric.nics_per_node or g)  # all of a node's NICs, one ring each
    steps, wire = _steps_and_wire("ring", collective, size, n)
    if collective == "all_to_all":
        transfer = max(size * (g - 1) / n / intra_bw, g * size * (n - g) / n / node_bw)
    else:  # send_recv
        transfer = wire / min(intra_bw, nic_bw)
    net_steps = steps * (nodes - 1) / (n - 1)
    costs = {"LL": (_ll_latency_s(fabric, steps - net_steps, net_steps), transfer / cal.LL_BW_FRACTION.value),
             "Simple": (cal.SIMPLE_LATENCY_S.value, transfer)}
    if protocol != "auto":
        costs = {protocol: costs[protocol]}
    best = min(costs, key=lambda p: sum(costs[p]))
    return "ring", best, *costs[best]


def _check_fits(fabric: Fabric, per_node: int) -> None:
    """Refuse more GPUs per node than the fabric holds, and a ring over more than a pair of bridged cards."""
    if fabric.gpus_per_node is not None and per_node > fabric.gpus_per_node:
        raise GpucommError(f"{per_node} GPUs per node do not fit {fabric.label} ({fabric.gpus_per_node} GPUs per node): "
                           f"expected at most {fabric.gpus_per_node} GPUs per node (use more nodes)")
    most = fabric.max_gpus_per_node
    if most is not None and per_node > most:
        raise GpucommError(f"{per_node} GPUs in one NVLink {fabric.nvlink_generation} switch domain: the largest holds {most} "
                           "(fabric.NVLINK_DOMAIN_MAX_GPUS); expected at most that many GPUs per node (use more nodes)")
    if fabric.gpu is not None and per_node > 2 and fabric.topology != "pairs" and fabric.link.kind == "nvlink":
        if get_gpu(fabric.gpu).nvlink_bridge:
            raise GpucommError(f"{per_node} GPUs of {fabric.gpu!r} over {fabric.link.key!r}: its NVLink bridge joins GPUs two "
                               "by two; expected topology 'pairs' (the ring crosses PCIe between pairs), a PCIe link, "
                               "or 2 GPUs")


def _latency_transport(fabric: Fabric, graph: nt.Graph) -> str:
    """Which :data:`~gpucomm.model.hardware.calibration.TUNER_LATENCY_SCALE` row prices a collective's hops: the
    network across nodes (RoCE apart from InfiniBand and TCPXO), host memory without P2P, else NVLink or PCIe as
    NCCL's graph runs them."""
    if fabric.num_nodes > 1:
        return "roce" if get_network(fabric.network).roce else "net"
    if not fabric.p2p:
        return "shm"
    if graph.type_intra != "NVL":
        return "pci"
    return fabric.link.key if fabric.link.key in cal.TUNER_LATENCY_SCALE else "nvlink"


def _delivered_bw_ratio(fabric: Fabric, n: int, comm: nt.Comm, table: nt.TunerTable, collective: str,
                        algorithm: str) -> float:
    """Large-message bandwidth the link delivers over the bandwidth NCCL plans with, on one node.

    NCCL's graph search quantises each channel's bandwidth to its speed array (``search.cc``) and plans
    with it; the transfer runs at what the links deliver. The delivered ring bus bandwidth is
    :func:`per_gpu_bw_bytes_per_s` (nominal x the measured ring efficiency); NVLS all_reduce delivers
    ``B x NVLS_EFFICIENCY / (1 + 1/n)`` algorithm bandwidth (:data:`~gpucomm.model.hardware.calibration.NVLS_EFFICIENCY`,
    fitted on Hopper; Blackwell's takes NCCL's ratio of ``nvlsEfficiency``, 0.74 / 0.85).
    Across nodes the NIC rate already carries the network efficiency (1.0 is returned)."""
    if fabric.num_nodes > 1:
        return 1.0
    if algorithm in ("nvls", "nvls_tree"):
        planned = table.bw_bytes_per_s.get((collective, algorithm, "Simple"), 0.0)
        if collective != "all_reduce" or not planned:
            return 1.0
        # the fit is Hopper's; other generations keep NCCL's own ratio of NVLS efficiencies (nvlsEfficiency)
        arch = nt.compcap_index(comm.compute_capability)
        arch_ratio = nt.NVLS_EFFICIENCY[arch] / nt.NVLS_EFFICIENCY[nt.ARCHS.index("hopper")]
        return fabric.link.bw_bytes_per_s * cal.NVLS_EFFICIENCY.value * arch_ratio / (1 + 1 / n) / planned
    ring = comm.graph("ring")
    planned_bus = ring.num_channels * ring.bw_intra_gbps * 1e9
    return per_gpu_bw_bytes_per_s(fabric, n) / planned_bus if planned_bus else 1.0


def _pair_row(fabric: Fabric, comm: nt.Comm, table: nt.TunerTable, collective: str, a: str, p: str,
              ratio: float) -> tuple:
    """What pricing one (algorithm, protocol) NCCL enables needs that does not depend on the size, as the row
    :func:`_nccl_cost` unpacks: NCCL's table entries in the units its estimate uses, the correction factors that apply,
    the transport's latency scale, the delivered-over-planned bandwidth ratio (:func:`_delivered_bw_ratio`) and the
    channel rule. :func:`_nccl_cost` then does the size-dependent arithmetic alone, in the order of
    :func:`gpucomm.model.nccl_tuner.algo_time_s`, :func:`gpucomm.model.nccl_tuner.channels_and_threads` and the
    functions of :mod:`gpucomm.model.cost_terms`, so the numbers are theirs to the last bit."""
    key = (collective, a, p)
    # the Tree correction factor (all_reduce; NVLS Tree on Blackwell x86 hosts): NCCL's bucket limit, the continuous
    # factor's last index
    nccl_tree_limit, tree_last = 0, None
    if collective == "all_reduce" and a == "tree":
        nccl_tree_limit, tree_last = 23, 22
    elif collective == "all_reduce" and a == "nvls_tree" and comm.compute_capability >= 100 and comm.cpu_arch == "x86":
        nccl_tree_limit, tree_last = 24, 23
    plateau = None  # Ring/Simple all_reduce across nodes (tuning.cc:647-650)
    if a == "ring" and p == "Simple" and comm.num_nodes > 1 and collective == "all_reduce":
        plateau = nt.RING_PLATEAU_FACTOR["pre_ampere" if comm.compute_capability < 80 else "ampere_and_later"]
    # channels: Ring and Tree drop channels below a size and their continuous count prices the ramp ("ramp"); PAT
    # drops them too ("drop"); NVLS runs a fixed count ("fixed"). CollNet is refused (no fabric enables it,
    # COLLNET_REFUSAL), so NCCL's CollNet Direct channel loop has no row here
    nc, bw_per_channel = comm.num_channels, 0.0
    if a in ("nvls", "nvls_tree"):
        rule = "fixed"
        nc = nt.channels_and_threads(comm, table, a, p, 0)[0]
        bw_per_channel = table.bw_bytes_per_s[key] * ratio / nc
    else:
        rule = "ramp" if a in ("ring", "tree") else "drop"
    cut_base_s = nt.BASE_LATENCY_US["ring"][nt.PROTOCOLS.index(p)] * 1e-6 if a == "ring" and p in CUT_THROUGH_PROTOCOLS \
        else None
    return (a, p,
            table.latency_s.get(key, 0.0) * 1e6, table.bw_bytes_per_s.get(key, 0.0) / 1e9,  # NCCL's estimate: us, GB/s
            nccl_tree_limit, nt.TREE_CORRECTION_FACTOR[p], plateau, comm.num_channels * comm.num_ranks,
            table.latency_s[key], table.bw_bytes_per_s[key],  # the terms: s, bytes/s
            tree_last, cal.TUNER_LATENCY_SCALE[_latency_transport(fabric, comm.graph(a))].value, ratio,
            rule, nc, table.max_threads[(a, p)] * table.thread_thresholds[(a, p)], bw_per_channel, cut_base_s,
            *_ring_fill_row(fabric, comm, collective, a, p))


def _ring_fill_row(fabric: Fabric, comm: nt.Comm, collective: str, a: str, p: str) -> tuple[float, int]:
    """(seconds per byte of a step, ranks x channels) of a ring's Simple fill over NVLink 3 (the A100 SXM4's
    ``nvlink3``; a bridge has its own link) inside a node
    (:func:`~gpucomm.model.cost_terms.ring_fill_s`: the fill is ``coefficient x min(step bytes, nBytes / (ranks x
    channels))``); (0, 1) where there is none."""
    if not (a == "ring" and p == "Simple" and fabric.num_nodes == 1 and fabric.link.key == "nvlink3"):
        return 0.0, 1
    n = comm.num_ranks
    steps = 2 * (n - 1) if collective == "all_reduce" else n - 1
    bw_per_channel = per_gpu_bw_bytes_per_s(fabric, n) / comm.num_channels
    return cal.RING_FILL_STEPS_NVLINK3.value * steps / bw_per_channel, n * comm.num_channels


@functools.lru_cache(maxsize=1024)
def _nccl_plan(fabric: Fabric, n: int, nccl_version: tuple, collective: str) -> tuple:
    """(comm, table, the (algorithm, protocol) pairs NCCL considers for this collective, the delivered-over-planned
    bandwidth ratio per algorithm, a :func:`_pair_row` per pair): none depends on the size (which pairs are enabled is
    fixed per communicator, ``ncclTopoTuneModel``), so a sweep computes them once. The pairs come in NCCL's index
    order (algorithm, then protocol: :func:`~gpucomm.model.nccl_tuner.cost_table_s`), the order of NCCL's tie-break.
    :func:`gpucomm.model.hardware.calibration.using` clears this cache when it changes a parameter."""
    comm, table = comm_and_table(fabric, n, nccl_version)
    candidates = tuple(sorted(nt.cost_table_s(comm, table, collective, 1 << 20),
                              key=lambda k: (nt.ALGORITHMS.index(k[0]), nt.PROTOCOLS.index(k[1]))))
    ratios = {a: _delivered_bw_ratio(fabric, n, comm, table, collective, a) for a in {a for a, _ in candidates}} \
        if n > 1 else {}
    rows = tuple(_pair_row(fabric, comm, table, collective, a, p, ratios[a]) for a, p in candidates) if n > 1 else ()
    return comm, table, candidates, ratios, rows


CUT_THROUGH_PROTOCOLS = ("LL",)
"""Protocols whose ring steps overlap their transfer with their latency (:func:`_nccl_cost`): LL flags every 8-byte
word (``union ncclLLFifoLine``, ``src/include/device.h`` at NCCL v2.30.7-1), so the next GPU reads and forwards
data as it lands; NCCL's estimate adds the steps' latency to the whole transfer. Chosen on the 8x H200 NCCL 2.30.7
sweep (S16, in-sample below 1 MiB for this choice: +26-58 % without it). Against it: 4x V100 over PCIe in a CUDA graph
at 4 KiB (case C41) comes out 17 % fast with it. LL128 (a flag per 128-byte line, forwarded per warp) would overlap as
well, but the A100 sweeps at 4-16 MiB, where NCCL runs it, are then too fast, so it is left additive; Simple waits for
whole slices."""


LATENCY_TERMS = ("nccl_latency", "transport_latency", "alpha_beta_latency", "p2p_latency")
"""The terms that make :attr:`CollectiveCost.latency_s` (size-independent, but for NCCL's ramped plateau factor)."""
TRANSFER_TERMS = ("nccl_bandwidth", "delivered_bandwidth", "channel_ramp", "pipeline_fill", "cut_through",
                  "alpha_beta_bandwidth", "p2p_transfer")
"""The terms that make :attr:`CollectiveCost.transfer_s`."""


def _with_launch(terms: dict, launch_s: float, floor_s: float) -> dict:
    """``terms`` plus ``launch`` and ``host_floor`` (what the host thread adds above the rest: ``time = max(rest,
    floor)``, continuous in size as both are)."""
    out = dict(terms, launch=launch_s)
    out["host_floor"] = max(0.0, floor_s - sum(out.values()))
    return out


NCCL_TERMS = ("nccl_latency", "nccl_bandwidth", "transport_latency", "delivered_bandwidth", "channel_ramp",
              "pipeline_fill", "cut_through")
"""The terms of one (algorithm, protocol) NCCL runs, in the order :attr:`CollectiveCost.terms` lists them (then
``launch`` and ``host_floor``)."""


def _nccl_cost(collective: str, size: int, n: int, fabric: Fabric, algorithm: str, protocol: str,
               nccl_version: tuple, launch: str, gpus_per_thread: int) -> tuple:
    """The fastest (algorithm, protocol) NCCL enables (restricted by ``algorithm`` and ``protocol`` when named), its
    terms, and NCCL's own pick.

    NCCL picks the pair (and, for Ring and Tree, the channel count) minimising its own estimate (``src/enqueue.cc``
    topoGetAlgoInfo); the model prices every enabled pair as NCCL's estimate plus the terms and reports the fastest, a
    minimum of curves that never fall as the size grows, so the time never does either. (Pricing NCCL's pick alone was
    tried: at NCCL's LL -> LL128 switch the LL overlap term makes the time fall by about 1 %, e.g. broadcast on 16 GPUs
    over NVLink 2, and the validation figures were the same.)

    The terms of a pair (:data:`NCCL_TERMS`, each continuous in size, :mod:`gpucomm.model.cost_terms`): NCCL's latency
    (:func:`~gpucomm.model.cost_terms.nccl_latency_s`) and bandwidth (:func:`~gpucomm.model.cost_terms.nccl_bandwidth_s`)
    terms (``tuning.cc``), then what the model adds: the fitted latency scale of the hops' transport
    (:data:`~gpucomm.model.hardware.calibration.TUNER_LATENCY_SCALE`); the bandwidth the links deliver rather than the
    one NCCL plans with (:func:`_delivered_bw_ratio`, the one place the delivered-bandwidth efficiency enters NCCL's
    estimate); for Ring and Tree the channels NCCL runs at this size, where the estimate assumed all
    (:func:`~gpucomm.model.cost_terms.continuous_channels`); the pipeline fill of NVLS
    (:func:`~gpucomm.model.cost_terms.nvls_fill_s`) and of a ring's Simple steps over NVLink 3
    (:func:`~gpucomm.model.cost_terms.ring_fill_s`); for a ring's LL steps, the
    transfer that overlaps their latency (:data:`CUT_THROUGH_PROTOCOLS`); the launch and the host floor
    (:func:`_with_launch`). The size-independent inputs come once per communicator (:func:`_nccl_plan`,
    :func:`_pair_row`); this function does each pair's size-dependent arithmetic inline, in the order of the functions
    named (``tests/model/test_cost_fast_path.py`` checks that the two agree to the bit), and makes a dict of the reported pair's
    terms alone.

    Returns (algorithm, protocol, terms, NCCL's estimate of that pair in s, channels, alternatives, NCCL's own
    (algorithm, protocol), host floor in s)."""
    comm, table, candidates, _, rows = _nccl_plan(fabric, n, nccl_version, collective)
    launch_s = cal.LAUNCH_S[launch].value
    if n == 1:
        times = nt.cost_table_s(comm, table, collective, size)
        pick = [k for k in times if (algorithm == "auto" or k[0] == algorithm) and (protocol == "auto" or k[1] == protocol)]
        if not pick:
            _refuse_pair(collective, n, fabric, algorithm, protocol, nccl_version, candidates)
        alternatives = tuple(sorted(((a, p, t) for (a, p), t in times.items()), key=_third))
        nccl_pick = min(pick, key=lambda k: (times[k], nt.ALGORITHMS.index(k[0]), nt.PROTOCOLS.index(k[1])))
        floor = ct.host_floor_s(gpus_per_thread, launch, 1, nccl_version)
        return (*nccl_pick, _with_launch({}, launch_s, floor), 0.0, 1, alternatives, nccl_pick, floor)
    # the floor depends on the channels only before NCCL 2.13 (cost_terms.host_floor_s)
    fixed_floor = ct.host_floor_s(gpus_per_thread, launch, 0.0, nccl_version) \
        if launch != "eager" or gpus_per_thread <= 1 or tuple(nccl_version) >= cal.PER_CHANNEL_ENQUEUE_UNTIL else None
    # size-dependent quantities every pair shares: NCCL's Tree bucket (nt.algo_time_s), the continuous Tree factor's
    # position (cost_terms.tree_correction_factor), NVLS's chunk size and fill (cost_terms.nvls_fill_s)
    log_size = (size >> 6).bit_length() - 1
    if size <= 32:
        tree_i = None
    else:
        tree_x = math.log2(size / 64)
        tree_i = math.floor(tree_x)
        tree_frac = tree_x - tree_i
    chunk_bytes, fill_chunks = cal.NVLS_CHUNK_BYTES.value, cal.NVLS_PIPELINE_FILL_CHUNKS.value
    step_bytes = cal.RING_SIMPLE_STEP_BYTES.value
    everything = algorithm == "auto" and protocol == "auto"
    alternatives, best, nccl_pick, nccl_pick_time = [], None, None, 0.0
    for (a, p, lat_us, bw_gbps, nccl_tree_limit, tree_row, plateau, plateau_div, nccl_lat, bw, tree_last, scale, ratio,
         rule, nc, per_channel, bw_per_channel, cut_base_s, ring_fill_per_byte, ring_fill_share_of) in rows:
        # NCCL's estimate, nt.algo_time_s
        if 0 <= log_size < nccl_tree_limit:
            bw_gbps *= tree_row[log_size]
        if plateau is not None and size // plateau_div >= 64:
            lat_us *= plateau
        nccl_time = (lat_us * 1 + size / (1000 * bw_gbps)) * 1e-6
        alternatives.append((a, p, nccl_time))
        if not everything and not ((algorithm == "auto" or a == algorithm) and (protocol == "auto" or p == protocol)):
            continue
        # NCCL's pick: the lowest estimate, ties to the lower (algorithm, protocol) index, which comes first in rows
        if nccl_pick is None or nccl_time < nccl_pick_time:
            nccl_pick, nccl_pick_time = (a, p), nccl_time
        # the terms: cost_terms.nccl_latency_s and nccl_bandwidth_s
        if plateau is not None:
            nccl_lat *= 1 + (plateau - 1) * min(1.0, size / plateau_div / 64)
        if tree_last is not None:  # cost_terms.tree_correction_factor
            if tree_i is None:
                bw *= 1.0
            else:
                at_i = tree_row[tree_i] if 0 <= tree_i <= tree_last else 1.0
                at_next = tree_row[tree_i + 1] if 0 <= tree_i + 1 <= tree_last else 1.0
                bw *= at_i + (at_next - at_i) * tree_frac
        nccl_bw = size / bw
        delivered = nccl_bw / ratio
        ramp, fill = 0.0, 0.0
        if rule == "ramp" or rule == "drop":
            # NCCL's loop, nt.channels_and_threads: while nBytes < nc x nThreads x threshold and nc >= 2, nc -= 1
            channels = nc if per_channel <= 0 or size >= nc * per_channel else max(1, min(nc, size // per_channel))
            if rule == "ramp":  # cost_terms.continuous_channels
                cont_channels = min(float(nc), max(1.0, size / per_channel))
                ramp = delivered * (nc / cont_channels - 1)
                if ring_fill_per_byte:  # cost_terms.ring_fill_s
                    fill = ring_fill_per_byte * min(step_bytes, size / ring_fill_share_of)
            else:
                cont_channels = float(channels)
        else:  # "fixed", NVLS: a fixed channel count, and the pipeline fill (cost_terms.nvls_fill_s)
            channels = nc
            cont_channels = float(channels)
            chunks = size / (channels * chunk_bytes)
            fill = max(0.0, min(fill_chunks, chunks - 1)) * chunk_bytes / bw_per_channel
        cut = 0.0
        if cut_base_s is not None:
            steps_latency = (nccl_lat - cut_base_s) * scale
            cut = -min(delivered + ramp + fill, steps_latency)
        values = (nccl_lat, nccl_bw, nccl_lat * (scale - 1), delivered - nccl_bw, ramp, fill, cut, launch_s)
        floor = fixed_floor if fixed_floor is not None else ct.host_floor_s(gpus_per_thread, launch, cont_channels,
                                                                              nccl_version)
        host_floor = max(0.0, floor - sum(values))  # as _with_launch
        total = sum((*values, host_floor))
        # the fastest, ties to the lower (algorithm, protocol) index as NCCL's
        if best is None or total < best[0]:
            best = (total, a, p, values, host_floor, channels, floor)
    if best is None:
        _refuse_pair(collective, n, fabric, algorithm, protocol, nccl_version, candidates)
    _, a, p, values, host_floor, channels, floor = best
    terms = dict(zip(TERMS_WITH_LAUNCH, (*values, host_floor)))
    alternatives.sort(key=_third)
    return (a, p, terms, nccl_pick_time, channels, tuple(alternatives), nccl_pick, floor)


TERMS_WITH_LAUNCH = (*NCCL_TERMS, "launch", "host_floor")
"""The keys of a priced NCCL pair's terms, in order (:func:`_with_launch`)."""


def _refuse_pair(collective: str, n: int, fabric: Fabric, algorithm: str, protocol: str, nccl_version: tuple,
                 candidates: tuple) -> None:
    """Raise the error for an (algorithm, protocol) NCCL does not enable here."""
    on = ", ".join(sorted({a for a, _ in candidates})) or "none"
    raise GpucommError(f"NCCL {'.'.join(map(str, nccl_version))} does not run {collective} with algorithm "
                       f"{algorithm!r}, protocol {protocol!r} on {fabric.link.key!r} ({fabric.topology}, {n} GPUs): "
                       f"expected one of {on}")


_third = operator.itemgetter(2)
"""The estimate of an (algorithm, protocol, estimate) alternative: what they are sorted by."""


def collective_cost(collective: str, msg_bytes: int, *, num_ranks: int, fabric: Fabric | str | Link,
                    algorithm: str = "auto", protocol: str = "auto", launch: str = "eager",
                    nccl_version: tuple | str = DEFAULT_NCCL_VERSION, gpus_per_thread: int = 1) -> CollectiveCost:
    """Predict time, algbw and busbw of one collective.

    Parameters
    ----------
    collective : str
        torch.distributed name, e.g. ``"all_reduce"``.
    msg_bytes : int
        Message size ``S`` in bytes as nccl-tests reports it (per-rank buffer for
        all_reduce, broadcast, reduce; total buffer for all_gather, reduce_scatter, all_to_all).
    num_ranks : int
        GPUs taking part, 1 to 100000 (all nodes together).
    fabric : Fabric, str or Link
        How the GPUs are connected (:func:`gpucomm.model.fabric.make_fabric`,
        :func:`gpucomm.model.fabric.system_fabric`); a link key alone stands for that link through a
        switch, one node, P2P on.
    algorithm : str
        One of :data:`ALGORITHMS`. ``auto`` is NCCL's own choice among the (algorithm, protocol) pairs its
        tuner enables for this GPU generation, GPU count, topology and release (ring, tree, NVLS, NVLS Tree,
        PAT, CollNet where enabled), on one node and across nodes. The algorithms NCCL does not run
        (:data:`NOT_NCCL`: one-shot, two-shot, recursive halving-doubling, and the explicit ``hierarchical``
        schedule across nodes) are alpha-beta estimates, chosen only when named; all_to_all and send_recv,
        outside NCCL's tuner, run as rings (one per NIC across nodes).
    protocol : {"auto", "LL", "LL128", "Simple"}
        ``auto`` takes the cheaper, as NCCL's tuner does (LL128 only where NCCL enables it; the alpha-beta
        algorithms know LL and Simple).
    launch : {"eager", "graph", "sync"}
        Launch term (:data:`LAUNCH_MODES`): eager as nccl-tests without -G, graph inside a CUDA graph (both
        back-to-back calls), sync for one torch.distributed call at a time timed from before its dispatch. Added to
        NCCL's estimate, which has none; for the alpha-beta algorithms, whose latencies were fitted on eager calls,
        the eager launch is split out of the fitted latency and this one added.
    nccl_version : tuple or str
        NCCL release followed (default :data:`~gpucomm.model.nccl_fabric.DEFAULT_NCCL_VERSION`): which
        algorithms and protocols exist and are enabled (NVLS from 2.17, PAT from 2.23, LL128 per architecture).
    gpus_per_thread : int
        GPUs whose collectives one host thread launches on every call, 1 to 72: nccl-tests ``-g N`` in one
        process drives N; one process per GPU (``torchrun``, ``mpirun ... -g 1``) drives 1 (default). With eager
        launch and more than one, back-to-back calls take at least ``gpus_per_thread`` x
        :data:`~gpucomm.model.hardware.calibration.HOST_LAUNCH_PER_GPU_S` (a fit; ``host_floor_s``), plus, before
        NCCL 2.13, :data:`~gpucomm.model.hardware.calibration.HOST_LAUNCH_PER_CHANNEL_S` per channel in use.

    Returns
    -------
    CollectiveCost

    Raises
    ------
    GpucommError
        Unknown collective, link, algorithm or protocol; an algorithm that does not apply (NVLS on
        A100, rhd on 6 ranks, one_shot without P2P, tree across nodes); ``num_ranks`` not divisible by
        the fabric's nodes, more GPUs per node than it holds, more than 2 GPUs of a bridged card
        outside ``pairs``; sizes or counts out of range.

    Notes
    -----
    For broadcast, reduce, all_gather, reduce_scatter and all_reduce with ``auto`` or an NCCL algorithm, the
    choice and its estimate are NCCL's tuner (:mod:`gpucomm.model.nccl_tuner` on the communicator of
    :func:`gpucomm.model.nccl_fabric.fabric_to_comm`), and ``time = launch + latency + transfer`` adds the
    terms NCCL leaves out (:func:`_nccl_cost`). Otherwise (all_to_all, send_recv, the algorithms of
    :data:`NOT_NCCL`) ``t = alpha + wire_bytes / B`` per protocol (module docstring). ``algbw = S / t`` and
    ``busbw = algbw * busbw_factor`` exactly as nccl-tests defines them.

    Examples
    --------
    Llama-3-70B TP=4 activation (64 MiB) on 4x A100 NVLink: 603 us measured with nccl-tests in Baobao
    Algorithm Notes' article (:func:`gpucomm.model.measurements.llama70b_tp4_4xa100`); the jointly calibrated model
    is 15 % fast there, beyond its 10-90 % band (no parameter is fitted to that point). ``terms`` says where the time
    goes; ``time_low_s`` and ``time_high_s`` the band.

    >>> cost = collective_cost("all_reduce", 64 * 2**20, num_ranks=4, fabric="nvlink3")
    >>> round(cost.time_s * 1e6), cost.algorithm, cost.protocol
    (514, 'ring', 'Simple')
    >>> {name: round(s * 1e6, 1) for name, s in cost.terms if s}  # doctest: +NORMALIZE_WHITESPACE
    {'nccl_latency': 28.8, 'nccl_bandwidth': 419.4, 'transport_latency': 6.4, 'delivered_bandwidth': 21.6,
     'pipeline_fill': 34.2, 'launch': 3.5}
    >>> round(cost.time_low_s * 1e6), round(cost.time_high_s * 1e6)
    (504, 573)
    """
    check_collective(collective)
    n = check_num_ranks(num_ranks, maximum=100_000)
    size = _check_msg_bytes(msg_bytes)
    if algorithm in ("collnet_direct", "collnet_chain"):
        raise GpucommError(f"algorithm {algorithm!r}: {COLLNET_REFUSAL} {', '.join(ALGORITHMS)}")
    if algorithm not in ALGORITHMS:
        raise GpucommError(f"unknown algorithm {algorithm!r}: expected one of {', '.join(ALGORITHMS)}")
    if protocol != "auto" and protocol not in PROTOCOLS:
        raise GpucommError(f"unknown protocol {protocol!r}: expected auto or one of {', '.join(PROTOCOLS)}")
    if launch not in LAUNCH_MODES:
        raise GpucommError(f"unknown launch mode {launch!r}: expected one of {', '.join(LAUNCH_MODES)}")
    if isinstance(gpus_per_thread, bool) or not isinstance(gpus_per_thread, int) or not 1 <= gpus_per_thread <= 72:
        raise GpucommError(f"gpus_per_thread {gpus_per_thread!r}: expected an integer from 1 to 72")
    nccl_version = parse_nccl_version(nccl_version)
    fabric = as_fabric(fabric)
    uses_nccl, p2p_path, note_head, note_tail, version_text, factor, transport = _call_setup(
        collective, n, fabric, algorithm, protocol, launch, nccl_version, gpus_per_thread)
    multi_node = fabric.num_nodes > 1

    nccl_time, channels, alternatives, nccl_pick = None, None, (), ("", "")
    launch_s = cal.LAUNCH_S[launch].value
    if uses_nccl:
        algo, proto, terms, nccl_time, channels, alternatives, nccl_pick, host_floor_s = _nccl_cost(
            collective, size, n, fabric, algorithm, protocol, nccl_version, launch, gpus_per_thread)
        note = note_head
        if (algo, proto) != nccl_pick:
            note += f" (NCCL's own estimate picks {nccl_pick[0]}/{nccl_pick[1]})"
        note += note_tail
    else:
        note = note_head
        if p2p_path:
            algo, proto, terms = _p2p_cost(collective, size, n, fabric, protocol, nccl_version)
        else:
            if multi_node:
                options = []
                if collective == "all_reduce" and algorithm in ("auto", "hierarchical"):
                    options.append(_hierarchical_cost(size, n, fabric, protocol))
                if algorithm in ("auto", "ring"):
                    options.append(_ring_across_nodes_cost(collective, size, n, fabric, protocol))
            else:
                options = [_single_node_cost(collective, size, n, fabric, algorithm, protocol)]
            algo, proto, latency_s, transfer_s = min(options, key=lambda o: o[2] + o[3])
            # the alpha-beta latencies were fitted on eagerly launched calls: the eager launch is split out of them, so
            # that a CUDA graph lowers these algorithms' time as it lowers NCCL's
            latency_s = max(latency_s - cal.LAUNCH_S["eager"].value, 0.0)
            terms = {"alpha_beta_latency": latency_s, "alpha_beta_bandwidth": transfer_s}
        host_floor_s = ct.host_floor_s(gpus_per_thread, launch, 0, nccl_version)
        terms = _with_launch(terms, launch_s, host_floor_s)
    time_s = sum(terms.values())
    latency_s = sum([terms.get(k, 0.0) for k in LATENCY_TERMS])
    transfer_s = sum([terms.get(k, 0.0) for k in TRANSFER_TERMS])
    algbw = size / time_s
    low, high = cal.prediction_band(transport, size)
    return CollectiveCost(
        collective=collective, algorithm=algo, protocol=proto, link=fabric.link.key, p2p=fabric.p2p, num_ranks=n,
        msg_bytes=size, time_s=time_s, latency_s=latency_s, transfer_s=transfer_s, bus_bytes=size * factor,
        algbw_bytes_per_s=algbw, busbw_bytes_per_s=algbw * factor, num_nodes=fabric.num_nodes,
        launch_s=launch_s, launch=launch, host_floor_s=host_floor_s,
        nccl_version=version_text, nccl_time_s=nccl_time,
        num_channels=channels, alternatives=alternatives, note=note, terms=tuple(terms.items()),
        nccl_algorithm=nccl_pick[0], nccl_protocol=nccl_pick[1],
        time_low_s=time_s * low, time_high_s=time_s * high,
    )


@functools.lru_cache(maxsize=4096)
def _call_setup(collective: str, n: int, fabric: Fabric, algorithm: str, protocol: str, launch: str,
                nccl_version: tuple, gpus_per_thread: int) -> tuple:
    """The checks of :func:`collective_cost` that follow its arguments' own and what it derives from them without the
    size (nothing calibrated, so no parameter change can leave it stale): (whether NCCL's tuner prices the call,
    whether all_to_all/send_recv take NCCL's point-to-point path, the note before and after NCCL's pick, the NCCL
    release as reported, the busbw factor, the transport of the prediction band). Raises the errors
    :func:`collective_cost` documents, in its order."""
    n_node = n // fabric.num_nodes
    if n % fabric.num_nodes:
        raise GpucommError(f"{n} GPUs over {fabric.num_nodes} nodes: expected a multiple of the node count")
    _check_fits(fabric, n_node)
    if gpus_per_thread > n_node:
        raise GpucommError(f"gpus_per_thread {gpus_per_thread}: one host thread drives GPUs of its own node, and a node "
                           f"has {n_node} of the {n} GPUs; expected 1 to {n_node}")
    if fabric.inter_socket is not None and fabric.topology == "pairs" and n_node <= 2:
        raise GpucommError(f"inter-socket link {fabric.inter_socket!r} with {n} GPUs of a bridged pair: their traffic stays "
                           "on the NVLink bridge; expected more than 2 GPUs per node, or no inter-socket link")
    uses_nccl = collective in nt.COLLECTIVES and (algorithm == "auto" or (algorithm in NCCL_ALGORITHMS and (
        algorithm in nt.ALGORITHMS_FOR[collective])))
    if algorithm != "auto" and algorithm not in ALGORITHMS_FOR[collective] and not uses_nccl:
        raise GpucommError(f"algorithm {algorithm!r} does not implement {collective}: expected one of "
                           f"auto, {', '.join(ALGORITHMS_FOR[collective])}")
    multi_node = fabric.num_nodes > 1
    # all_to_all and send_recv inside a node: NCCL's point-to-point path, priced by its own rules (_p2p_cost)
    p2p_path = not multi_node and collective in P2P_COLLECTIVES and algorithm in ("auto", "ring")
    if algorithm == "hierarchical" and not multi_node:
        raise GpucommError("algorithm 'hierarchical' needs several nodes: expected --nodes 2 or more")
    if multi_node and algorithm not in ("auto", "hierarchical", "ring") and not uses_nccl:
        accepted = "auto, ring or hierarchical" if collective == "all_reduce" else "auto or ring"
        raise GpucommError(f"algorithm {algorithm!r} across {fabric.num_nodes} nodes is not modelled: expected {accepted}")
    note_head, note_tail = NOT_NCCL.get(algorithm, "alpha-beta"), ""
    if uses_nccl:
        note_head = (f"NCCL {'.'.join(map(str, nccl_version))} tuner's estimate of each pair it enables, plus fitted "
                     f"terms (launch ({launch}), latency scale of the transport, delivered link bandwidth, channel ramp, "
                     "pipeline fill); the fastest reported")
        if not fabric.p2p:
            note_tail += "; bandwidth input: the host-staged calibration (NCCL's tuner has no host-staging model)"
        if multi_node:
            note_tail += "; NIC rate x the network efficiency calibration"
    else:
        if not p2p_path and protocol not in ("auto", "LL", "Simple"):
            raise GpucommError(f"protocol {protocol!r} with {collective} {'across nodes' if multi_node else algorithm}: the "
                               "alpha-beta algorithms know LL and Simple; expected one of auto, LL, Simple")
        if p2p_path:
            note_head = P2P_NOTE
    version_text = ".".join(map(str, nccl_version)) if uses_nccl else ""
    return (uses_nccl, p2p_path, note_head, note_tail, version_text, busbw_factor(collective, n),
            band_transport(fabric))


def all_reduce_time_s(msg_bytes: int, num_ranks: int, *, fabric: Fabric | str | Link, algorithm: str = "auto",
                      protocol: str = "auto") -> float:
    """Predicted time in s of one all_reduce.

    Parameters
    ----------
    msg_bytes : int
        Message size ``S`` in bytes (per-rank buffer, as nccl-tests reports it).
    num_ranks : int
        GPUs taking part.
    fabric : Fabric, str or Link
        How the GPUs are connected, as :func:`collective_cost`.
    algorithm, protocol : str
        As :func:`collective_cost`.

    Returns
    -------
    float
        ``collective_cost("all_reduce", ...).time_s``, in s.

    Raises
    ------
    GpucommError
        As :func:`collective_cost`.

    Examples
    --------
    >>> round(all_reduce_time_s(64 * 2**20, 4, fabric=make_fabric("pcie4", p2p=False)) * 1e3, 1)
    9.3
    """
    return collective_cost("all_reduce", msg_bytes, num_ranks=num_ranks, fabric=fabric, algorithm=algorithm,
                           protocol=protocol).time_s


def alpha_beta_time_s(msg_bytes: float, *, alpha_s: float, bw_bytes_per_s: float,
                      collective: str = "all_reduce", num_ranks: int = 2) -> float:
    """Plain alpha-beta time ``alpha + S * busbw_factor / B`` in s, for fitted parameters.

    Parameters
    ----------
    msg_bytes : float
        Message size ``S`` in bytes, as nccl-tests reports it.
    alpha_s : float
        Fixed cost per operation ``alpha``, in s, >= 0.
    bw_bytes_per_s : float
        Bus bandwidth ``B`` in bytes/s (per direction, the rate busbw measures), > 0.
    collective : str
        One of :data:`~gpucomm.model.collectives.COLLECTIVES`; sets ``busbw_factor``.
    num_ranks : int
        Ranks ``n``, >= 1.

    Returns
    -------
    float
        Time in s.

    Raises
    ------
    GpucommError
        If ``alpha_s`` is negative, ``bw_bytes_per_s`` not positive, the collective unknown or
        ``num_ranks`` not a positive integer.

    References
    ----------
    Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2", Parallel
    Computing 20(3), 1994: ``t = alpha + n / B`` for ``n`` bytes; here ``n`` is the bytes the busiest
    link carries, ``S x busbw_factor`` (nccl-tests ``doc/PERFORMANCE.md``).

    Examples
    --------
    >>> alpha_beta_time_s(1e6, alpha_s=1e-5, bw_bytes_per_s=1e9, num_ranks=2)
    0.00101
    """
    if alpha_s < 0:
        raise GpucommError(f"alpha {alpha_s!r} s must be >= 0")
    if not bw_bytes_per_s > 0:
        raise GpucommError(f"bandwidth {bw_bytes_per_s!r} bytes/s must be positive")
    return alpha_s + msg_bytes * busbw_factor(collective, num_ranks) / bw_bytes_per_s


def wire_bytes_per_link(collective: str, msg_bytes: float, *, num_ranks: int, algorithm: str) -> float:
    """Bytes the busiest GPU link carries per direction in one collective, per the cost model.

    Parameters
    ----------
    collective : str
        torch.distributed name.
    msg_bytes : float
        Message size ``S`` in bytes as nccl-tests reports it.
    num_ranks : int
        GPUs taking part.
    algorithm : str
        An algorithm that implements the collective inside a node (as :func:`steps_and_wire_bytes`).

    Returns
    -------
    float
        The second value of :func:`steps_and_wire_bytes`, in bytes.

    Raises
    ------
    GpucommError
        As :func:`steps_and_wire_bytes`.

    Examples
    --------
    >>> wire_bytes_per_link("all_reduce", 8.0, num_ranks=8, algorithm="ring")
    14.0
    >>> wire_bytes_per_link("all_reduce", 8.0, num_ranks=8, algorithm="nvls")
    9.0
    """
    return steps_and_wire_bytes(collective, msg_bytes, num_ranks=num_ranks, algorithm=algorithm)[1]
