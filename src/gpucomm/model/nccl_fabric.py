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
  (fitted on GPUDirect-TCPXO, case C08).
* GPUs over two sockets: a GPU's link is at most the socket link's per-direction rate.
"""

from __future__ import annotations

import functools

from gpucomm import GpucommError
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.fabric import Fabric
from gpucomm.model.hardware import GPUS, Link, get_gpu, get_inter_socket_link, get_link
from gpucomm.model.hardware import calibration as cal

__all__ = ["DEFAULT_NCCL_VERSION", "compute_capability", "parse_nccl_version",
           "fabric_to_comm", "comm_and_table", "delivered_bw_bytes_per_s"]

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
        ``PATH_SYS`` and at most the socket link. NICs at the calibrated network rate, with their transport's plugin latency and net device.

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
        net_latency_s, net_device = network.latency_s, network.net_device
        if link.kind == "pcie":
            # GPUDirect RDMA reads GPU memory over the GPU's own PCIe link (staged through host memory without P2P):
            # NCCL's search counts the GPU-to-NIC path, which a star of one link per GPU does not hold; the link
            # delivers its measured share of the nominal rate, as inside the node (cost._delivered_bw_ratio)
            nic_bw = min(nic_bw, bw if not fabric.p2p else delivered_bw_bytes_per_s(link, p2p=True))
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
