"""From a :class:`~gpucomm.model.fabric.Fabric` to the communicator NCCL's tuner sees, with its tables cached.

:func:`fabric_to_comm` maps the catalog (GPU architecture, NVLink count, PCIe generation, P2P, sockets,
NICs) onto :func:`gpucomm.model.nccl_tuner.build_comm`; :func:`comm_and_table` memoizes the communicator
and its :func:`~gpucomm.model.nccl_tuner.tuner_table`, which do not depend on the message size (NCCL
computes them once per communicator, ``ncclTopoTuneModel``), so a size sweep or a calculator update
pays only :func:`~gpucomm.model.nccl_tuner.choose`.

Where NCCL's topology inputs are known to be wrong for a machine, the bandwidth fed to the search is a
calibration instead of NCCL's nominal rate, each said below:

* P2P disabled or unsupported: NCCL plans with the PCIe rate (``PATH_PHB``/``PATH_SYS``), but the data
  is copied through host memory; the search gets
  :data:`~gpucomm.model.hardware.calibration.HOST_STAGED_EFFICIENCY` x the nominal PCIe rate, shared by
  the GPUs behind one uplink (the tuner alone predicts 0.06-0.5 of the measured time there).
* The network: each NIC's rate is :data:`~gpucomm.model.hardware.calibration.NET_EFFICIENCY` x nominal
  (fitted jointly on every multi-node run).
* GPUs over two sockets: a GPU's link is at most the socket link's per-direction rate.
* Without GPUDirect RDMA (``Fabric.gdr``; always with TCP sockets) NCCL routes each GPU's NIC traffic through
  the CPU and keeps its network buffers in host memory (``src/graph/paths.cc``, ``ncclTopoCheckGdr`` and the
  "divert all traffic through the CPU" step; ``src/transport/net.cc``), so a GPU feeds its NICs at most at its
  PCIe link's host-staged rate (:func:`nic_feed_bw_bytes_per_s`).
* TCP sockets (``NET/Socket``) are priced as NCCL's tuner prices them, which is as InfiniBand: the same network
  latency rows, and ``latencyInter`` 0 (``props->latency = 0`` in ``src/transport/net_socket.cc`` at v2.30.7-1),
  at the interface's speed (read from ``/sys/class/net/<if>/speed``, same file). Each channel's connection is one
  TCP stream driven by the proxy thread unless ``NCCL_SOCKET_NTHREADS`` x ``NCCL_NSOCKS_PERTHREAD`` open more
  (``ncclNetSocketGetNsockNthread``: 0 helper threads and 1 socket per thread by default, 2 x 8 on AWS, 4 x 1 on
  GCP gVNIC; at most 16 threads and 64 sockets). No bundled sweep ran over sockets, so no socket-specific term is
  fitted: the delivered rate is the NIC's x the network efficiency, as over RDMA (NCCL issue #209: 2 nodes x 1 GPU
  over GCP's 32 GbE with 8 threads reached 30.6-31.4 Gbit/s of bus bandwidth, 0.96-0.98 of the line rate).
"""

from __future__ import annotations

import functools
import math

from gpucomm import GpucommError
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.fabric import Fabric
from gpucomm.model.hardware import GPUS, Link, get_gpu, get_inter_socket_link, get_link
from gpucomm.model.hardware import calibration as cal

__all__ = ["DEFAULT_NCCL_VERSION", "compute_capability", "parse_nccl_version",
           "fabric_to_comm", "comm_and_table", "delivered_bw_bytes_per_s", "nic_feed_bw_bytes_per_s"]

DEFAULT_NCCL_VERSION = (2, 30, 7)
"""The NCCL release the model follows unless told otherwise: the tuner's tag, :data:`~gpucomm.model.nccl_tuner.NCCL_TAG`."""

_LINK_CC = {"nvlink1": 60, "nvlink2": 70, "nvlink3": 80, "nvlink4": 90, "nvlink5": 100,
            "pcie3": 70, "pcie4": 80, "pcie5": 90, "pcie6": 100}
