"""NCCL's own cost model: the tuner of ``src/graph/tuning.cc`` (NCCL v2.30.7-1), in Python.

NCCL picks an algorithm and a protocol for every collective call by estimating its time with
a two-term model built once per communicator (``ncclTopoTuneModel``) and evaluated per call
(``ncclTopoGetAlgoTime``)::

    time_us = latency_us[coll][algo][proto] * latCount + nBytes / (1000 * bandwidth_GBps[coll][algo][proto])

* the **latency** is a base latency per (algorithm, protocol) plus, per step of the algorithm,
  a hardware latency that depends on the transport of the hop: NVLink, PCI (PCIe P2P or host
  memory), or the network;
* the **bandwidth** is the bus bandwidth of the channels that NCCL's topology search found
  (``graph.nChannels x graph.bwIntra`` or ``bwInter``), scaled by the protocol's efficiency
  (LL: data and flag share each 8-byte word; LL128: 120 of 128 bytes carry data; Simple: all)
  and capped by per-architecture maxima, then converted from bus to algorithm bandwidth.

This module mirrors that code: same tables, same refinements, same choice
(``updateCollCostTable`` + ``topoGetAlgoInfo`` in ``src/enqueue.cc``), with SI units at the
interface (``latency_s``, ``bw_bytes_per_s``) and NCCL's own units inside (``_us``, ``_gbps`` with
GB = 1e9 bytes, as ``nBytes / (1000 * bw)`` microseconds implies). Every constant cites its file
and line at the tag; :data:`SOURCE` is the tree it comes from.

What the tuner is, and what it is not
-------------------------------------
NCCL's tuner ranks alternatives; it does not predict wall-clock time. It leaves out the kernel
launch (a few microseconds eager, less in a CUDA graph), the time for the channels to ramp up
at mid sizes (it assumes all ``graph.nChannels`` at full speed from the first byte; the
channel count is cut only after the choice, in ``topoGetAlgoInfo``, see
:func:`channels_and_threads`), the pipeline fill of chunked transfers, and any host-side
overhead of the caller. Its bandwidth inputs come from the topology search (nominal link rates
from ``src/graph/topo.h``), not from measurement. :func:`search_graph` reproduces that search
for the systems this project models (a simplification, said there).

Simplifications
---------------
* Costs and refinements are those of v2.30.7-1 for every version; ``nccl_version`` changes only
  what NCCL *enables* (algorithm introduction, LL128 per architecture) and the NVLS bandwidth
  formula, which changed in 2.28 and moves the GPU count at which NVLS wins
  (:data:`RELEASE_CHANGES` lists the differences).
* One compute capability for all GPUs (NCCL's ``minCompCap == maxCompCap``), the same number of
  GPUs in every node, sum reductions, no tuner plugin, no ``NCCL_ALGO``/``NCCL_PROTO`` overrides
  (pass ``algorithms``/``protocols`` to :func:`choose` instead).
* CollNet (IB SHARP) is modelled only when :attr:`Comm.collnet_enable` is set; its head count and
  plugin capabilities are inputs.

References
----------
NCCL v2.30.7-1, https://github.com/NVIDIA/nccl/tree/v2.30.7-1: ``src/graph/tuning.cc`` (the
model), ``src/enqueue.cc`` (its use), ``src/graph/search.cc`` and ``src/graph/connect.cc``
(graphs and channels), ``src/graph/topo.h`` (link rates), ``src/include/device.h``,
``src/include/comm.h``, ``src/include/graph.h``, ``src/include/plugin/nccl_tuner.h``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from gpucomm import GpucommError

NCCL_TAG = "v2.30.7-1"
SOURCE = f"https://github.com/NVIDIA/nccl/tree/{NCCL_TAG}"
"""The NCCL tree every ``file:line`` in this module refers to."""

# ----------------------------------------------------------------------------------------------- names
# Indices as in src/include/plugin/nccl_tuner.h:28-40 (NCCL_ALGO_*, NCCL_PROTO_*) and
# src/include/nccl_common.h:74-78 (ncclFunc_t): tables below are written in that order.
ALGORITHMS = ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat")
"""NCCL's algorithms, in ``NCCL_ALGO_*`` order (``src/include/plugin/nccl_tuner.h:28-34``)."""
PROTOCOLS = ("LL", "LL128", "Simple")
"""NCCL's protocols, in ``NCCL_PROTO_*`` order (``src/include/plugin/nccl_tuner.h:38-40``)."""
ALGORITHM_NAMES = {"tree": "Tree", "ring": "Ring", "collnet_direct": "CollNetDirect", "collnet_chain": "CollNetChain",
                   "nvls": "NVLS", "nvls_tree": "NVLSTree", "pat": "PAT"}
"""How NCCL prints each algorithm, and how ``NCCL_ALGO`` spells it (``ncclAlgoStr``, ``src/init.cc``), in
``NCCL_ALGO_*`` order."""


def pair_name(algorithm: str, protocol: str) -> str:
    """An (algorithm, protocol) pair as NCCL's logs print it, e.g. ``pair_name("nvls_tree", "Simple")`` is ``"NVLSTree/Simple"``.

    Parameters
    ----------
    algorithm : str
        One of :data:`ALGORITHMS`.
    protocol : str
        One of :data:`PROTOCOLS`.

    Returns
    -------
    str
        ``"<NCCL's algorithm name>/<protocol>"`` (:data:`ALGORITHM_NAMES`).

    Raises
    ------
    KeyError
        For an algorithm NCCL does not have (the alpha-beta algorithms have no NCCL name).

    Examples
    --------
    >>> pair_name("ring", "LL128")
    'Ring/LL128'
    """
    return f"{ALGORITHM_NAMES[algorithm]}/{protocol}"
COLLECTIVES = ("broadcast", "reduce", "all_gather", "reduce_scatter", "all_reduce")
"""The collectives the tuner models, in ``ncclFunc_t`` order (``src/include/nccl_common.h:74-78``)."""
HARDWARE = ("nvlink", "pci", "net")
"""Transport classes of a hop (``NCCL_HW_NVLINK/PCI/NET``, ``src/include/plugin/nccl_tuner.h:45-47``)."""
ARCHS = ("volta", "ampere", "hopper", "blackwell")
"""Rows of the per-architecture tables (``NCCL_*_COMPCAP_IDX``, ``src/include/plugin/nccl_tuner.h:50-53``)."""
PATH_TYPES = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS")
"""Path types, best first, as NCCL prints them (``PATH_*``, ``src/include/graph.h:117-154``)."""
TREE_PATTERNS = ("balanced_tree", "split_tree", "tree")
"""Tree graph patterns 1-3 (``NCCL_TOPO_PATTERN_*``, ``src/include/graph.h:160-166``)."""

ALGORITHMS_FOR = {
    "broadcast": ("ring",),
    "reduce": ("ring",),
    "all_gather": ("ring", "collnet_direct", "nvls", "pat"),
    "reduce_scatter": ("ring", "collnet_direct", "nvls", "pat"),
    "all_reduce": ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree"),
}
"""Algorithms the tuner costs for each collective (``tuning.cc:294-298``)."""

# ----------------------------------------------------------------------------------------------- tuner constants
# src/graph/tuning.cc:148-212 (ncclTunerConstantsDefaults), rows in ALGORITHMS order, columns in PROTOCOLS order.
BASE_LATENCY_US = MappingProxyType({
    "tree": (6.8, 14.0, 8.4), "ring": (6.6, 14.0, 8.4),
    "collnet_direct": (0.0, 0.0, 0.0), "collnet_chain": (0.0, 0.0, 0.0),
    "nvls": (0.0, 0.0, 0.0), "nvls_tree": (0.0, 0.0, 0.0),
    "pat": (8.0, 8.0, 8.0),
})
"""``baseLatencies[algo][proto]`` in microseconds (``tuning.cc:150-155``): paid once per collective."""

HW_LATENCY_US = MappingProxyType({
    "nvlink": MappingProxyType({
        "tree": (0.6, 1.25, 4.0), "ring": (0.6, 1.9, 3.4),
        "collnet_direct": (0.0, 0.0, 3.7), "collnet_chain": (0.0, 0.0, 2.8),
        "nvls": (0.0, 0.0, 25.0), "nvls_tree": (0.0, 0.0, 25.0),
        "pat": (0.0, 0.0, 4.0)}),
    "pci": MappingProxyType({
        "tree": (1.0, 1.9, 4.0), "ring": (1.0, 2.5, 5.7),
        "collnet_direct": (0.0, 0.0, 3.7), "collnet_chain": (0.0, 0.0, 2.8),
        "nvls": (0.0, 0.0, 0.0), "nvls_tree": (0.0, 0.0, 0.0),
        "pat": (0.0, 0.0, 4.0)}),
    "net": MappingProxyType({
        "tree": (5.0, 8.5, 14.0), "ring": (2.7, 4.0, 14.0),
        "collnet_direct": (0.0, 0.0, 31.0), "collnet_chain": (0.0, 0.0, 30.0),
        "nvls": (0.0, 0.0, 18.0), "nvls_tree": (0.0, 0.0, 20.9),
        "pat": (0.0, 0.0, 14.0)}),
})
"""``hwLatencies[hw][algo][proto]`` in microseconds per step (``tuning.cc:157-175``): NVLink 157-163,
PCI 164-169 (PCIe P2P and host-memory/SHM paths alike: every intra-node path that is not
``PATH_NVL``), network 170-175."""

