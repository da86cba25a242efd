"""How GPUs are connected: one type, :class:`Fabric`, for the cost model, TP, training, planning and the calculators.

A fabric says which GPU the group runs on (a catalog key, optional), which link joins the GPUs of
a node and how (through a switch, a point-to-point mesh, NVLink-bridged pairs; with P2P or staged
through host memory; under one socket or two; GPUs sharing a PCIe uplink), how many GPUs one node
holds, and across nodes which network and how many NICs per node. Build one from a link and its
options (:func:`make_fabric`) or from a catalog system (:func:`system_fabric`); a fabric is frozen
and validated, so every consumer (:func:`gpucomm.model.cost.collective_cost`,
:func:`gpucomm.model.tp.tp_step`, :func:`gpucomm.model.training.step_comm`,
:mod:`gpucomm.model.planning`, the calculators and figures) takes it whole, with nothing to forget.

Examples
--------
>>> make_fabric("pcie4", p2p=False).label
'PCIe 4.0 x16, no P2P (via host memory)'
>>> f = system_fabric("dgx_h100", num_nodes=2)
>>> f.gpu, f.link.key, f.network, f.nics_per_node, f.gpus_per_node
('h100_sxm5', 'nvlink4', 'ib_ndr', 8, 8)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from gpucomm import GpucommError
from gpucomm.model.collectives import check_num_ranks
from gpucomm.model.hardware import Link, get_gpu, get_inter_socket_link, get_link, get_network, get_system
from gpucomm.model.hardware.gpus import bridged_gpus, gpu_nvlink_link
from gpucomm.model.hardware.nvswitch import System

__all__ = ["TOPOLOGIES", "NET_TRANSPORTS", "NVLINK_DOMAIN_MAX_GPUS", "Fabric", "make_fabric", "system_fabric", "as_fabric"]

TOPOLOGIES = ("switch", "mesh", "pairs")
"""How the GPUs of a node are wired (see :class:`Fabric`)."""

NET_TRANSPORTS = ("rdma", "socket")
"""NCCL's transport between nodes: ``rdma`` its InfiniBand verbs transport (InfiniBand and RoCE, ``NET/IB``; a network
whose entry is a plugin, GPUDirect-TCPXO, keeps its plugin), ``socket`` its TCP sockets (``NET/Socket``,
``src/transport/net_socket.cc`` at v2.30.7-1), which NCCL falls back to without an RDMA device."""

HOST_PCIE_GEN_BY_NVLINK = {2: 3, 3: 4}
"""Host PCIe generation of the SXM boards whose GPU entry gives none: V100 SXM2 boards (DGX-1, DGX-2) PCIe 3.0; A100
SXM4 boards (DGX/HGX A100) PCIe 4.0 switches, DGX A100 user guide (https://docs.nvidia.com/dgx/dgxa100-user-guide/ [U]),
as case C05 (DGX A100 with P2P off) measured."""

NVLINK_DOMAIN_MAX_GPUS = {1: 8, 2: 16, 3: 16, 4: 256, 5: 576}
"""Most GPUs one NVLink switch domain of each NVLink generation holds, for a what-if ``switch`` fabric without a
system: NVLink 1 had no NVSwitch (DGX-1: 8 GPUs in a hybrid cube-mesh); NVLink 2 and 3 (first- and second-generation
NVSwitch) join 16 GPUs (DGX-2; HGX A100 16-GPU, NVIDIA Technical Blog "NVIDIA Ampere Architecture In-Depth", May 2020
[U]); NVLink 4 with the NVLink Switch System up to 256 H100 GPUs, NVLink 5 up to 576 GPUs in one NVLink domain
(GB200 NVL576; NVIDIA, "NVLink and NVLink Switch", https://www.nvidia.com/en-us/data-center/nvlink/ [U])."""


@dataclass(frozen=True)
class Fabric:
    """How a group of GPUs is connected: the GPU, the link inside a node and how it is wired, nodes and network.

    Build it with :func:`make_fabric` or :func:`system_fabric` (both validate); :meth:`replace` changes
    fields and validates again.

    Attributes
    ----------
    link : Link
        Each GPU's intra-node link (catalog entry; for a bridged PCIe card, its NVLink bridge).
    p2p : bool
        False: P2P disabled or unsupported, transfers staged through host memory (PCIe only).
    topology : {"switch", "mesh", "pairs"}
        ``switch``: every GPU reaches every other at its full bandwidth (NVSwitch, or a PCIe
        tree for a ring). ``mesh``: direct point-to-point links, each GPU's bandwidth split
        evenly over its ``mesh_size - 1`` peers, as in NVIDIA's "P2P vs NVSwitch" table (NVIDIA
        Technical Blog, "NVIDIA NVLink and NVIDIA NVSwitch Supercharge Large Language Model Inference", Aug 2024).
        ``pairs``: NVLink bridges join GPUs two by two (A40, RTX 3090, A100/H100 PCIe); a
        collective over more than 2 GPUs runs its ring through ``pcie_link`` between pairs,
        and the slowest hop sets the ring's pace.
    mesh_size : int
        GPUs wired in the mesh (for ``mesh``), whether or not all take part.
    num_nodes : int
        Nodes; the GPUs of a collective must divide evenly over them.
    network : str or None
        Scale-out NIC key (``gpucomm.model.hardware.network``) when ``num_nodes > 1``.
    nics_per_node : int or None
        NICs per node (default: one per GPU, as in DGX H100).
    gpus_per_uplink : int
        Without P2P: GPUs that share one PCIe uplink to the host (2 behind each PCIe switch in a
        DGX A100). Staged traffic of those GPUs crosses the same uplink, so each gets 1/k of it.
        With P2P it does not apply: a ring enters and leaves each switch once, so an uplink
        carries one flow each way whatever the number of GPUs behind it.
    pcie_link : str
        For ``pairs``: the PCIe link the ring crosses between bridged pairs.
    inter_socket : str or None
        Key of :data:`~gpucomm.model.hardware.pcie.INTER_SOCKET_LINKS` when the GPUs sit under both
        sockets of a two-socket host (``nvidia-smi topo -m`` shows SYS between some of them);
        None when they share one socket. A ring crosses the socket link once in each direction,
        every channel of it, so a GPU's ring bandwidth is at most that link's per-direction
        bandwidth (``InterSocketLink.bw_bytes_per_s``: measured where published, else NCCL's
        planning figure, which measured Zen 4/5 hosts exceed).
    gpu : str or None
        GPU catalog key (compute, memory, NVLink generation), or None where only the links matter
        (a collective's cost). :func:`gpucomm.model.tp.tp_step` and the training estimates need it.
    gpus_per_node : int or None
        GPUs one node (or NVLink domain) holds; None: not limited. A collective with more GPUs per
        node is refused, and TP stays within it (:func:`gpucomm.model.planning.max_tp_size`).
    system : str or None
        The catalog system the fabric was built from (:func:`system_fabric`), or None.
    name : str
        Display name for tables and legends; empty: :attr:`label` describes the fabric.
    net_transport : {"rdma", "socket"}
        NCCL's transport between nodes (:data:`NET_TRANSPORTS`); ``rdma`` on one node.
    gdr : bool
        GPUDirect RDMA between the GPUs and their NICs. False (``NCCL_NET_GDR_LEVEL=LOC``, a NIC or GPU without it,
        a GPU too far from its NIC, or TCP sockets, whose plugin takes host pointers only: ``ptrSupport =
        NCCL_PTR_HOST`` in ``net_socket.cc``): NCCL diverts the GPU-NIC traffic through the CPU (``paths.cc``,
        ``ncclTopoCheckGdr``, "divert all traffic through the CPU local to the GPU") and its buffers live in host
        memory (``net.cc``), so each GPU feeds its NICs at most at its PCIe link's host-staged rate.
    """

    link: Link
    p2p: bool = True
    topology: str = "switch"
    mesh_size: int = 8
    num_nodes: int = 1
    network: str | None = None
    nics_per_node: int | None = None
    gpus_per_uplink: int = 1
    pcie_link: str = "pcie4"
    inter_socket: str | None = None
    gpu: str | None = None
    gpus_per_node: int | None = None
    system: str | None = None
    name: str = ""
    net_transport: str = "rdma"
    gdr: bool = True

    @property
    def nvls_capable(self) -> bool:
        """NVLink SHARP needs third-generation NVSwitch (NVLink 4) or later (NCCL env.rst, NCCL_NVLS_ENABLE).

        The link's generation is the catalog link's (``nvlink4``) or, for a GPU's own cut-down NVLink
        (H800: ``h800_sxm_nvlink``), the GPU's.
        """
        if self.link.kind != "nvlink" or self.topology != "switch" or not self.p2p:
            return False
        return (self.nvlink_generation or 0) >= 4

    def without_p2p(self) -> Fabric:
        """The same GPUs with P2P off (``NCCL_P2P_DISABLE=1``): every transfer staged through host memory over each GPU's
        PCIe link (NCCL's SHM transport), NVLink unused.

        Returns
        -------
        Fabric
            ``self`` on the GPU's host PCIe generation (:data:`HOST_PCIE_GEN_BY_NVLINK` where the GPU's entry has none),
            ``p2p=False``, topology ``switch``; unchanged if P2P is already off.

        Raises
        ------
        GpucommError
            Where neither the GPU nor its NVLink generation gives the host PCIe generation.
        """
        if not self.p2p:
            return self
        host = self.host_pcie_link
        if host is None:
            raise GpucommError(f"P2P off on {self.label}: the host PCIe generation of {self.gpu or self.link.key} is not in "
                               "the catalog, so the staged path is unknown; expected a GPU with a PCIe generation")
        return self.replace(link=host, p2p=False, topology="switch")

    @property
    def host_pcie_link(self) -> str | None:
        """Key of the PCIe link between each GPU and its host (``pcie5``): the link itself on PCIe, else the GPU's PCIe
        generation, else :data:`HOST_PCIE_GEN_BY_NVLINK`; None where none is known (GH200, GB200: NVLink-C2C to Grace)."""
        if self.link.kind == "pcie":
            return self.link.key
        gpu = get_gpu(self.gpu) if self.gpu else None
        gen = (gpu.pcie_gen if gpu else None) or HOST_PCIE_GEN_BY_NVLINK.get(self.nvlink_generation or 0)
        return f"pcie{gen}" if gen else None

    @property
    def max_gpus_per_node(self) -> int | None:
        """GPUs one node (NVLink domain) can hold: :attr:`gpus_per_node`, else for an NVLink ``switch`` the
        generation's largest switch domain (:data:`NVLINK_DOMAIN_MAX_GPUS`), else None (not limited)."""
        if self.gpus_per_node is not None:
            return self.gpus_per_node
        if self.link.kind != "nvlink" or self.topology != "switch":
            return None
        gen = self.nvlink_generation
        return NVLINK_DOMAIN_MAX_GPUS.get(gen) if gen else None

    @property
    def nvlink_generation(self) -> int | None:
        """The NVLink generation of the link (``nvlink4`` -> 4; a GPU's own NVLink: the GPU's), None for PCIe."""
        if self.link.kind != "nvlink":
            return None
        key = self.link.key
        return int(key[6:]) if _is_generic_nvlink(key) else (get_gpu(self.gpu).nvlink_gen if self.gpu else None)

    def route(self, num_ranks: int) -> str:
        """What a collective over ``num_ranks`` GPUs of this fabric crosses, in words (for ``gpucomm cost``).

        Parameters
        ----------
        num_ranks : int
            GPUs in the collective, all nodes together (>= 1).

        Returns
        -------
        str
            The intra-node path (NVLink through a switch, a mesh, a pair's bridge; or PCIe with P2P or staged
            through host memory; the socket link where the GPUs span two sockets), then the network across nodes.
            For bridged ``pairs`` with more than 2 GPUs per node: the ring leaves each pair over ``pcie_link``.

        Examples
        --------
        >>> system_fabric("pcie_8x_a40_bridged").route(8)
        'NVLink bridge within each pair; between pairs the ring crosses PCIe 4.0 x16 (P2P) and the socket link xgmi_zen2'
        >>> system_fabric("pcie_8x_a40_bridged").route(2)
        'NVLink bridge of one pair (2 GPUs): no PCIe hop'
        """
        per_node = max(1, num_ranks // self.num_nodes)
        sockets = f" and the socket link {self.inter_socket}" if self.inter_socket else ""
        pcie_how = "P2P" if self.p2p else "staged through host memory, no P2P"
        if self.topology == "pairs":
            if per_node <= 2:
                text = "NVLink bridge of one pair (2 GPUs): no PCIe hop"
            else:
                text = (f"NVLink bridge within each pair; between pairs the ring crosses "
                        f"{get_link(self.pcie_link).name} ({pcie_how}){sockets}")
        elif self.link.kind == "nvlink":
            text = f"{self.link.name} through NVSwitch" if self.topology == "switch" else \
                f"{self.link.name}, point-to-point mesh of {self.mesh_size}"
        else:
            text = f"{self.link.name} ({pcie_how}){sockets}"
        if self.num_nodes > 1:
            nics = f"{self.nics_per_node} NICs per node" if self.nics_per_node else "one NIC per GPU"
            text += f"; across {self.num_nodes} nodes {self.network}, {nics}{self._net_words}"
        return text

    @property
    def _net_words(self) -> str:
        """``", TCP sockets (NET/Socket), no GPUDirect RDMA"`` where they apply, else empty."""
        words = ", TCP sockets (NET/Socket)" if self.net_transport == "socket" else ""
        return words + (", no GPUDirect RDMA" if not self.gdr else "")

    @property
    def label(self) -> str:
        """:attr:`name`, or a description: ``"PCIe 4.0 x16, no P2P (via host memory)"``, ``"NVLink 4.0 (...), P2P mesh of 8"``."""
        if self.name:
            return self.name
        text = self.link.name if self.p2p else f"{self.link.name}, no P2P (via host memory)"
        if self.topology == "mesh":
            text += f", P2P mesh of {self.mesh_size}"
        elif self.topology == "pairs":
            text += f", bridged pairs over {self.pcie_link}"
        if self.gpus_per_uplink > 1:
            text += f", {self.gpus_per_uplink} GPUs per PCIe uplink"
        if self.inter_socket:
            text += f", across two sockets ({self.inter_socket})"
        if self.num_nodes > 1:
            nics = f", {self.nics_per_node} NICs per node" if self.nics_per_node else ""
            text += f", {self.num_nodes} nodes over {self.network}{nics}{self._net_words}"
        return text

    def replace(self, **changes) -> Fabric:
        """A copy with ``changes`` applied, validated again by :func:`make_fabric`.

        Parameters
        ----------
        **changes
            Fields of :class:`Fabric` (``num_nodes=2, network="ib_ndr"``, ``gpu="h200_sxm"``, ``name=...``).

        Returns
        -------
        Fabric

        Raises
        ------
        GpucommError
            An unknown field, or a combination :func:`make_fabric` refuses.
        """
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise GpucommError(f"unknown fabric field(s) {', '.join(unknown)}: expected fields of Fabric")
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)} | changes
        return make_fabric(values.pop("link"), **values)

    def one_node(self) -> Fabric:
        """The same GPUs and links inside one node: no network, no NIC count.

        Returns
        -------
        Fabric
            ``self`` with ``num_nodes=1``, ``network=None``, ``nics_per_node=None``, the default network transport
            and GPUDirect RDMA (already valid: no check).
        """
        return dataclasses.replace(self, num_nodes=1, network=None, nics_per_node=None, net_transport="rdma", gdr=True)


def make_fabric(link: str | Link, *, p2p: bool = True, topology: str = "switch", mesh_size: int = 8,
                num_nodes: int = 1, network: str | None = None, nics_per_node: int | None = None,
                gpus_per_uplink: int = 1, pcie_link: str = "pcie4", inter_socket: str | None = None,
                gpu: str | None = None, gpus_per_node: int | None = None, system: str | None = None,
                name: str = "", net_transport: str = "rdma", gdr: bool | None = None) -> Fabric:
    """Validate and build a :class:`Fabric` from a link and its options.

    Parameters
    ----------
    link : str or Link
        Each GPU's intra-node link: key of :data:`~gpucomm.model.hardware.links.LINKS` or an entry.
        With a ``gpu`` that is a bridged PCIe card, an NVLink key stands for that card's bridge
        (:func:`gpucomm.model.hardware.gpus.bridge_link`: the A40's 56.25 GB/s, not the A100 SXM4's 300).
    p2p : bool
        False: P2P disabled or unsupported, traffic staged through host memory (PCIe links only).
    topology : {"switch", "mesh", "pairs"}
        How the GPUs are wired (see :class:`Fabric`); ``mesh`` and ``pairs`` need an NVLink link.
    mesh_size : int
        GPUs wired in a ``mesh``, 2 to 1024 (checked only for ``mesh``).
    num_nodes : int
        Nodes, 1 to 100000.
    network : str, optional
        Scale-out NIC key of :data:`~gpucomm.model.hardware.network.NETWORKS`; required when
        ``num_nodes > 1``, refused for one node.
    nics_per_node : int, optional
        NICs per node (an NVLink domain: 72 in a GB200 NVL72 rack), 1 to 576 (default: one per GPU); refused for one node.
    gpus_per_uplink : int
        GPUs sharing one PCIe uplink to the host, 1 to 64; above 1 only with ``p2p=False``.
    pcie_link : str
        PCIe link key the ring crosses between bridged ``pairs`` (``pcie3`` ... ``pcie6``).
    inter_socket : str, optional
        Key of :data:`~gpucomm.model.hardware.pcie.INTER_SOCKET_LINKS` when the GPUs span two sockets;
        only with a PCIe link or ``pairs``.
    gpu : str, optional
        GPU catalog key; an NVLink link must be the GPU's own generation.
    gpus_per_node : int, optional
        GPUs per node (or NVLink domain), 1 to 100000.
    system : str, optional
        Catalog system key the fabric describes (set by :func:`system_fabric`).
    name : str
        Display name (see :attr:`Fabric.label`).
    net_transport : {"rdma", "socket"}
        NCCL's transport between nodes (:data:`NET_TRANSPORTS`); ``socket`` needs several nodes and a network whose
        entry is not a plugin (GPUDirect-TCPXO).
    gdr : bool, optional
        GPUDirect RDMA (several nodes only); default: on for ``rdma``, off for ``socket`` (refused on).

    Returns
    -------
    Fabric
        With ``link`` resolved to its catalog entry (or the GPU's bridge) and ``pcie_link``,
        ``inter_socket``, ``gpu``, ``system`` to their catalog keys.

    Raises
    ------
    GpucommError
        Unknown link, PCIe link, topology, network, inter-socket link, GPU or system; ``p2p`` not a
        bool; ``p2p=False`` on NVLink; a mesh or pairs on a non-NVLink link, or pairs with a non-PCIe
        ``pcie_link``; counts out of the ranges above; several nodes without a network, or a
        network or NIC count for one node; ``gpus_per_uplink > 1`` with P2P; an inter-socket link
        with NVLink outside ``pairs`` (its traffic does not cross the sockets); an NVLink generation
        the GPU does not have; a network transport other than ``rdma`` or ``gdr=False`` for one node, an unknown
        transport, sockets over a plugin network, or ``gdr=True`` with sockets.

    Examples
    --------
    >>> make_fabric("nvlink3", gpu="a40").link.bw_bytes_per_s / 1e9
    56.25
    >>> make_fabric("nvlink4", topology="mesh", mesh_size=8).label
    'NVLink 4.0 (H100/H200 SXM5, 18 links), P2P mesh of 8'
    """
    if gpu is not None:
        spec = get_gpu(gpu)
        gpu = spec.key
        _check_gpu_link(spec, link)
        if _is_generic_nvlink(get_link(link).key):
            # a GPU's NVLink is its own: a bridged card's bridge, the H800's 8 links, not the SXM flagship's
            link = gpu_nvlink_link(spec)
    link = get_link(link)
    if not isinstance(p2p, bool):
        raise GpucommError(f"p2p {p2p!r} is not valid: expected True or False")
    if not p2p and link.kind != "pcie":
        raise GpucommError(
            f"p2p=False (no P2P) with link {link.key!r}: without P2P, traffic leaves NVLink and is staged through host "
            "memory over PCIe; expected a PCIe link (pcie3, pcie4, pcie5, pcie6), the path the traffic takes")
    if topology not in TOPOLOGIES:
        raise GpucommError(f"unknown topology {topology!r}: expected one of {', '.join(TOPOLOGIES)}")
    if topology == "mesh":
        check_num_ranks(mesh_size, minimum=2, maximum=1024, what="mesh size")
        if link.kind != "nvlink":
            raise GpucommError(f"topology 'mesh' with link {link.key!r}: a point-to-point mesh wires NVLinks GPU to GPU; "
                               "expected an NVLink link (e.g. nvlink4), or --topology switch for PCIe")
    check_num_ranks(num_nodes, maximum=100_000, what="number of nodes")
    if num_nodes == 1 and (network is not None or nics_per_node is not None):
        given = ", ".join(f"{k} {v!r}" for k, v in (("network", network), ("NICs per node", nics_per_node)) if v is not None)
        raise GpucommError(f"{given} given for a single node: "
                           "expected num_nodes (--nodes) of 2 or more, or no network")
    if num_nodes > 1:
        if network is None:
            raise GpucommError(f"{num_nodes} nodes need a network: expected --network with one of the scale-out links")
        network = get_network(network).key
        if nics_per_node is not None:
            check_num_ranks(nics_per_node, maximum=max(NVLINK_DOMAIN_MAX_GPUS.values()), what="NICs per node")
    check_num_ranks(gpus_per_uplink, maximum=64, what="GPUs per uplink")
    if gpus_per_uplink > 1 and p2p:
        raise GpucommError(f"{gpus_per_uplink} GPUs per uplink only matters when traffic is staged through the host: "
                           "expected p2p=False (--no-p2p) or 1")
    if topology == "pairs" and get_link(pcie_link).kind != "pcie":
        raise GpucommError(f"pcie link {pcie_link!r} for bridged pairs: expected one of pcie3, pcie4, pcie5, pcie6")
    if topology == "pairs" and link.kind != "nvlink":
        raise GpucommError(f"topology 'pairs' with link {link.key!r}: pairs are GPUs joined by NVLink bridges; expected an "
                           "NVLink link (e.g. nvlink3) with --topology pairs, or --topology switch for plain PCIe")
    if topology == "pairs" and _is_generic_nvlink(link.key):
        # nvlink4 is the SXM5 part's 18 links (450 GB/s per direction); an H100 PCIe bridge has 12 (300), an A40's 4 x4
        gen = int(link.key[6:])
        raise GpucommError(f"topology 'pairs' with link {link.key!r} and no GPU: {link.key} is the SXM part's NVLink, not "
                           f"a bridge's; expected a bridged card (--gpu) of NVLink {gen}: "
                           f"{', '.join(bridged_gpus(gen)) or 'none in the catalog'}")
    if inter_socket is not None:
        inter_socket = get_inter_socket_link(inter_socket).key
        if link.kind != "pcie" and topology != "pairs":
            raise GpucommError(f"inter-socket link {inter_socket!r} with {link.key!r}: NVLink traffic does not cross the "
                               "sockets; expected a PCIe link, --topology pairs, or no inter-socket link")
    if gpus_per_node is not None:
        check_num_ranks(gpus_per_node, maximum=100_000, what="GPUs per node")
    if system is not None:
        system = get_system(system).key
    if not isinstance(name, str):
        raise GpucommError(f"fabric name {name!r} is not valid: expected a string")
    gdr = _check_net_transport(net_transport, gdr, num_nodes, network)
    return Fabric(link, p2p, topology, mesh_size, num_nodes, network, nics_per_node, gpus_per_uplink,
                  get_link(pcie_link).key, inter_socket, gpu, gpus_per_node, system, name, net_transport, gdr)


def _check_net_transport(net_transport: str, gdr: bool | None, num_nodes: int, network: str | None) -> bool:
    """Validate the transport between nodes and GPUDirect RDMA; return ``gdr`` with its default applied."""
    if net_transport not in NET_TRANSPORTS:
        raise GpucommError(f"network transport {net_transport!r} is not valid: expected one of {', '.join(NET_TRANSPORTS)}")
    if gdr is not None and not isinstance(gdr, bool):
        raise GpucommError(f"gdr {gdr!r} is not valid: expected True or False")
    if num_nodes == 1:
        if net_transport != "rdma" or gdr is False:
            given = f"network transport {net_transport!r}" if net_transport != "rdma" else "GPUDirect RDMA off"
            raise GpucommError(f"{given} given for a single node: expected num_nodes (--nodes) of 2 or more")
        return True
    if net_transport == "socket":
        if get_network(network).net_device != "host":
            raise GpucommError(f"network transport 'socket' over {network!r}: that network is NCCL net plugin's own "
                               "transport; expected an InfiniBand or Ethernet port (e.g. eth_100g) for TCP sockets")
        if gdr:
            raise GpucommError("GPUDirect RDMA with the socket transport: NCCL's sockets take host memory only "
                               "(net_socket.cc: ptrSupport = NCCL_PTR_HOST); expected gdr off, or the rdma transport")
        return False
    return True if gdr is None else gdr


def _is_generic_nvlink(key: str) -> bool:
    """``nvlink1`` ... ``nvlink5``: a generation's catalog link (the SXM part's), not one GPU's own."""
    return key.startswith("nvlink") and key[6:].isdigit()


def _check_gpu_link(spec, link: str | Link) -> None:
    """An NVLink catalog link must be the GPU's own generation (H100 SXM5 has NVLink 4, not 3)."""
    key = get_link(link).key
    if key.startswith("nvlink") and key[6:].isdigit() and spec.nvlink_gen is not None and int(key[6:]) != spec.nvlink_gen:
        raise GpucommError(f"link {key!r} with GPU {spec.key!r}, which has NVLink {spec.nvlink_gen}: expected "
                           f"link nvlink{spec.nvlink_gen} or a PCIe link")
    if key.startswith("nvlink") and spec.nvlink_gen is None:
        raise GpucommError(f"link {key!r} with GPU {spec.key!r}, which has no NVLink: expected a PCIe link")


def system_fabric(system: str | System, *, num_nodes: int = 1, network: str | None = None,
                  name: str | None = None, num_ranks: int | None = None) -> Fabric:
    """The :class:`Fabric` of a catalog system: its GPU, the link between its GPUs, its host's sockets, its nodes' NICs.

    Parameters
    ----------
    system : str or System
        Key of :data:`gpucomm.model.hardware.nvswitch.SYSTEMS` (or an alias such as ``hgx_h100``) of an
        NVSwitch system, a PCIe box or a box of NVLink-bridged pairs.
    num_nodes : int
        Systems (nodes) the GPUs span, >= 1.
    network : str, optional
        Scale-out port to use instead of the system's own NICs (then one NIC per GPU).
    name : str, optional
        Display name (default: the system's name).
    num_ranks : int, optional
        GPUs of the collective, all nodes together. Given, the GPUs of a node are taken in order (GPU 0
        first), which fills one socket before the other: when they fit under one socket (at most half of
        a two-socket system's GPUs), the fabric has no socket link. Default: the whole system.

    Returns
    -------
    Fabric
        ``gpu``, ``p2p``, ``inter_socket`` and ``gpus_per_node`` (the system's GPUs: its NVLink domain, 72 for
        an NVL72) from the catalog, and the link by fabric: NVSwitch, the GPU's own NVLink through a switch
        (:func:`~gpucomm.model.hardware.gpus.gpu_nvlink_link`: ``nvlink4`` for H100, 8 links for H800); PCIe,
        the GPU's PCIe generation, with P2P or staged through host memory as the stock driver does; bridged
        pairs, topology ``pairs``: the card's bridge for 2 GPUs, the GPU's PCIe generation between pairs
        (and the socket link where the pairs sit under two sockets) for more. Across nodes the system's NIC
        type and count, or ``network`` with one NIC per GPU.

    Raises
    ------
    GpucommError
        Unknown system; a cube-mesh (DGX-1: not every GPU pair has NVLink, which no topology here describes);
        a GPU without an NVLink or PCIe generation in the catalog; several nodes of a system without NICs and
        no ``network``.

    Examples
    --------
    >>> f = system_fabric("pcie_8x_rtx4090")
    >>> f.link.key, f.p2p, f.inter_socket, f.gpus_per_node
    ('pcie4', False, 'upi_skylake', 8)
    >>> f = system_fabric("pcie_8x_h100_bridged")
    >>> f.topology, f.link.bw_bytes_per_s / 1e9, f.pcie_link, f.inter_socket
    ('pairs', 300.0, 'pcie5', 'upi_sapphire_rapids')
    >>> system_fabric("hgx_h800").link.bw_bytes_per_s / 1e9
    200.0
    >>> system_fabric("pcie_8x_rtx4090", num_ranks=4).inter_socket is None  # GPUs 0-3: one socket
    True
    """
    sys_ = get_system(system)
    gpu = get_gpu(sys_.gpu_key)
    options = {}
    if sys_.fabric in ("nvswitch", "nvlink_mesh", "pcie+bridge"):
        if not gpu.nvlink_gen:
            raise GpucommError(f"system {sys_.key!r}: GPU {gpu.key!r} has no NVLink generation in the catalog")
        link = f"nvlink{gpu.nvlink_gen}"  # make_fabric turns it into the GPU's own NVLink (bridge, cut-down links)
    if sys_.fabric == "pcie+bridge" or sys_.fabric == "pcie":
        if not gpu.pcie_gen:
            raise GpucommError(f"system {sys_.key!r}: GPU {gpu.key!r} has no PCIe generation in the catalog")
        per_node = sys_.num_gpus if num_ranks is None else max(1, num_ranks // max(1, num_nodes))
        # GPUs 0..n-1 sit under the first socket while n is at most half of the box (nccl-tests#307: 4 + 4)
        options["inter_socket"] = sys_.inter_socket if per_node > sys_.num_gpus // 2 else None
    if sys_.fabric == "pcie":
        link = f"pcie{gpu.pcie_gen}"
    elif sys_.fabric == "pcie+bridge":
        options.update(topology="pairs", pcie_link=f"pcie{gpu.pcie_gen}")
    elif sys_.fabric == "nvlink_mesh":
        options.update(topology="mesh", mesh_size=sys_.num_gpus)  # every pair wired directly: the links split over peers
    elif sys_.fabric != "nvswitch":
        raise GpucommError(f"system {sys_.key!r} has fabric {sys_.fabric!r}: expected nvswitch, nvlink_mesh, pcie or "
                           "pcie+bridge (a cube-mesh is not all-to-all: some GPU pairs have no NVLink)")
    nics = None
    if num_nodes > 1 and network is None:
        if sys_.nic_key is None:
            raise GpucommError(f"{sys_.name} has no scale-out NICs in the catalog: expected a network for {num_nodes} nodes")
        network, nics = sys_.nic_key, sys_.num_nics
    return make_fabric(link, p2p=bool(sys_.p2p), num_nodes=num_nodes, network=network if num_nodes > 1 else None,
                       nics_per_node=nics, gpu=gpu.key, gpus_per_node=sys_.num_gpus, system=sys_.key,
                       name=sys_.name if name is None else name, **options)


def as_fabric(fabric: Fabric | str | Link) -> Fabric:
    """``fabric`` itself, or for a link key or entry ``make_fabric(link)``: that link through a switch, one node, P2P on.

    Parameters
    ----------
    fabric : Fabric, str or Link
        A fabric, or the shorthand of a plain link.

    Returns
    -------
    Fabric

    Raises
    ------
    GpucommError
        An unknown link key, or a value of another type.
    """
    if isinstance(fabric, Fabric):
        return fabric
    if isinstance(fabric, (str, Link)):
        return make_fabric(fabric)
    raise GpucommError(f"fabric {fabric!r} is not valid: expected a Fabric (make_fabric, system_fabric) or a link key")
