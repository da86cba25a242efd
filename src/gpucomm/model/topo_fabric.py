"""A node's :class:`~gpucomm.model.fabric.Fabric` from what its tools print: ``nvidia-smi topo -m`` or NCCL's topology dump.

``gpucomm cost --topo FILE`` reads either text (:func:`topo_fabric` tells them apart: NCCL's dump is XML). Neither
names the GPU product, so the GPU's catalog key comes with it; the dump's compute capability is checked against it.

From ``nvidia-smi topo -m`` (:mod:`gpucomm.model.topology_text`): the GPUs of the node, each pair's path and the
NICs. Every pair ``NV#`` with one count: NVLink through a switch, or a direct mesh where each pair has only its share
of the GPU's links (four GH200: ``NV6`` of 18); ``NV#`` pairs among PCIe paths on a bridged card: NVLink-bridged
pairs; otherwise PCIe. P2P is what NCCL does by default on those paths: its P2P transport up to ``PXB``, host memory
beyond (``p2pLevel = PATH_PXB``, ``src/graph/paths.cc`` at NCCL v2.30.7-1; :data:`TopoCode.nccl_p2p_by_default
<gpucomm.model.topology_text.TopoCode>`), and never on a card whose stock driver has none (``GPU.pcie_p2p``).
``SYS``/``SOC`` pairs put the GPUs under two sockets, whose link the caller names (``--inter-socket``).

From NCCL's dump (``NCCL_TOPO_DUMP_FILE``, the XML of ``src/graph/xml.cc``): ``<gpu sm=...>`` per GPU, its
``<nvlink target=... count=...>`` (a target of class ``0x068000`` is an NVSwitch), the PCIe ``link_speed`` above
it, the ``<cpu>`` sockets and the ``<net speed=... gdr=...>`` NICs (speed in Mb/s, GPUDirect RDMA support).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from gpucomm import GpucommError
from gpucomm.model.fabric import Fabric, make_fabric
from gpucomm.model.hardware import GPU, INTER_SOCKET_LINKS, get_gpu
from gpucomm.model.topology_text import describe_cell, parse_topo_matrix

__all__ = ["NVSWITCH_PCI_CLASS", "PCIE_GEN_BY_GTS", "topo_fabric", "matrix_fabric", "nccl_xml_fabric"]

NVSWITCH_PCI_CLASS = "0x068000"
"""PCI class NCCL's dump gives an NVSwitch as an ``<nvlink>`` target (``src/graph/xml.cc``, ``"0x068000"``)."""

PCIE_GEN_BY_GTS = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}
"""PCIe generation by the transfer rate per lane that NCCL's dump copies from sysfs (``link_speed="16.0 GT/s PCIe"``):
PCI-SIG's rates, as :mod:`gpucomm.model.hardware.pcie` lists them."""


def topo_fabric(text: str, gpu: str | GPU, *, inter_socket: str | None = None, **network) -> Fabric:
    """The fabric of one node from ``nvidia-smi topo -m`` output or NCCL's XML topology dump.

    Parameters
    ----------
    text : str
        The file's text: XML (starts with ``<``) is read as NCCL's dump (:func:`nccl_xml_fabric`), anything else as
        ``nvidia-smi topo -m`` (:func:`matrix_fabric`), lines starting with ``#`` left out.
    gpu : str or GPU
        Catalog key of the node's GPUs (neither text names the product).
    inter_socket : str, optional
        Key of :data:`~gpucomm.model.hardware.INTER_SOCKET_LINKS` for GPUs under two sockets.
    **network
        ``num_nodes``, ``network``, ``nics_per_node``, ``net_transport``, ``gdr``: passed to
        :func:`~gpucomm.model.fabric.make_fabric`; ``nics_per_node`` defaults to the NICs the text lists.

    Returns
    -------
    Fabric
        With ``gpus_per_node`` the GPUs the text lists.

    Raises
    ------
    GpucommError
        A text that is neither, or one the readers refuse (see theirs).
    """
    if not isinstance(text, str):
        raise GpucommError(f"topology text must be a string, got {type(text).__name__}")
    if text.lstrip().startswith("<"):
        return nccl_xml_fabric(text, gpu, inter_socket=inter_socket, **network)
    # comment lines (``# source: ...``, as the bundled examples have) are not part of what nvidia-smi prints
    matrix = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return matrix_fabric(matrix, gpu, inter_socket=inter_socket, **network)