LL_MAX_BW_GBPS = (
    (39.0, 39.0, 20.4),
    (87.7, 22.5, 19.0),
    (141.0, 45.0, 35.0),
    (2 * 141.0, 2 * 45.0, 2 * 35.0),
)
"""``llMaxBws[index1][index2]`` in GB/s (``tuning.cc:178-183``): the LL protocol's bus-bandwidth ceiling.
``index1`` is the architecture on one node and the CPU vendor across nodes (0 Intel, 1 AMD or mixed,
``tuning.cc:268-271``); ``index2`` is 1, 2 or more nodes (``tuning.cc:267``)."""

PER_CH_MAX_RING_LL128_BW_GBPS = ((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 36.7), (40.0, 40.0, 40.0))
"""``perChMaxRingLL128Bws[arch][nodes]`` in GB/s per channel (``tuning.cc:185-190``)."""
PER_CH_MAX_TREE_LL128_BW_GBPS = ((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 29.0), (55.6, 31.67, 20.0))
"""``perChMaxTreeLL128Bws[arch][nodes]`` in GB/s per channel (``tuning.cc:192-197``)."""
PER_CH_MAX_TREE_BW_GBPS = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (38.7, 41.4, 36.0), (70.0, 42.8, 24.0))
"""``perChMaxTreeBws[arch][nodes]`` in GB/s per channel (``tuning.cc:199-204``), the Tree all_reduce cap."""
PER_CH_MAX_NVLS_TREE_BW_GBPS = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (0.0, 57.7, 45.5), (0.0, 96.0, 80.0))
"""``perChMaxNVLSTreeBws[arch][nodes]`` in GB/s per channel (``tuning.cc:206-211``)."""
NVLS_EFFICIENCY = (0.0, 0.0, 0.85, 0.74)
"""``nvlsEfficiency[arch]`` (``tuning.cc:139-144``), since 2.28: NVLS bus bandwidth per unit of graph bandwidth."""

NVLS_ALG_BW_RATIO_2_19 = 5.0 / 6.0
"""NVLS and NVLS Tree bus-to-algorithm bandwidth ratio from 2.19 to 2.27 (``tuning.cc`` at v2.27.7-1:324);
from 2.28 it is nRanks/nsteps like Ring (``tuning.cc:379``)."""

RING_LL_BW_FACTOR = 0.5
"""Ring/LL bus bandwidth = min(llMaxBw, 0.5 x busBw) (``tuning.cc:327``): LL sends 4 bytes of data with
4 bytes of flag in every 8-byte store (``union ncclLLFifoLine``, ``src/include/device.h``)."""
LL128_BW_FACTOR = 0.92
"""Ring/LL128 efficiency (``tuning.cc:329``; the comment there: "120.0/128.0", the 8 flag bytes of each
128-byte line, ``NCCL_LL128_DATAELEMS`` / ``NCCL_LL128_LINEELEMS``, ``src/include/device.h:110-112``)."""
TREE_ALL_REDUCE_BW_FACTOR = 0.92
"""Tree all_reduce efficiency, every protocol (``tuning.cc:330-331``), before the per-protocol factors."""
TREE_LL_BW_FACTOR = 1.0 / 3.8
"""Tree/LL bus bandwidth = min(busBw / 3.8, llMaxBw) (``tuning.cc:332``)."""
TREE_LL128_BW_FACTOR_ONE_NODE = 7.0 / 9.0
"""Tree/LL128 on one node (``tuning.cc:335``); across nodes 120/128."""
TREE_PATTERN_TREE_FACTOR = 0.85
"""Tree bandwidth penalty when the tree graph fell back to ``NCCL_TOPO_PATTERN_TREE`` (``tuning.cc:336``)."""
PAT_BW_FACTOR = 0.75
"""PAT bus bandwidth factor (``tuning.cc:337``)."""
COLLNET_DIRECT_HOPPER_FACTOR = 0.85
"""CollNet Direct all_reduce on sm90 and later (``tuning.cc:348``)."""
COLLNET_AG_RS_INTER_FACTOR = 0.9
"""CollNet Direct all_gather/reduce_scatter: ppn x min(bwIntra, 0.9 bwInter) (``tuning.cc:342``)."""
COLLNET_DIRECT_ARITY_LATENCY_US = 0.4
"""CollNet Direct serialization latency per local rank (``tuning.cc:420-421``)."""
PAT_LATENCY_PER_RANK_US = 2.8
"""PAT's linear latency term per rank (``tuning.cc:433``); its log term is log2(nNodes) x netLat / 3.5 (``:432``)."""
PAT_LOG_LATENCY_DIVISOR = 3.5
"""Divisor of the network latency in PAT's log term (``tuning.cc:432``)."""
NET_OVERHEAD_US = MappingProxyType({"intel": 1.0, "amd": 2.0, "other": 1.0})
"""Network post overhead per ring step across nodes, by x86 CPU vendor (``tuning.cc:228-233``);
tripled for Simple (``tuning.cc:408``)."""
NET_OVERHEAD_SIMPLE_FACTOR = 3.0
"""Simple's network overhead multiplier (``tuning.cc:408``)."""
RING_PLATEAU_FACTOR = MappingProxyType({"pre_ampere": 1.9, "ampere_and_later": 1.4})
"""Multi-node Ring/Simple all_reduce latency multiplier once each rank's share of a channel is >= 64 bytes,
"plateau effect of ring" (``tuning.cc:647-650``): 1.9 below sm80, 1.4 from sm80."""
TREE_CORRECTION_FACTOR = MappingProxyType({
    "LL": (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0),
    "LL128": (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0),
    "Simple": (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9),
})
"""``treeCorrectionFactor[proto][log2(nBytes/64)]`` (``tuning.cc:620-627``): Tree all_reduce bandwidth
multipliers for 64 B .. 256 MiB, "Trees are not perfectly sticking to the model for medium sizes"."""

# ----------------------------------------------------------------------------------------------- threads, channels
NCCL_STEPS = 8
"""FIFO slots per connection (``src/include/device.h:26``)."""
WARP_SIZE = 32
"""``src/include/device.h:90``."""
MAXCHANNELS = 64
"""``src/include/device.h:91`` (32 before 2.2x); the ring search looks for at most half (``init.cc:1177``)."""
NCCL_MAX_NTHREADS = 640
"""``src/include/device.h:93``: NVLS, CollNet, Tree and PAT kernels."""
NCCL_SIMPLE_MAX_NTHREADS = 512
"""``src/include/device.h:95``."""
NCCL_LL_MAX_NTHREADS = 512
"""``src/include/device.h:97``."""
NCCL_LL128_MAX_NTHREADS = 640
"""``src/include/device.h:114``."""
THREAD_THRESHOLD = MappingProxyType({"LL": 8, "LL128": 8, "Simple": 64})
"""Bytes of work per thread before NCCL adds threads or channels (``NCCL_*_THREAD_THRESHOLD``,
``src/include/comm.h:49-51``); Ring/LL's is multiplied by nRanks (``tuning.cc:593``), CollNet's is 512 (``:594-595``)."""
NVLS_CHANNELS = MappingProxyType({"sm90": 16, "sm100_one_node": 24, "sm100_multi_node": 32})
"""Default NVLS compute channels (``src/transport/nvls.cc:155-157``, ``:209-214``)."""
NCCL_MAX_NVLS_ARITY = 32
"""``src/include/device.h:213``."""
NCCL_MAX_DIRECT_ARITY = 7
"""``src/include/device.h:199``: CollNet needs at most 8 local ranks (``enqueue.cc`` updateCollCostTable)."""

# ----------------------------------------------------------------------------------------------- topology constants
NVLINK_BW_GBPS = MappingProxyType({60: 18.0, 70: 20.0, 80: 20.0, 86: 12.0, 90: 20.6, 100: 40.1})
"""Per-NVLink bandwidth NCCL assumes, by compute capability (``src/graph/topo.h:19-24``; chosen by
``ncclTopoNVLinkBw``, ``topo.h:274-282``: sm86 12, other sm8x 20, sm9x 20.6, sm100+ 40.1)."""
PCI_BW_GBPS = MappingProxyType({3: 12.0, 4: 24.0, 5: 48.0, 6: 96.0})
"""PCIe x16 bandwidth NCCL assumes per generation: width x lane rate / 80 with lane rates 60/120/240/480
(x100 Mb/s, ``src/graph/topo.cc:545-556``, ``:657``); ``PCI_BW`` = 12 for Gen3 (``topo.h:25``)."""
SPEED_ARRAY_INTRA_GBPS = MappingProxyType({
    "pre_hopper": (40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0),
    "hopper": (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0),
    "blackwell": (90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0),
})
"""Per-channel speeds the single-node graph search tries, fastest first (``src/graph/search.cc:1051``,
``:1057``, ``:1063``)."""
SPEED_ARRAY_INTER_GBPS = MappingProxyType({
    "pre_hopper": (48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4, 1.2,
                   0.24, 0.12),
    "hopper": (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12),
    "blackwell": (96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0,
                  2.4, 1.2, 0.24, 0.12),
})
"""Per-channel speeds the multi-node graph search tries (``src/graph/search.cc:1052-1053``, ``:1058-1059``,
``:1064-1065``)."""

# ----------------------------------------------------------------------------------------------- releases
INTRODUCED = MappingProxyType({
    "tree": (2, 4, 0), "ring": (1, 0, 0), "collnet_direct": (2, 7, 0), "collnet_chain": (2, 14, 0),
    "nvls": (2, 17, 0), "nvls_tree": (2, 18, 0), "pat": (2, 23, 0), "LL128": (2, 5, 0),
})
"""First release whose ``src/graph/tuning.cc`` knows each algorithm or protocol (checked on the tags:
LL128 absent at v2.4.8-1, present at v2.5.6-1; NVLS at v2.17.1-1; NVLS Tree at v2.18.1-1; PAT absent at
v2.22.3-1, present at v2.23.4-1; CollNet split into Direct and Chain at v2.14.3-1)."""