"""Compute capability assumed from the link when the fabric names no GPU: the generation that shipped with it."""

_NOMINAL_GBPS_PER_NVLINK = {"nvlink1": 20.0, "nvlink2": 25.0, "nvlink3": 25.0, "nvlink4": 25.0, "nvlink5": 50.0}
"""Nominal GB/s per link and direction (catalog: links x per-link rate), to count a link's NVLinks."""


@functools.lru_cache(maxsize=64)
def parse_nccl_version(text: str | tuple) -> tuple:
    """``"2.27.7"``, ``"2.18"`` or a tuple -> (major, minor, patch).

    Parameters
    ----------
    text : str or tuple of int
        An NCCL release.

    Returns
    -------
    tuple of int
        Three integers.

    Raises
    ------
    GpucommError
        If it is not two or three dot-separated integers from 2.0 on.

    Examples
    --------
    >>> parse_nccl_version("2.18")
    (2, 18, 0)
    """
    parts = tuple(text) if isinstance(text, tuple) else tuple(str(text).strip().split("."))
    try:
        nums = tuple(int(p) for p in parts)
    except ValueError:
        nums = ()
    if not 2 <= len(nums) <= 3 or nums[0] < 2 or any(p < 0 for p in nums):
        raise GpucommError(f"NCCL version {text!r}: expected major.minor[.patch] from 2.0, e.g. 2.30.7")
    return (nums + (0,))[:3]


def compute_capability(fabric: Fabric) -> int:
    """The fabric's GPU compute capability (major*10+minor): its GPU's, else that of the link's generation.

    Parameters
    ----------
    fabric : Fabric
        The fabric.

    Returns
    -------
    int
        The catalog's ``compute_capability`` of ``fabric.gpu``, else the link's (NVLink 3 -> 80, PCIe 5 -> 90, ...).
    """
    gpu = _gpu_key(fabric)
    if gpu is not None and gpu in GPUS:
        return GPUS[gpu].compute_capability
    return _LINK_CC.get(fabric.link.key, 80)


def _gpu_key(fabric: Fabric) -> str | None:
    """The fabric's GPU, or the card a bridge link belongs to (:func:`~gpucomm.model.hardware.gpus.bridge_link`
    names it ``<gpu>_nvlink_bridge``)."""
    if fabric.gpu is not None:
        return fabric.gpu
    key = fabric.link.key
    return key.removesuffix(BRIDGE_SUFFIX) if key.endswith(BRIDGE_SUFFIX) else None


BRIDGE_SUFFIX = "_nvlink_bridge"


def _nvlink_count(fabric: Fabric) -> int:
    gpu = _gpu_key(fabric)
    if gpu is not None and get_gpu(gpu).nvlink_links:
        return get_gpu(gpu).nvlink_links
    per_link = _NOMINAL_GBPS_PER_NVLINK.get(fabric.link.key, 25.0)
    return max(1, round(fabric.link.bw_bytes_per_s / 1e9 / per_link))