def matrix_fabric(text: str, gpu: str | GPU, *, inter_socket: str | None = None, **network) -> Fabric:
    """The fabric of the node ``nvidia-smi topo -m`` printed (module docstring for the rules).

    Parameters
    ----------
    text : str
        The command's output (:func:`~gpucomm.model.topology_text.parse_topo_matrix`).
    gpu : str or GPU
        Catalog key of the node's GPUs.
    inter_socket : str, optional
        The socket link, needed (and only accepted) when some GPU pair is ``SYS``/``SOC``.
    **network
        As :func:`topo_fabric`.

    Returns
    -------
    Fabric

    Raises
    ------
    GpucommError
        A matrix the parser refuses; no GPU row; NVLink on a GPU without it; a mixed NVLink topology (DGX-1's
        cube-mesh: some pairs have no NVLink) on a card that is not bridged; GPUs across sockets without
        ``inter_socket``, or ``inter_socket`` with GPUs under one socket.

    Examples
    --------
    >>> text = '''
    ...         GPU0    GPU1    GPU2    GPU3    NIC0
    ... GPU0     X      NV6     NV6     NV6     PIX
    ... GPU1    NV6      X      NV6     NV6     SYS
    ... GPU2    NV6     NV6      X      NV6     SYS
    ... GPU3    NV6     NV6     NV6      X      SYS
    ... NIC0    PIX     SYS     SYS     SYS      X
    ... '''
    >>> f = matrix_fabric(text, "gh200")
    >>> f.topology, f.mesh_size, f.gpus_per_node, f.link.bw_bytes_per_s / 1e9
    ('mesh', 4, 4, 450.0)
    """
    spec = get_gpu(gpu)
    matrix = parse_topo_matrix(text)
    gpus = matrix.gpus
    if not gpus:
        raise GpucommError(f"no GPU row in the topology (devices {', '.join(matrix.devices)}): expected rows GPU0, GPU1, ...")
    nics = len(matrix.devices) - len(gpus)
    cells = {cell: describe_cell(cell) for cell in matrix.gpu_pairs()}
    nv_counts = {links for code, links in cells.values() if code.code == "NV#"}
    others = {code for code, _ in cells.values() if code.code != "NV#"}
    options: dict = {}
    if nv_counts and not spec.nvlink_gen:
        raise GpucommError(f"the topology shows NVLink (NV{min(nv_counts)}) but {spec.key} has none: expected the GPU "
                           "the topology was printed on (--gpu)")
    if nv_counts and others and not spec.nvlink_bridge:
        raise GpucommError(f"a mixed NVLink topology ({', '.join(sorted(cells))}): some GPU pairs have no NVLink (a "
                           "cube-mesh), which no fabric here describes; expected NVLink between every pair, or bridged cards")
    across = any(code.code in ("SYS", "SOC") for code in others)
    _check_sockets(across, inter_socket, others)
    if nv_counts and not others:
        links = next(iter(nv_counts)) if len(nv_counts) == 1 else None
        if links is None:
            raise GpucommError(f"GPU pairs with different NVLink counts ({', '.join(sorted(cells))}): expected one count")
        link = f"nvlink{spec.nvlink_gen}"
        n = len(gpus)
        if spec.nvlink_links and n > 2 and links * (n - 1) <= spec.nvlink_links < links * n:
            # each GPU's links split over its n-1 peers, with no switch between them (four GH200: NV6 of 18)
            options.update(topology="mesh", mesh_size=n)
    elif len(gpus) == 1 and spec.nvlink_gen:
        link = f"nvlink{spec.nvlink_gen}"  # one GPU per node: no GPU-to-GPU path inside it
    else:
        pcie_gen = spec.pcie_gen
        if not pcie_gen:
            raise GpucommError(f"the catalog has no PCIe generation for {spec.name}: expected a GPU with one (--gpu)")
        p2p = spec.pcie_p2p is not False and all(code.nccl_p2p_by_default for code in others)
        if nv_counts:
            link = f"nvlink{spec.nvlink_gen}"
            # P2P between the pairs is not a fabric option: the bridges are P2P, the PCIe hops between pairs follow it
            options.update(topology="pairs", pcie_link=f"pcie{pcie_gen}")
        else:
            link = f"pcie{pcie_gen}"
            options.update(p2p=p2p)
        options["inter_socket"] = inter_socket
    return _build(link, spec, len(gpus), nics, options, network, "nvidia-smi topo -m")