RELEASE_CHANGES = (
    ("2.5-2.6", "LL128 on by default only on sm70 with NVLink (tuning.cc, 'Enable LL128 by default only on Volta')."),
    ("2.7-2.15.0", "LL128 default on sm70 and sm80 only."),
    ("2.15.1-2.25", "LL128 default on sm70, sm80, sm90 (sm90 off for 2-rank Ring all_reduce with CUDA 11.8)."),
    ("2.18", "LL128 allowed up to PATH_NVB inside a node (was PATH_NVL) and up to PXN across nodes on sm90."),
    ("2.18-2.20", "Ring/LL bandwidth 1/4 (all_reduce, reduce, multi-node) or 1/3 of busBw; 0.5 from 2.21."),
    ("<=2.22", "Tree/Simple hardware latency 28 us per NVLink or PCI step (4 us in 2.18.x and from 2.23)."),
    ("2.19-2.27", "NVLS bus bandwidth per channel = min(bwIntra, bwInter), algorithm bandwidth x 5/6."),
    ("2.26", "LL128 default also on sm100 and sm120."),
    ("2.27", "LL128 default on every sm70+ GPU with NVLink (sm75, sm86, sm89 included)."),
    ("2.28", "NVLS bus bandwidth = bwIntra x nvlsEfficiency (0.85 Hopper, 0.74 Blackwell) x (nCh-1)/nCh, x2 for "
             "all_reduce; tuner constants moved into ncclTunerConstants (plugin-visible)."),
    ("2.30", "LL128 allowed between different compute capabilities from sm90."),
)
"""Changes of the tuner between releases that move NCCL's choice (read on the tags' ``tuning.cc``).
This module applies the LL128 enablement, the algorithm introductions and the NVLS formula per
version; every other number is v2.30.7-1's."""


# ----------------------------------------------------------------------------------------------- inputs
@dataclass(frozen=True)
class Graph:
    """What NCCL's topology search found for one algorithm: the fields of ``struct ncclTopoGraph``
    (``src/include/graph.h``) that the tuner reads.

    Attributes
    ----------
    num_channels : int
        ``nChannels``: search channels (NCCL runs twice as many compute channels, see
        :attr:`Comm.num_channels`). 0 means the search found nothing (the algorithm is off).
    bw_intra_bytes_per_s : float
        ``bwIntra``: bandwidth of one channel inside a node, bytes/s per direction.
    bw_inter_bytes_per_s : float
        ``bwInter``: bandwidth of one channel through the network (equal to ``bwIntra`` on one node).
    type_intra : str
        ``typeIntra``, the worst path type inside a node (:data:`PATH_TYPES`): ``"NVL"`` for NVLink
        or NVSwitch, ``"NVB"`` through another GPU's NVLink, ``"PIX"``/``"PXB"`` under PCIe
        switches, ``"PHB"``/``"SYS"`` through the CPU (P2P off: host memory).
    type_inter : str
        ``typeInter``, the path type from a GPU to its NIC (``"PIX"`` on one node, NCCL's default).
    latency_inter_s : float
        ``latencyInter``: extra network latency reported by the net plugin (0 for IB and sockets).
    same_channels : bool
        ``sameChannels``: every channel uses the same ring order (changes Ring broadcast/reduce latency).
    pattern : str
        For the tree graph: ``"balanced_tree"``, ``"split_tree"`` or ``"tree"`` (``maxTreePattern``).
    """

    num_channels: int
    bw_intra_bytes_per_s: float
    bw_inter_bytes_per_s: float
    type_intra: str = "NVL"
    type_inter: str = "PIX"
    latency_inter_s: float = 0.0
    same_channels: bool = True
    pattern: str = "balanced_tree"

    def __post_init__(self):
        if self.num_channels < 0 or self.bw_intra_bytes_per_s < 0 or self.bw_inter_bytes_per_s < 0:
            raise GpucommError(f"a graph needs channels >= 0 and bandwidths >= 0, got {self}")
        for name, value in (("type_intra", self.type_intra), ("type_inter", self.type_inter)):
            if value not in PATH_TYPES:
                raise GpucommError(f"{name} {value!r}: expected one of {', '.join(PATH_TYPES)}")
        if self.pattern not in TREE_PATTERNS:
            raise GpucommError(f"tree pattern {self.pattern!r}: expected one of {', '.join(TREE_PATTERNS)}")

    @property
    def bw_intra_gbps(self) -> float:
        """``bwIntra`` in NCCL's unit, GB/s (1e9 bytes/s)."""
        return self.bw_intra_bytes_per_s / 1e9

    @property
    def bw_inter_gbps(self) -> float:
        """``bwInter`` in NCCL's unit, GB/s (1e9 bytes/s)."""
        return self.bw_inter_bytes_per_s / 1e9


NO_GRAPH = Graph(0, 0.0, 0.0)
"""A graph with no channel: what NCCL holds for an algorithm it did not search (NVLS without NVSwitch)."""


@dataclass(frozen=True)
class Comm:
    """The communicator as the tuner sees it: the fields of ``struct ncclComm`` that
    ``ncclTopoTuneModel``, ``ncclTopoGetAlgoTime`` and ``topoGetAlgoInfo`` read.

    Attributes
    ----------
    compute_capability : int
        ``minCompCap`` = ``maxCompCap`` as major*10+minor (80 A100, 86 A40/RTX 3090, 90 H100/H200,
        100 B200, 121 GB10).
    num_ranks, num_nodes : int
        ``nRanks``, ``nNodes``; the ranks are spread evenly over the nodes.
    graphs : Mapping[str, Graph]
        Search results by pattern: ``"ring"``, ``"tree"`` (used by Tree and PAT), ``"nvls"`` (NVLS and
        NVLS Tree), ``"collnet_direct"``, ``"collnet_chain"``; a missing key is :data:`NO_GRAPH`
        (``init.cc:980-981`` maps algorithms to graphs this way).
    num_channels : int
        ``comm->nChannels``: compute channels (twice the ring search's, ``connect.cc:460``); NCCL cuts
        them for small messages (:func:`channels_and_threads`).
    nvls_channels : int
        ``comm->nvlsChannels`` (:data:`NVLS_CHANNELS`), 0 without NVLS.
    nvls_support : bool
        ``comm->nvlsSupport``: NVSwitch with multicast (sm90+, CUDA 12.1+, driver support).
    collnet_enable : bool
        ``config.collnetEnable``: a CollNet (SHARP) plugin is loaded and enabled.
    collnet_chain_support : bool
        ``collNetChainSupport``.
    collnet_heads : int
        ``collNetHeadsNum`` (CollNet all_gather/reduce_scatter need one head per local rank).
    collnet_allgather, collnet_reducescatter : bool
        Whether the CollNet plugin has ``iallgather`` / ``ireducescatter``.
    nvswitch_count : int
        ``nvsCount``: NVSwitches seen by the topology (CollNet Direct needs one).
    cpu_arch : {"x86", "power", "arm"}
        ``comm->cpuArch``.
    cpu_vendor : {"intel", "amd", "zhaoxin", "mixed"}
        ``comm->cpuVendor``.
    net_device : {"host", "unpack"}
        ``netDeviceType``: ``"unpack"`` for device-side unpacking networks (GPUDirect-TCPX/O); PAT needs
        ``"host"``.
    nccl_version : tuple of int
        (major, minor, patch): gates algorithms, LL128 and the NVLS formula (:data:`RELEASE_CHANGES`).
    cuda_runtime_version : int
        ``CUDART_VERSION`` (11080 turns LL128 off for 2-rank Ring all_reduce on sm90).
    """

    compute_capability: int
    num_ranks: int
    num_nodes: int
    graphs: Mapping[str, Graph]
    num_channels: int
    nvls_channels: int = 0
    nvls_support: bool = False
    collnet_enable: bool = False
    collnet_chain_support: bool = False
    collnet_heads: int = 0
    collnet_allgather: bool = False
    collnet_reducescatter: bool = False
    nvswitch_count: int = 0
    cpu_arch: str = "x86"
    cpu_vendor: str = "intel"
    net_device: str = "host"
    nccl_version: tuple = (2, 30, 7)
    cuda_runtime_version: int = 12080

    def __post_init__(self):
        if self.num_ranks < 1 or self.num_nodes < 1 or self.num_ranks % self.num_nodes:
            raise GpucommError(f"num_ranks {self.num_ranks} must be a positive multiple of num_nodes {self.num_nodes}")
        if self.compute_capability < 30:
            raise GpucommError(f"compute capability {self.compute_capability}: write it as major*10+minor (90 for H100)")
        if self.num_channels < 1:
            raise GpucommError(f"num_channels {self.num_channels}: NCCL runs at least one channel")
        unknown = set(self.graphs) - {"ring", "tree", "nvls", "collnet_direct", "collnet_chain"}
        if unknown:
            raise GpucommError(f"unknown graph key(s) {sorted(unknown)}: "
                               "expected ring, tree, nvls, collnet_direct, collnet_chain")
        for name, value, allowed in (("cpu_arch", self.cpu_arch, ("x86", "power", "arm")),
                                     ("cpu_vendor", self.cpu_vendor, ("intel", "amd", "zhaoxin", "mixed")),
                                     ("net_device", self.net_device, ("host", "unpack"))):
            if value not in allowed:
                raise GpucommError(f"{name} {value!r}: expected one of {', '.join(allowed)}")

    @property
    def local_ranks(self) -> int:
        """GPUs per node (``nRanks / nNodes``, assumed the same on every node)."""
        return self.num_ranks // self.num_nodes

    def graph(self, algorithm: str) -> Graph:
        """The graph NCCL's tuner reads for an algorithm (``init.cc:980-981``).

        Parameters
        ----------
        algorithm : str
            One of :data:`ALGORITHMS`.

        Returns
        -------
        Graph
            Tree and PAT read the tree graph, NVLS and NVLS Tree the NVLS graph; :data:`NO_GRAPH` when absent.
        """
        key = {"tree": "tree", "pat": "tree", "ring": "ring", "nvls": "nvls", "nvls_tree": "nvls",
               "collnet_direct": "collnet_direct", "collnet_chain": "collnet_chain"}[_check(algorithm, ALGORITHMS, "algorithm")]
        return self.graphs.get(key, NO_GRAPH)


