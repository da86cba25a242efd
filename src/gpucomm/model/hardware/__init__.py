"""The hardware catalog: links, GPUs, PCIe, NVSwitch systems and networks, with a source for every number.

Use :func:`get_link` to look an entry up by key (``"nvlink3"``, ``"pcie4"``...), and
:data:`LINKS` to list them. The other tables work the same way: :func:`get_gpu` /
:data:`GPUS`, :func:`get_system` / :data:`SYSTEMS`, :func:`get_nvswitch` / :data:`NVSWITCHES`,
:func:`get_network` / :data:`NETWORKS`, :func:`get_pcie_gen` / :data:`PCIE_GENS` with
:func:`pcie_bw_bytes_per_s`, and :func:`get_host_hop` / :data:`HOST_HOPS`, :func:`get_inter_socket_link` /
:data:`INTER_SOCKET_LINKS`. Bandwidths are per
direction. Calibration factors (effective vs nominal bandwidth, protocol latencies) live in
:mod:`gpucomm.model.hardware.calibration`, each with its source.
"""

from gpucomm.model.hardware.gpus import GPU, GPUS, get_gpu
from gpucomm.model.hardware.links import LINKS, NVLINK_C2C, Link, get_link, link_keys
from gpucomm.model.hardware.network import NETWORKS, NetworkLink, get_network
from gpucomm.model.hardware.nvswitch import NVSWITCHES, SYSTEMS, NVSwitchGen, System, get_nvswitch, get_system
from gpucomm.model.hardware.pcie import (
                                   HOST_HOPS,
                                   INTER_SOCKET_LINKS,
                                   PCIE_GENS,
                                   InterSocketLink,
                                   PCIeGen,
                                   get_host_hop,
                                   get_inter_socket_link,
                                   get_pcie_gen,
                                   pcie_bw_bytes_per_s,
)

__all__ = [
    "LINKS", "NVLINK_C2C", "Link", "get_link", "link_keys",
    "GPU", "GPUS", "get_gpu",
    "NETWORKS", "NetworkLink", "get_network",
    "NVSWITCHES", "NVSwitchGen", "get_nvswitch", "SYSTEMS", "System", "get_system",
    "PCIE_GENS", "PCIeGen", "get_pcie_gen", "pcie_bw_bytes_per_s", "HOST_HOPS", "get_host_hop",
    "INTER_SOCKET_LINKS", "InterSocketLink", "get_inter_socket_link",
]