def nccl_xml_fabric(text: str, gpu: str | GPU, *, inter_socket: str | None = None, **network) -> Fabric:
    """The fabric of the node NCCL's topology dump (``NCCL_TOPO_DUMP_FILE``) describes.

    Parameters
    ----------
    text : str
        The XML NCCL wrote (``<system version=...>``, ``<cpu>``, ``<pci>``, ``<gpu>``, ``<nvlink>``, ``<nic>``/``<net>``).
    gpu : str or GPU
        Catalog key of the node's GPUs; its compute capability must be the dump's ``sm``.
    inter_socket : str, optional
        The socket link, needed (and only accepted) when the GPUs hang under more than one ``<cpu>``.
    **network
        As :func:`topo_fabric`; without ``gdr`` it is off when a NIC of the dump says ``gdr="0"``.

    Returns
    -------
    Fabric
        NVLink through a switch where the GPUs' ``<nvlink>`` targets are NVSwitches, a mesh where each GPU links to
        every other directly, bridged pairs for a bridged card, else PCIe at the dump's ``link_speed`` (P2P as the
        catalog's GPU has it).

    Raises
    ------
    GpucommError
        XML that does not parse or has no ``<gpu>``; an ``sm`` other than the GPU's compute capability; NVLink on a
        GPU without it; mixed NVLink counts; GPUs under several CPUs without ``inter_socket`` (or one without).

    Examples
    --------
    >>> dump = '''<system version="2">
    ...   <cpu numaid="0" arch="x86_64" vendor="GenuineIntel">
    ...     <pci busid="0000:17:00.0" link_speed="32.0 GT/s PCIe" link_width="16">
    ...       <gpu dev="0" sm="90" rank="0" gdr="1"><nvlink target="0000:a1:00.0" count="18" tclass="0x068000"/></gpu>
    ...     </pci>
    ...     <pci busid="0000:27:00.0" link_speed="32.0 GT/s PCIe" link_width="16">
    ...       <gpu dev="1" sm="90" rank="1" gdr="1"><nvlink target="0000:a1:00.0" count="18" tclass="0x068000"/></gpu>
    ...     </pci>
    ...     <nic><net name="mlx5_0" dev="0" speed="400000" gdr="1"/></nic>
    ...   </cpu>
    ... </system>'''
    >>> f = nccl_xml_fabric(dump, "h100_sxm5")
    >>> f.link.key, f.topology, f.gpus_per_node
    ('nvlink4', 'switch', 2)
    """
    spec = get_gpu(gpu)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise GpucommError(f"NCCL topology dump: not well-formed XML ({exc}): expected the file NCCL_TOPO_DUMP_FILE wrote") from None
    gpus = list(root.iter("gpu"))
    if not gpus:
        raise GpucommError("NCCL topology dump: no <gpu> element: expected the file NCCL_TOPO_DUMP_FILE wrote on a GPU node")
    sms = {g.get("sm") for g in gpus}
    if sms != {str(spec.compute_capability)}:
        raise GpucommError(f"NCCL topology dump: sm {', '.join(sorted(s or '?' for s in sms))} but --gpu {spec.key} has "
                           f"compute capability {spec.compute_capability}: expected the GPU the dump was written on")
    parents = {child: parent for parent in root.iter() for child in parent}
    cpus = {_ancestor(g, parents, "cpu") for g in gpus} - {None}
    _check_sockets(len(cpus) > 1, inter_socket, ())
    nvlinks = [(g, [(lk.get("target"), lk.get("tclass"), int(lk.get("count", "0"))) for lk in g.iter("nvlink")])
               for g in gpus]
    counts = {sum(c for _, _, c in links) for _, links in nvlinks}
    options: dict = {}
    if any(links for _, links in nvlinks):
        if not spec.nvlink_gen:
            raise GpucommError(f"NCCL topology dump: NVLink on {spec.key}, which has none: expected the dump's GPU")
        if len(counts) > 1:
            raise GpucommError(f"NCCL topology dump: GPUs with different NVLink counts ({sorted(counts)}): expected one")
        link = f"nvlink{spec.nvlink_gen}"
        to_switch = all(t == NVSWITCH_PCI_CLASS for _, links in nvlinks for _, t, _ in links)
        peers = {len(links) for _, links in nvlinks}
        if spec.nvlink_bridge and len(gpus) > 2:
            options.update(topology="pairs", pcie_link=f"pcie{_pcie_gen(gpus, parents, spec)}",
                           inter_socket=inter_socket)
        elif not to_switch and peers == {len(gpus) - 1} and len(gpus) > 2:
            options.update(topology="mesh", mesh_size=len(gpus))
    else:
        link = f"pcie{_pcie_gen(gpus, parents, spec)}"
        options.update(p2p=spec.pcie_p2p is not False, inter_socket=inter_socket)
    nets = list(root.iter("net"))
    if "gdr" not in network and nets and any(n.get("gdr") == "0" for n in nets) and network.get("num_nodes", 1) > 1 \
            and network.get("net_transport", "rdma") == "rdma":
        network = {**network, "gdr": False}  # NCCL found no GPUDirect RDMA on this NIC (ncclTopoCheckGdr)
    return _build(link, spec, len(gpus), len(nets), options, network, "NCCL topology dump")