@dataclass(frozen=True)
class TunerTable:
    """What ``ncclTopoTuneModel`` leaves in the communicator.

    Attributes
    ----------
    latency_s : Mapping[tuple, float]
        ``comm->latencies`` by (collective, algorithm, protocol), seconds.
    bw_bytes_per_s : Mapping[tuple, float]
        ``comm->bandwidths`` by (collective, algorithm, protocol): *algorithm* bandwidth, bytes/s
        (``nBytes / bw`` is the transfer time); 0 means disabled. Combinations the tuner never
        costs (Tree broadcast...) are absent.
    max_threads : Mapping[tuple, int]
        ``comm->maxThreads`` by (algorithm, protocol).
    thread_thresholds : Mapping[tuple, int]
        ``comm->threadThresholds`` by (algorithm, protocol), bytes per thread.
    """

    latency_s: Mapping[tuple, float]
    bw_bytes_per_s: Mapping[tuple, float]
    max_threads: Mapping[tuple, int]
    thread_thresholds: Mapping[tuple, int]

    def enabled(self, collective: str) -> list[tuple[str, str]]:
        """(algorithm, protocol) pairs with a non-zero bandwidth for a collective.

        Parameters
        ----------
        collective : str
            One of :data:`COLLECTIVES`.

        Returns
        -------
        list of (str, str)
            In NCCL's order (algorithm index, then protocol index).
        """
        _check(collective, COLLECTIVES, "collective")
        return [(a, p) for (c, a, p), bw in self.bw_bytes_per_s.items() if c == collective and bw > 0]


@dataclass(frozen=True)
class Choice:
    """NCCL's pick for one call (``topoGetAlgoInfo``) with every alternative's estimate.

    Attributes
    ----------
    algorithm, protocol : str
        The cheapest enabled pair (ties go to the lower algorithm, then protocol index, as in NCCL).
    time_s : float
        Its ``ncclTopoGetAlgoTime`` estimate, seconds.
    times_s : Mapping[tuple, float]
        Estimate of every enabled (algorithm, protocol) pair.
    num_channels : int
        Channels NCCL then runs (``nMaxChannels``).
    num_threads : int
        Threads per channel (``nWarps x 32``).
    """

    algorithm: str
    protocol: str
    time_s: float
    times_s: Mapping[tuple, float] = field(repr=False)
    num_channels: int
    num_threads: int


# ----------------------------------------------------------------------------------------------- helpers
def _check(value: str, allowed: tuple, what: str) -> str:
    if value not in allowed:
        raise GpucommError(f"unknown {what} {value!r}: expected one of {', '.join(allowed)}")
    return value


def _log2i(n: int) -> int:
    """``log2i`` (``src/include/utils.h:56``, ``log2Down`` in bitops.h:292-321): floor(log2 n), -1 for 0."""
    return int(n).bit_length() - 1


def compcap_index(compute_capability: int) -> int:
    """Row of the per-architecture tables for a compute capability (``tuning.cc:263-266``).

    Parameters
    ----------
    compute_capability : int
        major*10+minor.

    Returns
    -------
    int
        0 Volta (and older, and sm75), 1 Ampere (sm8x, sm89 included), 2 Hopper, 3 Blackwell (sm100+, sm12x included).
    """
    return 3 if compute_capability >= 100 else 2 if compute_capability >= 90 else 1 if compute_capability >= 80 else 0


def _version_at_least(comm: Comm, version: tuple) -> bool:
    return tuple(comm.nccl_version) >= tuple(version)


def _path_rank(path_type: str) -> int:
    return PATH_TYPES.index(path_type)


def nccl_bytes(collective: str, msg_bytes: int, num_ranks: int) -> int:
    """The byte count NCCL's tuner is given for a call (``ncclFuncMaxSendRecvCount``, ``src/include/enqueue.h:39-41``).

    Parameters
    ----------
    collective : str
        One of :data:`COLLECTIVES`.
    msg_bytes : int
        Bytes per rank's buffer: the output for all_gather, the input for reduce_scatter, the buffer otherwise.
    num_ranks : int
        Ranks.

    Returns
    -------
    int
        ``nRanks x`` the per-rank bytes for all_gather and reduce_scatter (the whole gathered or scattered
        buffer, nccl-tests' ``size`` column), the buffer otherwise.
    """
    _check(collective, COLLECTIVES, "collective")
    return msg_bytes * num_ranks if collective in ("all_gather", "reduce_scatter") else msg_bytes


# ----------------------------------------------------------------------------------------------- the model
def _ll128_enabled(comm: Comm, collective: str, algorithm: str) -> bool:
    """LL128's default enablement (``tuning.cc:518-536`` at v2.30.7-1; earlier rules per :data:`RELEASE_CHANGES`)."""
    graph, cc = comm.graph(algorithm), comm.compute_capability
    if not _version_at_least(comm, INTRODUCED["LL128"]):
        return False
    # Which GPUs get LL128 by default (tuning.cc: v2.5.6 sm70; v2.7.3 +sm80; v2.15.1 +sm90; v2.26.2 +sm100, sm120;
    # v2.27.3: every sm70+).
    if _version_at_least(comm, (2, 27, 0)):
        arch_ok = cc >= 70
    elif _version_at_least(comm, (2, 26, 0)):
        arch_ok = cc in (70, 80, 90, 100, 120)
    elif _version_at_least(comm, (2, 15, 1)):
        arch_ok = cc in (70, 80, 90)
    elif _version_at_least(comm, (2, 7, 0)):
        arch_ok = cc in (70, 80)
    else:
        arch_ok = cc == 70
    # Inside the node: NVLink only (PATH_NVL before 2.18, up to PATH_NVB since); to the NIC: up to PXB, or PXN on
    # sm90+ (tuning.cc:520-531; NCCL_LL128_C2C=1 default).
    intra_limit = "NVB" if _version_at_least(comm, (2, 18, 0)) else "NVL"
    inter_limit = "PXN" if (cc >= 90 and _version_at_least(comm, (2, 18, 0))) else "PXB"
    path_ok = (_path_rank(graph.type_intra) <= _path_rank(intra_limit)
               and _path_rank(graph.type_inter) <= _path_rank(inter_limit))
    cuda_11_8_exception = (cc == 90 and comm.cuda_runtime_version == 11080 and collective == "all_reduce"
                           and algorithm == "ring" and comm.num_ranks == 2)  # tuning.cc:534-535
    return arch_ok and path_ok and not cuda_11_8_exception


def _algorithm_enabled(comm: Comm, algorithm: str) -> bool:
    """``algoEnable`` after the topology checks (``tuning.cc:498-512``), plus the release that introduced it."""
    if not _version_at_least(comm, INTRODUCED[algorithm]):
        return False
    if comm.num_nodes == 1 and algorithm == "nvls_tree":
        return False  # tuning.cc:501-502
    if not comm.collnet_enable and (algorithm in ("collnet_direct", "collnet_chain")
                                    or (algorithm == "nvls" and comm.num_nodes > 1)):
        return False  # tuning.cc:503-506
    if comm.collnet_enable and algorithm == "collnet_chain" and not comm.collnet_chain_support:
        return False  # tuning.cc:507
    if comm.nvswitch_count == 0 and algorithm == "collnet_direct":
        return False  # tuning.cc:508-509
    if algorithm in ("nvls", "nvls_tree") and not comm.nvls_support:
        return False  # no NVLS graph is searched without nvlsSupport (init.cc:1214-1216)
    return True


def _pat_enabled(comm: Comm) -> bool:
    """``ncclPatEnable`` with ``NCCL_PAT_ENABLE`` at its default (``tuning.cc:215-223``)."""
    return (comm.compute_capability >= 60 and comm.num_nodes == comm.num_ranks and comm.net_device == "host"
            and _version_at_least(comm, INTRODUCED["pat"]))


def _max_threads(comm: Comm) -> dict[tuple, int]:
    """``comm->maxThreads`` with no ``NCCL_NTHREADS`` override (``tuning.cc:244-257``)."""
    ring = comm.graph("ring")
    ring_simple = 256 if ring.bw_intra_gbps * ring.num_channels <= PCI_BW_GBPS[3] else NCCL_SIMPLE_MAX_NTHREADS
    threads = {(a, p): NCCL_MAX_NTHREADS for a in ALGORITHMS for p in PROTOCOLS}
    threads.update({("ring", "Simple"): ring_simple, ("tree", "Simple"): NCCL_SIMPLE_MAX_NTHREADS,
                    ("ring", "LL"): NCCL_LL_MAX_NTHREADS, ("tree", "LL"): NCCL_LL_MAX_NTHREADS,
                    ("ring", "LL128"): NCCL_LL128_MAX_NTHREADS, ("tree", "LL128"): NCCL_LL128_MAX_NTHREADS})
    return threads


def _thread_thresholds(comm: Comm) -> dict[tuple, int]:
    """``comm->threadThresholds`` with no ``NCCL_THREAD_THRESHOLDS`` override (``tuning.cc:588-595``)."""
    thresholds = {(a, p): THREAD_THRESHOLD[p] for a in ALGORITHMS for p in PROTOCOLS}
    thresholds[("ring", "LL")] *= comm.num_ranks
    thresholds[("collnet_direct", "Simple")] = thresholds[("collnet_chain", "Simple")] = 512
    return thresholds