def p2p_nvlinks(fabric: Fabric, gpus_per_node: int) -> int | None:
    """NVLinks on the path between two GPUs of one node, as NCCL's point-to-point channel rule counts them.

    Parameters
    ----------
    fabric : Fabric
        How the GPUs are connected.
    gpus_per_node : int
        GPUs of the node taking part, >= 1.

    Returns
    -------
    int or None
        Through an NVSwitch each GPU's NVLinks; in a mesh its links to one peer; a bridged pair's bridge links for
        2 GPUs. None where the path is PCIe or host memory (no P2P, or pairs of bridged cards beyond 2 GPUs).
    """
    if not fabric.p2p or fabric.link.kind != "nvlink" or (fabric.topology == "pairs" and gpus_per_node > 2):
        return None
    links = _nvlink_count(fabric)
    return max(1, links // (fabric.mesh_size - 1)) if fabric.topology == "mesh" else links


def _pcie_gen(key: str) -> int:
    return int(key.removeprefix("pcie"))


def delivered_bw_bytes_per_s(link: str | Link, *, p2p: bool = True) -> float:
    """What a GPU link delivers to a large-message ring, bytes/s per direction: nominal x the efficiency
    :func:`gpucomm.model.hardware.calibration.link_efficiency` gives it.

    Parameters
    ----------
    link : str or Link
        Catalog key or entry.
    p2p : bool
        False: staged through host memory (PCIe links).

    Returns
    -------
    float
        Bytes/s per direction.

    Raises
    ------
    GpucommError
        For an unknown link key.
    """
    link = get_link(link)
    return link.bw_bytes_per_s * cal.link_efficiency(link.key, link.kind, p2p=p2p).value


def nic_feed_bw_bytes_per_s(fabric: Fabric) -> float:
    """What one GPU can push towards its NICs, per direction, in bytes/s: the path GPUDirect RDMA or host staging takes.

    Parameters
    ----------
    fabric : Fabric
        How the GPUs are connected (its ``link``, ``p2p`` and ``gdr``).

    Returns
    -------
    float
        A PCIe GPU: its link's delivered rate (:func:`delivered_bw_bytes_per_s`), host-staged without P2P or without
        GPUDirect RDMA (the NIC reads GPU memory over that link, or NCCL stages through host memory: module
        docstring). An NVLink GPU with GPUDirect RDMA: ``inf`` (H100, B200: a PCIe 5.0 link per NIC, not the limit);
        without it, its host PCIe link's host-staged rate, or ``inf`` where the catalog has none (Grace superchips
        reach host memory over NVLink-C2C, 450 GB/s per direction).

    Examples
    --------
    >>> from gpucomm.model.fabric import make_fabric
    >>> nic_feed_bw_bytes_per_s(make_fabric("nvlink4", gpu="h100_sxm5"))
    inf
    >>> f = make_fabric("nvlink4", gpu="h100_sxm5", num_nodes=2, network="ib_ndr", gdr=False)
    >>> nic_feed_bw_bytes_per_s(f) == delivered_bw_bytes_per_s("pcie5", p2p=False)
    True
    """
    if fabric.link.kind == "pcie":
        return delivered_bw_bytes_per_s(fabric.link, p2p=fabric.p2p and fabric.gdr)
    if fabric.gdr:
        return math.inf
    host = fabric.host_pcie_link
    return delivered_bw_bytes_per_s(host, p2p=False) if host else math.inf


def fabric_to_comm(fabric: Fabric, num_ranks: int, nccl_version: tuple = DEFAULT_NCCL_VERSION) -> nt.Comm:
    """The communicator NCCL would build for ``num_ranks`` GPUs of ``fabric``.

    Parameters
    ----------
    fabric : Fabric
        How the GPUs are connected.
    num_ranks : int
        GPUs in the communicator, all nodes together (a multiple of ``fabric.num_nodes``).
    nccl_version : tuple of int
        (major, minor, patch): gates NVLS, PAT, LL128 and the NVLS formula (``nccl_tuner.RELEASE_CHANGES``).

    Returns
    -------
    Comm
        Graphs from :func:`~gpucomm.model.nccl_tuner.search_graph` with, per GPU: an NVSwitch fabric's
        NVLinks at NCCL's per-link rate (``topo.h``, :func:`~gpucomm.model.nccl_tuner.nvlink_bw_bytes_per_s`);
        a mesh's share ``(n-1)/(m-1)`` of them; a bridged pair's bridge (2 GPUs) or the PCIe link between pairs
        (more); PCIe with P2P at NCCL's PCIe rate (:data:`~gpucomm.model.nccl_tuner.PCI_BW_GBPS`, ``PATH_PXB``);
        without P2P the calibrated host-staged rate (``PATH_PHB``, module docstring); across two sockets
        ``PATH_SYS`` and at most the socket link. NICs at the calibrated network rate, at most what a GPU feeds them
        (:func:`nic_feed_bw_bytes_per_s`), with their transport's plugin latency and net device.

    Raises
    ------
    GpucommError
        If ``num_ranks`` is not a multiple of the fabric's nodes.
    """
    nodes = fabric.num_nodes
    if num_ranks % nodes:
        raise GpucommError(f"{num_ranks} GPUs over {nodes} nodes: expected a multiple of the node count")
    g = num_ranks // nodes
    cc = compute_capability(fabric)
    link = fabric.link
    nvswitch = False
    if link.kind == "nvlink" and fabric.topology != "pairs" or (fabric.topology == "pairs" and g <= 2):
        bw = nt.nvlink_bw_bytes_per_s(cc, _nvlink_count(fabric))
        type_intra = "NVL"
        if fabric.topology == "mesh":
            bw *= max(g - 1, 1) / (fabric.mesh_size - 1)
        nvswitch = fabric.topology == "switch"
    else:
        pcie_key = fabric.pcie_link if fabric.topology == "pairs" else link.key
        nominal_pci = nt.PCI_BW_GBPS.get(_pcie_gen(pcie_key), 24.0) * 1e9
        if fabric.p2p:
            bw, type_intra = nominal_pci, "PXB"
        else:
            # host-staged copies: the calibrated rate, shared by the GPUs behind one uplink (see cost.per_gpu_bw...)
            bw = delivered_bw_bytes_per_s(pcie_key, p2p=False) / min(fabric.gpus_per_uplink, g)
            type_intra = "PHB"
        if fabric.inter_socket is not None:
            bw = min(bw, get_inter_socket_link(fabric.inter_socket).bw_bytes_per_s)
            type_intra = "SYS"
    nic_bw, net_latency_s, net_device = None, 0.0, "host"
    if nodes > 1:
        from gpucomm.model.hardware.network import get_network
        network = get_network(fabric.network)
        nic_bw = network.bw_bytes_per_s * cal.NET_EFFICIENCY.value
        plugin_latency = cal.NET_PLUGIN_LATENCY_S.get(network.key)  # a fitted plugin latency follows the calibration
        net_latency_s = plugin_latency.value if plugin_latency else network.latency_s
        net_device = network.net_device
        if link.kind == "pcie" and not fabric.p2p:
            nic_bw = min(nic_bw, bw)  # the host-staged rate above, shared by the GPUs behind one uplink
        # GPUDirect RDMA reads GPU memory over the GPU's own PCIe link (staged through host memory without P2P or
        # without GDR): NCCL's search counts the GPU-to-NIC path, which a star of one link per GPU does not hold; the
        # link delivers its measured share of the nominal rate, as inside the node (cost._delivered_bw_ratio)
        nic_bw = min(nic_bw, nic_feed_bw_bytes_per_s(fabric))
    return nt.build_comm(cc, num_ranks, bw, num_nodes=nodes, type_intra=type_intra, nvswitch=nvswitch,
                         nic_bw_bytes_per_s=nic_bw, nics_per_node=fabric.nics_per_node,
                         nvls_support=None if fabric.p2p else False, net_device=net_device,
                         latency_inter_s=net_latency_s, nccl_version=tuple(nccl_version))


@functools.lru_cache(maxsize=512)
def comm_and_table(fabric: Fabric, num_ranks: int,
                   nccl_version: tuple = DEFAULT_NCCL_VERSION) -> tuple[nt.Comm, nt.TunerTable]:
    """:func:`fabric_to_comm` and its :func:`~gpucomm.model.nccl_tuner.tuner_table`, memoized.

    Parameters
    ----------
    fabric : Fabric
        How the GPUs are connected (frozen, so it is a cache key).
    num_ranks : int
        GPUs, all nodes together.
    nccl_version : tuple of int
        (major, minor, patch).

    Returns
    -------
    (Comm, TunerTable)
        Both independent of the message size, as in NCCL (built once per communicator).

    Raises
    ------
    GpucommError
        As :func:`fabric_to_comm`.
    """
    comm = fabric_to_comm(fabric, num_ranks, nccl_version)
    return comm, nt.tuner_table(comm)