def _ancestor(node, parents: dict, tag: str):
    while node is not None and node.tag != tag:
        node = parents.get(node)
    return node


def _pcie_gen(gpus: list, parents: dict, spec: GPU) -> int:
    """The PCIe generation of the slowest ``link_speed`` above the GPUs, else the catalog's."""
    gens = set()
    for g in gpus:
        pci = parents.get(g)
        speed = pci.get("link_speed", "") if pci is not None else ""
        try:
            gts = float(speed.split()[0])
        except (IndexError, ValueError):
            continue
        if gts in PCIE_GEN_BY_GTS:
            gens.add(PCIE_GEN_BY_GTS[gts])
    gen = min(gens) if gens else spec.pcie_gen
    if not gen:
        raise GpucommError(f"NCCL topology dump: no PCIe link_speed above the GPUs and no PCIe generation for {spec.key} "
                           "in the catalog: expected a dump with link_speed attributes")
    return gen


def _check_sockets(across: bool, inter_socket: str | None, codes) -> None:
    if across and inter_socket is None:
        raise GpucommError("GPUs under two sockets (SYS): the socket link decides the ring's pace; expected "
                           f"--inter-socket with one of {', '.join(INTER_SOCKET_LINKS)}")
    if not across and inter_socket is not None:
        raise GpucommError(f"--inter-socket {inter_socket} with GPUs under one socket (no SYS pair in the topology): "
                           "expected no --inter-socket")


def _build(link: str, spec: GPU, num_gpus: int, nics: int, options: dict, network: dict, what: str) -> Fabric:
    if network.get("num_nodes", 1) > 1 and network.get("nics_per_node") is None and nics:
        network = {**network, "nics_per_node": nics}  # the NICs the node lists
    return make_fabric(link, gpu=spec.key, gpus_per_node=num_gpus, name=f"{num_gpus} x {spec.name} ({what})",
                       **options, **network)