def _nvls_bus_bw_per_channel_gbps(comm: Comm, collective: str, algorithm: str, graph: Graph, arch: int,
                                  nodes_index: int) -> float:
    """NVLS / NVLS Tree bus bandwidth of one channel.

    From 2.28 (``tuning.cc:307-323`` at v2.30.7-1): ``bwIntra x nvlsEfficiency x (nCh-1)/nCh``, doubled for
    all_reduce ("AllReduce pipelines two operations"), else times (ppn-1)/ppn; capped by ``bwInter`` (x2 for
    NVLS Tree on 2 nodes) and, for NVLS Tree, ``perChMaxNVLSTreeBw``. Before 2.28, the formula of v2.27.7-1
    (``tuning.cc:267-275`` there): ``min(bwIntra, bwInter)`` for all_reduce, ``min(bwIntra (ppn-1)/ppn,
    0.9 bwInter)`` for all_gather/reduce_scatter (2.19-2.26 used the all_reduce form for those too; not
    modelled), ``min(bwIntra, bwInter, or bwInter/2 beyond 2 nodes)`` for NVLS Tree.
    """
    ppn = comm.num_ranks / comm.num_nodes
    if _version_at_least(comm, (2, 28, 0)):
        intra = graph.bw_intra_gbps * NVLS_EFFICIENCY[arch] * (graph.num_channels - 1) / graph.num_channels
        intra *= 2.0 if collective == "all_reduce" else (ppn - 1) / ppn
        inter = graph.bw_inter_gbps * (2 if (comm.num_nodes <= 2 and algorithm == "nvls_tree") else 1)
        cap = PER_CH_MAX_NVLS_TREE_BW_GBPS[arch][nodes_index] if algorithm == "nvls_tree" else math.inf
        return min(intra, inter, cap)
    if algorithm == "nvls_tree":
        return min(graph.bw_intra_gbps, graph.bw_inter_gbps if comm.num_nodes <= 2 else graph.bw_inter_gbps / 2)
    if collective == "all_reduce":
        return min(graph.bw_intra_gbps, graph.bw_inter_gbps)
    return min(graph.bw_intra_gbps * (ppn - 1) / ppn, graph.bw_inter_gbps * COLLNET_AG_RS_INTER_FACTOR)


def tuner_table(comm: Comm) -> TunerTable:
    """Latency and bandwidth of every (collective, algorithm, protocol), as ``ncclTopoTuneModel`` computes them.

    Parameters
    ----------
    comm : Comm
        The communicator (its graphs come from NCCL's search, or :func:`search_graph` / :func:`build_comm`).

    Returns
    -------
    TunerTable
        Latencies (s) and algorithm bandwidths (bytes/s), threads and thread thresholds.

    Notes
    -----
    Bandwidth (``tuning.cc:306-383``): ``bw`` is ``graph.bwIntra`` on up to two nodes and for CollNet, else
    ``graph.bwInter``; bus bandwidth = ``nChannels x bw``, then the protocol refinements (Ring LL x0.5 capped
    by ``llMaxBw``; Ring LL128 x0.92 capped by ``nChannels x perChMaxRingLL128Bw``; Tree all_reduce x0.92 capped
    by ``nChannels x perChMaxTreeBw``; Tree LL /3.8; Tree LL128 x7/9 on one node, x120/128 across; PAT x0.75;
    CollNet's GPU/NIC ratio), then bus to algorithm bandwidth: x nRanks/nsteps for Ring, NVLS and NVLS Tree,
    x0.5 for Tree and CollNet (all_reduce moves the data up and down), unchanged for the all_gather/
    reduce_scatter algorithms other than Ring.

    Latency (``tuning.cc:384-435``): base + per algorithm

    * Ring: ``(nsteps - nInterSteps) x max(intraLat, netOverhead) + nInterSteps x interLat`` with
      ``nsteps`` = 2(n-1) all_reduce, n-1 all_gather/reduce_scatter, n broadcast/reduce, and
      ``nInterSteps`` = 2(nNodes-1) or nNodes-1 (broadcast/reduce: one hop, or nsteps hops when the
      channels differ);
    * Tree all_reduce: ``2 ((ppn-1) intraLat + log2(nNodes) interLat)`` (chain inside the node, double
      binary tree across nodes);
    * NVLS: ``intraLat (+ interLat across nodes)`` with no base; NVLS Tree ``intraLat + 2 log2(nNodes) interLat``;
    * CollNet Direct ``2 (min(1, ppn-1) intraLat + 0.4 (ppn-1)) + interLat``; CollNet Chain ``2 (ppn-1) intraLat + interLat``;
    * PAT ``log2(nNodes) interLat / 3.5 + 2.8 nRanks``.

    ``intraLat`` is the NVLink row when the graph's intra path is ``NVL``, else the PCI row; ``interLat`` the
    network row (the Tree row at one GPU per node) plus the plugin's ``latencyInter`` (twice for Simple, "flush").

    Examples
    --------
    8x H100 behind NVSwitch (NCCL's graphs: ring and tree 12 x 30 GB/s, NVLS 8 x 40/60): Ring/Simple all_reduce
    costs 8.4 + 14 x 3.4 us and 12 x 30 x 8/14 GB/s.

    >>> comm = build_comm(90, 8, nvlink_bw_bytes_per_s(90, 18))
    >>> table = tuner_table(comm)
    >>> round(table.latency_s[("all_reduce", "ring", "Simple")] * 1e6, 1)
    56.0
    >>> round(table.bw_bytes_per_s[("all_reduce", "ring", "Simple")] / 1e9, 1)
    205.7
    """
    n_nodes, n_ranks = comm.num_nodes, comm.num_ranks
    cc = comm.compute_capability
    arch = compcap_index(cc)
    nodes_index = n_nodes - 1 if n_nodes <= 2 else 2                                   # tuning.cc:267
    ll_row = arch if n_nodes == 1 else (1 if comm.cpu_vendor in ("amd", "mixed") else 0)  # tuning.cc:269-271
    ll_max_bw = LL_MAX_BW_GBPS[ll_row][nodes_index]
    per_ch_max_tree_bw = PER_CH_MAX_TREE_BW_GBPS[arch][nodes_index]
    per_ch_max_ring_ll128_bw = PER_CH_MAX_RING_LL128_BW_GBPS[arch][nodes_index]
    per_ch_max_tree_ll128_bw = PER_CH_MAX_TREE_LL128_BW_GBPS[arch][nodes_index]
    hw_lat = {hw: {a: list(row) for a, row in table.items()} for hw, table in HW_LATENCY_US.items()}
    if comm.cpu_arch == "power":  # tuning.cc:277-280: favour Tree over Ring on Power
        hw_lat["pci"]["tree"][2] = hw_lat["pci"]["ring"][2]
    ppn = n_ranks / n_nodes
    nvls_2_28 = _version_at_least(comm, (2, 28, 0))
    max_tree_pattern = comm.graph("tree").pattern
    net_overhead = NET_OVERHEAD_US[comm.cpu_vendor if comm.cpu_arch == "x86" and comm.cpu_vendor in ("intel", "amd")
                                   else "other"]

    latency, bandwidth = {}, {}
    if n_ranks > 1:
        for coll in COLLECTIVES:
            nsteps = 2 * (n_ranks - 1) if coll == "all_reduce" else n_ranks - 1 if coll in ("all_gather", "reduce_scatter") \
                else n_ranks                                                            # tuning.cc:289-291
            for a in ALGORITHMS_FOR[coll]:
                graph = comm.graph(a)
                intra_hw = "nvlink" if graph.type_intra == "NVL" else "pci"              # tuning.cc:284-286
                hw = intra_hw if n_nodes == 1 else "net"
                for p_index, p in enumerate(PROTOCOLS):
                    if a in ("nvls", "nvls_tree") and p != "Simple":
                        continue                                                        # tuning.cc:301
                    if a == "pat" and (p != "Simple" or not _pat_enabled(comm)):
                        continue                                                        # tuning.cc:302-304
                    key = (coll, a, p)
                    collnet = a in ("collnet_direct", "collnet_chain")
                    bw = graph.bw_intra_gbps if (n_nodes <= 2 or collnet) else graph.bw_inter_gbps  # tuning.cc:306
                    if a in ("nvls", "nvls_tree"):
                        if graph.num_channels < 2:                                      # tuning.cc:308-309
                            latency[key], bandwidth[key] = 0.0, 0.0
                            continue
                        bw = _nvls_bus_bw_per_channel_gbps(comm, coll, a, graph, arch, nodes_index)
                    bus_bw = graph.num_channels * bw                                    # tuning.cc:324

                    # "Various model refinements", tuning.cc:326-374
                    if a == "ring" and p == "LL":
                        bus_bw = min(ll_max_bw, bus_bw * RING_LL_BW_FACTOR)
                    if a == "ring" and p == "LL128":
                        bus_bw = min(bus_bw * LL128_BW_FACTOR, graph.num_channels * per_ch_max_ring_ll128_bw)
                    if a == "tree" and coll == "all_reduce":
                        bus_bw = min(bus_bw * TREE_ALL_REDUCE_BW_FACTOR, graph.num_channels * per_ch_max_tree_bw)
                    if a == "tree" and p == "LL":
                        bus_bw = min(bus_bw * TREE_LL_BW_FACTOR, ll_max_bw)
                    if a == "tree" and p == "LL128":
                        bus_bw = min(bus_bw * (TREE_LL128_BW_FACTOR_ONE_NODE if n_nodes == 1 else 120.0 / 128.0),
                                     graph.num_channels * per_ch_max_tree_ll128_bw)
                    if a == "tree" and max_tree_pattern == "tree":
                        bus_bw *= TREE_PATTERN_TREE_FACTOR
                    if a == "pat":
                        bus_bw *= PAT_BW_FACTOR
                    if collnet and p != "Simple":
                        bus_bw = 0.0
                    if a == "collnet_direct" and p == "Simple":
                        if coll in ("all_gather", "reduce_scatter"):
                            bus_bw = ppn * min(graph.bw_intra_gbps, graph.bw_inter_gbps * COLLNET_AG_RS_INTER_FACTOR)
                        elif graph.num_channels:
                            factor = ppn / graph.num_channels  # GPU/NIC ratio
                            factor -= (factor - 1) / 2
                            bus_bw /= factor
                            if cc >= 90:
                                bus_bw *= COLLNET_DIRECT_HOPPER_FACTOR
                    if (a in ("nvls", "collnet_direct") and p == "Simple" and coll in ("all_gather", "reduce_scatter")
                            and n_nodes > 1):                                           # tuning.cc:351-374
                        plugin_ok = comm.collnet_allgather if coll == "all_gather" else comm.collnet_reducescatter
                        if not (plugin_ok and comm.collnet_enable and comm.local_ranks <= comm.collnet_heads):
                            bus_bw = 0.0

                    # Bus to algorithm bandwidth, tuning.cc:376-382
                    if not (a != "ring" and coll in ("all_gather", "reduce_scatter")):
                        if a == "ring" or (a in ("nvls", "nvls_tree") and nvls_2_28):
                            bus_bw *= n_ranks / nsteps
                        elif a in ("nvls", "nvls_tree"):
                            bus_bw *= NVLS_ALG_BW_RATIO_2_19                            # v2.27.7-1 tuning.cc:324
                        else:
                            bus_bw *= 0.5
                    bandwidth[key] = bus_bw

                    # Latency, tuning.cc:384-435
                    lat = BASE_LATENCY_US[a][p_index]
                    intra_lat = hw_lat[intra_hw][a][p_index]
                    inter_lat = hw_lat["net"]["tree" if ppn == 1 else a][p_index]       # tuning.cc:386-388
                    inter_lat += graph.latency_inter_s * 1e6
                    if p == "Simple":
                        inter_lat += graph.latency_inter_s * 1e6                        # "flush extra latency"
                    if a == "ring":
                        step_lat = hw_lat[hw][a][p_index]
                        if coll in ("reduce", "broadcast"):
                            if graph.same_channels:
                                lat += step_lat
                            else:
                                if p == "Simple":
                                    step_lat = hw_lat[hw]["tree"][p_index]
                                lat += nsteps * step_lat
                        else:
                            overhead = 0.0
                            if n_nodes > 1:
                                overhead = net_overhead * (NET_OVERHEAD_SIMPLE_FACTOR if p == "Simple" else 1.0)
                            intra_lat = max(intra_lat, overhead)
                            n_inter = 0 if n_nodes == 1 else 2 * (n_nodes - 1) if coll == "all_reduce" else n_nodes - 1
                            lat += (nsteps - n_inter) * intra_lat + n_inter * inter_lat
                    elif a == "tree":
                        if coll == "all_reduce":
                            lat += 2 * ((n_ranks // n_nodes - 1) * intra_lat + _log2i(n_nodes) * inter_lat)
                    elif a == "collnet_direct":
                        local = n_ranks // n_nodes - 1
                        lat += 2 * (min(1, local) * intra_lat + local * COLLNET_DIRECT_ARITY_LATENCY_US) + inter_lat
                    elif a == "collnet_chain":
                        lat += 2 * (n_ranks // n_nodes - 1) * intra_lat + inter_lat
                    elif a == "nvls":
                        lat = intra_lat + (inter_lat if n_nodes > 1 else 0.0)
                    elif a == "nvls_tree":
                        lat += intra_lat + 2 * _log2i(n_nodes) * inter_lat
                    elif a == "pat":
                        lat += _log2i(n_nodes) * (inter_lat / PAT_LOG_LATENCY_DIVISOR) + n_ranks * PAT_LATENCY_PER_RANK_US
                    latency[key] = lat

        # Enable/disable, tuning.cc:440-541 (no NCCL_PROTO / NCCL_ALGO in the environment)
        for (coll, a, p) in list(bandwidth):
            if p == "LL128" and not _ll128_enabled(comm, coll, a):
                bandwidth[(coll, a, p)] = 0.0
            if not _algorithm_enabled(comm, a):
                bandwidth[(coll, a, p)] = 0.0

    return TunerTable(
        latency_s=MappingProxyType({k: v * 1e-6 for k, v in latency.items()}),
        bw_bytes_per_s=MappingProxyType({k: v * 1e9 for k, v in bandwidth.items()}),
        max_threads=MappingProxyType(_max_threads(comm)),
        thread_thresholds=MappingProxyType(_thread_thresholds(comm)),
    )


def algo_time_s(comm: Comm, table: TunerTable, collective: str, algorithm: str, protocol: str, msg_bytes: int,
                num_pipe_ops: int = 1) -> float | None:
    """NCCL's time estimate for one (algorithm, protocol): ``ncclTopoGetAlgoTime`` (``tuning.cc:630-655``).

    Parameters
    ----------
    comm : Comm
        The communicator.
    table : TunerTable
        :func:`tuner_table` of ``comm``.
    collective, algorithm, protocol : str
        From :data:`COLLECTIVES`, :data:`ALGORITHMS`, :data:`PROTOCOLS`.
    msg_bytes : int
        NCCL's byte count (:func:`nccl_bytes`: the whole buffer for all_gather/reduce_scatter).
    num_pipe_ops : int
        Operations aggregated in one group (``numPipeOps``): Ring pays the latency for each, the others once
        per ``NCCL_MAX_DEV_WORK_BATCH_COLLS`` (taken as unbounded here: one latency).

    Returns
    -------
    float or None
        Seconds; None where NCCL returns -1 (bandwidth 0: disabled, or not costed for this collective).

    Notes
    -----
    ``time = lat x latCount + nBytes / bw``, with the Tree all_reduce bandwidth multiplied by
    :data:`TREE_CORRECTION_FACTOR` for 64 B .. 256 MiB (NVLS Tree too on sm100+ x86), and the Ring/Simple
    all_reduce latency multiplied by :data:`RING_PLATEAU_FACTOR` across nodes once every rank's share of a
    channel reaches 64 bytes.
    """
    if msg_bytes < 0:
        raise GpucommError(f"msg_bytes must be >= 0, got {msg_bytes}")
    _check(protocol, PROTOCOLS, "protocol")
    key = (_check(collective, COLLECTIVES, "collective"), _check(algorithm, ALGORITHMS, "algorithm"), protocol)
    bw_gbps = table.bw_bytes_per_s.get(key, 0.0) / 1e9
    lat_us = table.latency_s.get(key, 0.0) * 1e6
    if bw_gbps == 0:
        return None
    log_size = _log2i(msg_bytes >> 6)
    if algorithm == "tree" and collective == "all_reduce" and 0 <= log_size < 23:
        bw_gbps *= TREE_CORRECTION_FACTOR[protocol][log_size]
    if (algorithm == "nvls_tree" and collective == "all_reduce" and 0 <= log_size < 24
            and comm.compute_capability >= 100 and comm.cpu_arch == "x86"):
        bw_gbps *= TREE_CORRECTION_FACTOR[protocol][log_size]
    if (algorithm == "ring" and protocol == "Simple" and comm.num_nodes > 1 and collective == "all_reduce"
            and msg_bytes // (comm.num_channels * comm.num_ranks) >= 64):
        lat_us *= RING_PLATEAU_FACTOR["pre_ampere" if comm.compute_capability < 80 else "ampere_and_later"]
    lat_count = num_pipe_ops if algorithm == "ring" else 1
    return (lat_us * lat_count + msg_bytes / (1000 * bw_gbps)) * 1e-6


def cost_table_s(comm: Comm, table: TunerTable, collective: str, msg_bytes: int, num_pipe_ops: int = 1) -> dict:
    """Every alternative's estimate for one call: ``updateCollCostTable`` (``src/enqueue.cc``, v2.30.7-1).

    Parameters
    ----------
    comm : Comm
        The communicator.
    table : TunerTable
        :func:`tuner_table` of ``comm``.
    collective : str
        One of :data:`COLLECTIVES`.
    msg_bytes : int
        NCCL's byte count (:func:`nccl_bytes`).
    num_pipe_ops : int
        Aggregated operations (see :func:`algo_time_s`).

    Returns
    -------
    dict
        (algorithm, protocol) -> seconds, for every pair NCCL considers and has enabled.

    Notes
    -----
    Besides the table's enablement, the call skips CollNet with more than 8 local ranks, NVLS for other
    collectives than all_reduce with more than 32 local ranks, and NVLS across nodes without CollNet.
    """
    _check(collective, COLLECTIVES, "collective")
    if comm.num_ranks == 1:
        return {("ring", "Simple"): 0.0}
    times = {}
    for a in ALGORITHMS:
        if a in ("collnet_direct", "collnet_chain") and (not comm.collnet_enable
                                                         or comm.local_ranks > NCCL_MAX_DIRECT_ARITY + 1):
            continue
        if a in ("nvls", "nvls_tree") and (not comm.nvls_support
                                           or (collective != "all_reduce" and comm.local_ranks > NCCL_MAX_NVLS_ARITY)):
            continue
        if a == "nvls" and not comm.collnet_enable and comm.num_nodes > 1:
            continue
        for p in PROTOCOLS:
            t = algo_time_s(comm, table, collective, a, p, msg_bytes, num_pipe_ops)
            if t is not None and t >= 0:
                times[(a, p)] = t
    return times


def channels_and_threads(comm: Comm, table: TunerTable, algorithm: str, protocol: str, msg_bytes: int) -> tuple[int, int]:
    """Channels and threads NCCL runs once it has chosen: the second half of ``topoGetAlgoInfo`` (``src/enqueue.cc``).

    Parameters
    ----------
    comm : Comm
        The communicator.
    table : TunerTable
        :func:`tuner_table` of ``comm``.
    algorithm, protocol : str
        The chosen pair.
    msg_bytes : int
        NCCL's byte count (:func:`nccl_bytes`).

    Returns
    -------
    (int, int)
        Channels (``nMaxChannels``) and threads per channel (``nWarps x 32``).

    Notes
    -----
    Ring and Tree drop channels while ``nBytes < nc x nt x threadThreshold`` (then halve the threads the
    same way): a small message runs on few channels, so it sees a fraction of the bandwidth the estimate
    assumed. This is the channel part of the mid-size ramp, and it comes *after* the choice: the tuner's
    time does not include it. NVLS uses ``nvlsChannels`` (``min(nvlsChannels, nChannels)`` across nodes);
    CollNet Direct's own rule (per head) is reproduced with ``collnet_heads`` heads.
    """
    nc = comm.num_channels
    nt = table.max_threads[(algorithm, protocol)]
    threshold = table.thread_thresholds[(algorithm, protocol)]
    if algorithm == "collnet_direct":
        heads = max(comm.collnet_heads, 1)
        nc_switch, flag = 16, True
        while nc_switch >= 1 and flag:
            while True:
                flag = msg_bytes < nc * nt * heads * threshold
                if not (flag and nc > nc_switch):
                    break
                if nc == nc_switch + nc_switch // 2:
                    threshold //= 2
                nc -= 1
            nc_switch //= 2
    elif algorithm in ("nvls", "nvls_tree"):
        nc = min(comm.nvls_channels, comm.num_channels) if (comm.num_nodes > 1 and algorithm == "nvls") \
            else comm.nvls_channels
    else:
        while msg_bytes < nc * nt * threshold and nc >= 2:
            nc -= 1
    if algorithm not in ("nvls", "nvls_tree", "collnet_direct"):
        while msg_bytes < nc * nt * threshold and nt % 128 == 0:
            nt //= 2
    if protocol == "Simple":
        if algorithm == "ring":
            nt += WARP_SIZE  # extra warp for sync
        if algorithm == "tree":
            nt += 4 * WARP_SIZE
    if nt // WARP_SIZE < 3:
        nt = 3 * WARP_SIZE
    if algorithm in ("tree", "pat"):
        nt = NCCL_MAX_NTHREADS
    return nc, nt


def choose(comm: Comm, collective: str, msg_bytes: int, *, table: TunerTable | None = None, num_pipe_ops: int = 1,
           algorithms: tuple | None = None, protocols: tuple | None = None) -> Choice:
    """What NCCL runs for one call, with every alternative's estimated time (``ncclGetAlgoInfo``, ``src/enqueue.cc``).

    Parameters
    ----------
    comm : Comm
        The communicator.
    collective : str
        One of :data:`COLLECTIVES`.
    msg_bytes : int
        NCCL's byte count (:func:`nccl_bytes`; nccl-tests' ``size`` column).
    table : TunerTable, optional
        :func:`tuner_table` of ``comm`` (computed when omitted).
    num_pipe_ops : int
        Aggregated operations (see :func:`algo_time_s`).
    algorithms, protocols : tuple of str, optional
        Restrict the choice, as ``NCCL_ALGO`` / ``NCCL_PROTO`` would (the latency and bandwidth of the rest
        are unchanged, as in NCCL).

    Returns
    -------
    Choice
        The pair with the smallest estimate (first in NCCL's order on a tie), its channels and threads.

    Raises
    ------
    GpucommError
        If no algorithm is left (NCCL: "No algorithm/protocol available").

    Examples
    --------
    >>> comm = build_comm(90, 8, nvlink_bw_bytes_per_s(90, 18))
    >>> c = choose(comm, "all_reduce", 8)
    >>> c.algorithm, c.protocol, round(c.time_s * 1e6, 1), c.num_channels
    ('ring', 'LL', 15.0, 1)
    >>> choose(comm, "all_reduce", 1 << 30).algorithm
    'nvls'
    """
    table = tuner_table(comm) if table is None else table
    times = cost_table_s(comm, table, collective, msg_bytes, num_pipe_ops)
    if algorithms is not None:
        times = {k: v for k, v in times.items() if k[0] in algorithms}
    if protocols is not None:
        times = {k: v for k, v in times.items() if k[1] in protocols}
    if not times:
        raise GpucommError(f"no algorithm/protocol available for {collective} (algorithms={algorithms}, "
                           f"protocols={protocols}, NCCL {'.'.join(map(str, comm.nccl_version))})")
    # Strict '<' over algorithms then protocols in index order, as topoGetAlgoInfo: ties keep the first.
    best = min(times, key=lambda k: (times[k], ALGORITHMS.index(k[0]), PROTOCOLS.index(k[1])))
    if comm.num_ranks == 1:
        return Choice("ring", "Simple", 0.0, MappingProxyType(times), 1, NCCL_SIMPLE_MAX_NTHREADS)
    nc, nt = channels_and_threads(comm, table, best[0], best[1], msg_bytes)
    return Choice(best[0], best[1], times[best], MappingProxyType(times), nc, nt)


# ----------------------------------------------------------------------------------------------- topology search
def _speed_arrays(compute_capability: int, inter: bool) -> tuple:
    family = "blackwell" if compute_capability >= 100 else "hopper" if compute_capability >= 90 else "pre_hopper"
    return (SPEED_ARRAY_INTER_GBPS if inter else SPEED_ARRAY_INTRA_GBPS)[family]


def nvlink_bw_bytes_per_s(compute_capability: int, num_links: int) -> float:
    """The bandwidth NCCL's topology gives a GPU's NVLinks to one peer or switch (``ncclTopoNVLinkBw``, ``topo.h:274-282``).

    Parameters
    ----------
    compute_capability : int
        major*10+minor.
    num_links : int
        NVLinks between the GPU and that peer or switch (18 on H100 SXM, 12 on A100 SXM, 2-4 on bridges).

    Returns
    -------
    float
        ``num_links x`` the per-link figure of :data:`NVLINK_BW_GBPS`, bytes/s per direction.
    """
    cc = compute_capability
    per_link = (NVLINK_BW_GBPS[100] if cc >= 100 else NVLINK_BW_GBPS[90] if cc >= 90 else NVLINK_BW_GBPS[86] if cc == 86
                else NVLINK_BW_GBPS[80] if cc >= 80 else NVLINK_BW_GBPS[70] if cc >= 70 else NVLINK_BW_GBPS[60]
                if cc >= 60 else NVLINK_BW_GBPS[80])
    return num_links * per_link * 1e9


def search_graph(pattern: str, compute_capability: int, gpus_per_node: int, gpu_link_bw_bytes_per_s: float, *,
                 num_nodes: int = 1, nic_bw_bytes_per_s: float | None = None, nics_per_node: int | None = None,
                 min_channels: int = 1, max_channels: int | None = None, type_intra: str = "NVL",
                 type_inter: str = "PIX") -> Graph:
    """NCCL's topology search (``ncclTopoCompute``, ``src/graph/search.cc:1074-1310``) on a star fabric.

    Parameters
    ----------
    pattern : {"ring", "tree", "nvls"}
        Ring (``NCCL_TOPO_PATTERN_RING``), tree (balanced tree: a chain inside the node), or NVLS.
    compute_capability : int
        major*10+minor: picks the speed arrays and the channel duplication rule.
    gpus_per_node : int
        GPUs of the communicator in each node.
    gpu_link_bw_bytes_per_s : float
        Bandwidth NCCL's topology gives each GPU's link to the hub, per direction: NVLinks to an NVSwitch
        (:func:`nvlink_bw_bytes_per_s`), the NVLink bridge of a pair, or a PCIe link (:data:`PCI_BW_GBPS`).
    num_nodes : int
        Nodes.
    nic_bw_bytes_per_s : float, optional
        Bandwidth of one NIC (needed when ``num_nodes > 1``).
    nics_per_node : int, optional
        NICs per node (default: one per GPU).
    min_channels, max_channels : int
        Search bounds (ring: 1 and ``MAXCHANNELS/2``; the tree is searched with the ring's count as both).
    type_intra, type_inter : str
        Path types recorded in the graph (:data:`PATH_TYPES`).

    Returns
    -------
    Graph
        Channels and per-channel bandwidths as NCCL would print them (``Pattern 4, nChannels 12, bw 30/30``).

    Notes
    -----
    A simplification of the search, stated: every GPU has one link of ``gpu_link_bw`` (each direction) to a
    hub, so a ring or chain channel at speed ``s`` takes ``s`` from each GPU's link in each direction, and an
    NVLS channel ``s`` from every GPU plus ``s`` more from its head; across nodes each channel enters and
    leaves through one NIC. The search's control flow is kept: start at the fastest speed that fits, keep
    the graph with the most ``nChannels x bw``, lower the speed while the next is more than 0.49 of the best,
    duplicate channels (``ncclTopoDupChannels``, search.cc:1036-1049: not below 25 GB/s, not on sm90+ below
    50 GB/s with more than 4 channels), then raise the speed (ring), ``bwInter`` (NVLS) or ``bwIntra`` (tree,
    up to twice ``bwInter``). It reproduces the graphs of NCCL issue #1197 (8x H100: ring and tree 12 x 30,
    NVLS 8 x 40/60). PCIe trees, NVLink meshes without a switch and multi-rail crossNic rings are not
    searched link by link.
    """
    _check(pattern, ("ring", "tree", "nvls"), "search pattern")
    if gpus_per_node < 1 or num_nodes < 1 or gpu_link_bw_bytes_per_s <= 0:
        raise GpucommError("search_graph needs gpus_per_node >= 1, num_nodes >= 1 and a positive link bandwidth")
    inter = num_nodes > 1
    if inter and not nic_bw_bytes_per_s:
        raise GpucommError("search_graph across nodes needs nic_bw_bytes_per_s")
    link_gbps = gpu_link_bw_bytes_per_s / 1e9
    nic_gbps = (nic_bw_bytes_per_s or 0.0) / 1e9
    nics = nics_per_node or gpus_per_node
    speeds = _speed_arrays(compute_capability, inter)
    if pattern == "nvls":
        max_channels = min(NCCL_MAX_NVLS_ARITY, gpus_per_node)           # search.cc:1126-1128
        if not inter:
            min_channels = max_channels                                  # search.cc:1135-1138
        elif nics_per_node:
            max_channels = min(max_channels, nics)
    max_channels = max_channels or MAXCHANNELS // 2
    eps = 1e-3  # SUB_ROUND: NCCL rounds link bandwidths to 1/1000 GB/s (search.cc:79)

    def channels(speed_intra: float, speed_inter: float) -> int:
        """Channels that fit at these speeds, up to max_channels."""
        if pattern == "nvls":
            n = max_channels if (max_channels + 1) * speed_intra <= link_gbps + eps else 0
        else:
            n = int((link_gbps + eps) // speed_intra) if gpus_per_node > 1 else max_channels
        if inter:
            n = min(n, nics * int((nic_gbps + eps) // speed_inter))
        return min(n, max_channels)

    max_bw = min(link_gbps, nic_gbps) if inter else link_gbps
    total_bw = link_gbps * (gpus_per_node / (gpus_per_node - 1) if (gpus_per_node > 1 and pattern != "ring") else 1)
    index = 0
    while (speeds[index] > max_bw or speeds[index] * min_channels > total_bw) and index < len(speeds) - 1:
        index += 1                                                       # search.cc:1170-1173
    best_n, best_intra, best_inter = 0, 0.0, 0.0
    while True:                                                          # pass 1
        n = channels(speeds[index], speeds[index])
        if n >= min_channels and (best_n == 0 or n * speeds[index] > best_n * best_intra):
            best_n, best_intra, best_inter = n, speeds[index], speeds[index]
        if n == max_channels and n >= min_channels:
            break                                                        # "optimal solution" (search.cc:1192)
        if best_n and best_n * best_inter >= link_gbps:
            break                                                        # search.cc:1193
        if index < len(speeds) - 1 and (best_n == 0 or speeds[index + 1] / best_inter > .49):
            index += 1                                                   # search.cc:1245-1248
            continue
        break
    if best_n == 0:
        return NO_GRAPH
    if pattern != "nvls" and best_intra >= 25.0 and not (compute_capability > 80 and best_intra < 50.0 and best_n > 4):
        dup = min(best_n * 2, max_channels)                              # ncclTopoDupChannels, search.cc:1036-1049
        factor = math.ceil(dup / best_n)
        best_n, best_intra, best_inter = dup, best_intra / factor, best_inter / factor
    # pass 2, search.cc:1266-1287: try higher speeds with the channel count fixed
    index = 0
    while speeds[index] > best_inter and index < len(speeds) - 1:
        index += 1
    if pattern == "ring":
        while index > 0:
            index -= 1
            if channels(speeds[index], speeds[index]) >= best_n:
                best_intra = best_inter = speeds[index]
    elif pattern == "nvls":
        while index > 0 and best_inter < 2 * best_intra:
            index -= 1
            if channels(best_intra, speeds[index]) < best_n:
                break
            best_inter = speeds[index]
    else:
        intra_index = next((i for i, s in enumerate(speeds) if s <= best_intra), len(speeds) - 1)
        while intra_index > 0 and best_intra < 2 * best_inter:
            intra_index -= 1
            if channels(speeds[intra_index], best_inter) < best_n:
                break
            best_intra = speeds[intra_index]
    return Graph(best_n, best_intra * 1e9, best_inter * 1e9, type_intra=type_intra, type_inter=type_inter)


def build_comm(compute_capability: int, num_ranks: int, gpu_link_bw_bytes_per_s: float, *, num_nodes: int = 1,
               type_intra: str = "NVL", nvswitch: bool = True, nic_bw_bytes_per_s: float | None = None,
               nics_per_node: int | None = None, nvls_support: bool | None = None, net_device: str = "host",
               cpu_vendor: str = "intel", latency_inter_s: float = 0.0, nccl_version: tuple = (2, 30, 7)) -> Comm:
    """A communicator whose graphs come from :func:`search_graph`, with NCCL's channel setup.

    Parameters
    ----------
    compute_capability : int
        major*10+minor.
    num_ranks : int
        GPUs in the communicator, spread evenly over ``num_nodes``.
    gpu_link_bw_bytes_per_s : float
        Each GPU's link to the hub as NCCL's topology sees it (see :func:`search_graph`).
    num_nodes : int
        Nodes.
    type_intra : str
        Intra-node path type: ``"NVL"`` (NVLink/NVSwitch), ``"PIX"``/``"PXB"`` (PCIe P2P), ``"PHB"``/``"SYS"``
        (through the CPU; P2P disabled stages through host memory).
    nvswitch : bool
        The GPUs meet at an NVSwitch (NVLS and CollNet Direct need one).
    nic_bw_bytes_per_s : float, optional
        One NIC's bandwidth (multi-node).
    nics_per_node : int, optional
        NICs per node (default one per GPU).
    nvls_support : bool, optional
        Multicast support; default: sm90+ behind an NVSwitch.
    net_device : {"host", "unpack"}
        ``"unpack"`` for GPUDirect-TCPX/O networks (doubles the channels below 16, ``connect.cc:485-490``).
    cpu_vendor : str
        ``"intel"``, ``"amd"``, ``"zhaoxin"`` or ``"mixed"``.
    latency_inter_s : float
        The net plugin's reported latency (``ncclNetProperties.latency``), s: every graph's ``latencyInter``
        (``search.cc``); 0 (unset) for IB and sockets.
    nccl_version : tuple of int
        (major, minor, patch).

    Returns
    -------
    Comm
        Ring and tree graphs (the tree searched with the ring's channel count, ``init.cc:1184-1186``), the NVLS
        graph where supported, ``nChannels`` = 2 x min(ring, tree) channels (``connect.cc:460``), doubled again
        on sm90+ across nodes when the ring's ``bwIntra`` > 45 GB/s and for unpack networks below 16
        (``connect.cc:480-490``), and NCCL's NVLS channel count.
    """
    if num_nodes < 1 or num_ranks % num_nodes:
        raise GpucommError(f"num_ranks {num_ranks} must be a multiple of num_nodes {num_nodes}")
    gpus = num_ranks // num_nodes
    if gpus == 1:
        type_intra = "LOC"  # one GPU per node: typeIntra stays at its minimum, PATH_LOC (search.cc:1087-1100)
    kwargs = dict(num_nodes=num_nodes, nic_bw_bytes_per_s=nic_bw_bytes_per_s, nics_per_node=nics_per_node,
                  type_intra=type_intra)
    ring = search_graph("ring", compute_capability, gpus, gpu_link_bw_bytes_per_s, **kwargs)
    tree = search_graph("tree", compute_capability, gpus, gpu_link_bw_bytes_per_s, min_channels=ring.num_channels,
                        max_channels=ring.num_channels, **kwargs)
    graphs = {"ring": ring, "tree": tree}
    if latency_inter_s and num_nodes > 1:
        graphs = {k: replace(g, latency_inter_s=latency_inter_s) for k, g in graphs.items()}
    nvls_support = (compute_capability >= 90 and nvswitch and type_intra == "NVL" and gpus >= 2) \
        if nvls_support is None else nvls_support
    nvls_channels = 0
    if nvls_support:
        graphs["nvls"] = replace(search_graph("nvls", compute_capability, gpus, gpu_link_bw_bytes_per_s, **kwargs),
                                 latency_inter_s=latency_inter_s if num_nodes > 1 else 0.0)
        nvls_channels = NVLS_CHANNELS["sm90" if compute_capability < 100 else
                                      "sm100_multi_node" if num_nodes > 1 else "sm100_one_node"]
    n = min(MAXCHANNELS, 2 * min(ring.num_channels, tree.num_channels)) or 1
    if compute_capability >= 90 and num_nodes > 1 and ring.bw_intra_gbps > 45.0 and n < 16:
        n *= 2
    if net_device == "unpack" and num_nodes > 1 and n < 16:
        n *= 2
    return Comm(compute_capability=compute_capability, num_ranks=num_ranks, num_nodes=num_nodes,
                graphs=MappingProxyType(graphs), num_channels=n, nvls_channels=nvls_channels,
                nvls_support=nvls_support, nvswitch_count=1 if nvswitch else 0, cpu_vendor=cpu_vendor,
                net_device=net_device, nccl_version=tuple(nccl_version))


def with_version(comm: Comm, nccl_version: tuple) -> Comm:
    """The same communicator under another NCCL release.

    Parameters
    ----------
    comm : Comm
        The communicator.
    nccl_version : tuple of int
        (major, minor, patch).

    Returns
    -------
    Comm
        A copy with ``nccl_version`` replaced.
    """
    return replace(comm, nccl_version=tuple(nccl_version))
