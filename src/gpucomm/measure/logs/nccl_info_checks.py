"""The checks of an ``NCCL_DEBUG=INFO`` log: each reads :class:`~gpucomm.measure.logs.nccl_info_records.NcclInfoLog`
and returns the :class:`~gpucomm.measure.logs.nccl_info_records.Finding` objects it supports, with the
evidence's lines, the usual fix and a public source. Thresholds are named constants with their reason.

This module uses the standard library only.
"""

from __future__ import annotations

from gpucomm.measure.logs.nccl_info_communicators import check_per_node_communicators
from gpucomm.measure.logs.nccl_info_lines import NVSWITCH_GPU_RE
from gpucomm.measure.logs.nccl_info_records import Finding, NcclInfoLog, finding_lines
from gpucomm.measure.logs.nccl_info_sources import ENV_DOCS, SRC_ACS
from gpucomm.measure.logs.nccl_info_torch import torch_findings
from gpucomm.measure.logs.nccl_info_warns import check_results, check_warns

__all__ = ["all_findings", "one_gpu_per_node"]


def _int_env(log: NcclInfoLog, name: str) -> int | None:
    try:
        return int(log.env[name])
    except (KeyError, ValueError):
        return None


def all_findings(log: NcclInfoLog) -> list[Finding]:
    """Every finding the checks make of ``log``, in the checks' order (the caller sorts by severity).

    Parameters
    ----------
    log : NcclInfoLog
        The facts :class:`~gpucomm.measure.logs.nccl_info_reader.InfoLineReader` read.

    Returns
    -------
    list of Finding
    """
    out: list[Finding] = []
    for check in (_check_versions, _check_networks_agree, check_per_node_communicators, check_warns, check_results,
                  torch_findings, _check_p2p, _check_gdr, _check_socket, _check_nvls, _check_cross_socket, _check_channels,
                  _check_forced):
        out.extend(check(log))
    return out


def _check_versions(log: NcclInfoLog) -> list[Finding]:
    if len(log.nccl_versions) < 2:
        return []
    seen = "; ".join(f"{v} on lines {', '.join(map(str, lines[:5]))}" for v, lines in log.nccl_versions.items())
    return [Finding(
        "version_mismatch", "error", "processes run different NCCL versions",
        f"NCCL version lines disagree: {seen}",
        finding_lines(n for lines in log.nccl_versions.values() for n in lines),
        "run the same NCCL on every node: check what each process loads (torch.cuda.nccl.version(), pip's "
        "nvidia-nccl-cu12 against a system libnccl.so, LD_LIBRARY_PATH, the container image)",
        "https://github.com/NVIDIA/nccl/issues/1267")]


def _check_networks_agree(log: NcclInfoLog) -> list[Finding]:
    if len(log.networks) < 2:
        return []
    seen = ", ".join(f"{name} ({len(lines)} lines)" for name, lines in log.networks.items())
    return [Finding(
        "mixed_networks", "error", "processes chose different networks",
        f"'Using network' differs between processes: {seen}; a connection between a Socket rank and an IB rank "
        "cannot work (e.g. 'socketFinalizeAccept: wrong type')",
        finding_lines(n for lines in log.networks.values() for n in lines),
        "give every node the same NICs, drivers and network plugin: rdma-core/libibverbs and /dev/infiniband in "
        "every container, the same libnccl-net.so (or none) everywhere, the same NCCL_IB_DISABLE/NCCL_NET settings",
        "https://github.com/NVIDIA/nccl-tests/issues/188")]



def _check_p2p(log: NcclInfoLog) -> list[Finding]:
    shm = [c for c in log.connections if c.transport == "SHM"]
    if not shm and one_gpu_per_node(log):  # P2P connects GPUs of one node: a P2P setting cannot matter here
        return []
    disabled_env = {k: v for k, v in log.env.items() if (k == "NCCL_P2P_DISABLE" and v == "1")
                    or (k == "NCCL_P2P_LEVEL" and v in ("0", "LOC"))}
    if not shm and not disabled_env and not log.p2p_disabled_pairs:
        return []
    parts = []
    if shm:
        parts.append(f"{len(shm)} connection line(s) go through host shared memory (via {shm[0].via}) instead of "
                     "GPU peer-to-peer")
    if disabled_env:
        parts.append("P2P disabled by the environment: " + ", ".join(f"{k}={v}" for k, v in disabled_env.items()))
    if log.p2p_disabled_pairs:
        parts.append(f"NCCL found P2P disabled between {len(log.p2p_disabled_pairs)} GPU pair(s)")
    geforce = sorted({g for g in log.gpus if "GeForce" in g})
    if geforce:
        parts.append(f"GPUs: {', '.join(geforce)} (GeForce cards usually have no PCIe P2P)")
    fix = ("unset NCCL_P2P_DISABLE / NCCL_P2P_LEVEL unless P2P is broken on this machine; " if disabled_env else "") + \
        ("check 'nvidia-smi topo -p2p r': PCIe ACS enabled on bare metal (disable it, or boot with iommu=pt), a VM "
         "without P2P, GPUs under different CPU sockets (NCCL_P2P_LEVEL=SYS lets NCCL try P2P there) or consumer "
         "GPUs without P2P; where P2P really is unavailable, SHM is the right choice")
    return [Finding("p2p_not_used", "warning", "GPUs of one node do not use peer-to-peer (P2P)", "; ".join(parts),
                    finding_lines([c.line for c in shm] + [log.env_lines[k] for k in disabled_env] + list(log.p2p_disabled_pairs)),
                    fix, SRC_ACS)]


def _check_gdr(log: NcclInfoLog) -> list[Finding]:
    ib = [c for c in log.connections if c.transport == "NET/IB"]
    without = [c for c in ib if not c.gdr]
    if not without and not log.gdr_disabled_lines:
        return []
    env = {k: v for k, v in log.env.items() if k in ("NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ", "NCCL_DMABUF_ENABLE")}
    evidence = []
    if without:
        evidence.append(f"{len(without)} of {len(ib)} InfiniBand/RoCE connection lines have no /GDRDMA (e.g. 'via "
                        f"{without[0].via}'): the NIC copies through host memory")
    if log.gdr_disabled_lines:
        evidence.append(f"'GPU Direct RDMA Disabled for HCA' on {len(log.gdr_disabled_lines)} line(s): NCCL found neither "
                        "a peer-memory module nor DMA-BUF support")
    if env:
        evidence.append("set in the environment: " + ", ".join(f"{k}={v}" for k, v in env.items()))
    return [Finding(
        "no_gdrdma", "warning", "no GPUDirect RDMA between GPU and NIC", "; ".join(evidence),
        finding_lines([c.line for c in without] + list(log.gdr_disabled_lines) + [log.env_lines[k] for k in env]),
        "load the nvidia-peermem kernel module (or use DMA-BUF: open GPU kernel modules, Linux >= 5.12), keep PCIe ACS "
        "off on bare metal, and check NCCL_NET_GDR_LEVEL when the NIC sits under another CPU socket than the GPU",
        "https://github.com/NVIDIA/nccl/issues/1412")]


def _check_socket(log: NcclInfoLog) -> list[Finding]:
    sockets = [c for c in log.connections if c.transport == "NET/Socket"]
    multi_node = (log.num_nodes or 0) > 1
    if not sockets and not ("Socket" in log.networks and multi_node):
        return []
    reasons = []
    if log.env.get("NCCL_IB_DISABLE") == "1":
        reasons.append("NCCL_IB_DISABLE=1 in the environment")
    if log.ib_missing_lines:
        reasons.append("'NET/IB : No device found'")
    if log.ibverbs_missing_lines:
        reasons.append("libibverbs could not be loaded")
    if log.plugins and not log.ib_devices:
        reasons.append(f"the network plugin ({', '.join(log.plugins)}) was loaded but found no RDMA device")
    evidence = (f"{len(sockets)} connection line(s) via NET/Socket" if sockets else
                f"'Using network Socket' with {log.num_nodes} nodes")
    if log.socket_interfaces:
        evidence += f" on {', '.join(log.socket_interfaces[:4])}"
    evidence += "; " + ("why: " + ", ".join(reasons) if reasons else "the log does not say why IB/RoCE was not used")
    return [Finding(
        "socket_network", "warning", "traffic between nodes goes over TCP sockets, not RDMA", evidence,
        finding_lines([c.line for c in sockets] + list(log.ib_missing_lines) + list(log.ibverbs_missing_lines)
               + ([log.env_lines["NCCL_IB_DISABLE"]] if "NCCL_IB_DISABLE" in log.env_lines else [])),
        "if the nodes have InfiniBand/RoCE NICs: unset NCCL_IB_DISABLE, install rdma-core (libibverbs) and expose "
        "/dev/infiniband to the container, check 'ibv_devinfo'; on TCP-only clusters set NCCL_SOCKET_IFNAME to the "
        "fastest interface and raise NCCL_SOCKET_NTHREADS / NCCL_NSOCKS_PERTHREAD",
        f"{ENV_DOCS}#nccl-ib-disable")]


def one_gpu_per_node(log: NcclInfoLog) -> bool:
    """Whether the log shows one GPU per node (then nothing between GPUs of a node can apply: NVLS, P2P, SHM).

    NCCL's ``localRanks 1`` says it; so does an nccl-tests device list with one device per host over two
    or more hosts, or ``nNodes`` equal to ``nRanks``.

    Parameters
    ----------
    log : NcclInfoLog

    Returns
    -------
    bool
    """
    if log.local_ranks is not None:
        return log.local_ranks == 1
    if log.num_nodes is not None and log.num_ranks is not None and log.num_ranks_exact:
        return log.num_nodes == log.num_ranks
    hosts = [d.host for d in log.test_devices]
    return len(set(hosts)) > 1 and len(hosts) == len(set(hosts))


def _check_nvls(log: NcclInfoLog) -> list[Finding]:
    if one_gpu_per_node(log):  # NVLS joins the GPUs of one node: with one GPU per node NCCL never uses it
        return []
    unavailable = [n for dev, ok, n in log.nvls_support if not ok]
    nvswitch_gpus = sorted({g for g in log.gpus if NVSWITCH_GPU_RE.search(g)})
    zero_channels = [c.line for c in log.channel_counts if c.nvls == 0]
    env_off = log.env.get("NCCL_NVLS_ENABLE") == "0"
    if env_off:
        return [Finding("nvls_unavailable", "info", "NVLS (NVLink SHARP) disabled by NCCL_NVLS_ENABLE=0",
                        "NCCL_NVLS_ENABLE=0 in the environment", finding_lines([log.env_lines["NCCL_NVLS_ENABLE"]]),
                        "remove NCCL_NVLS_ENABLE=0 on NVSwitch systems (H100/H200/B200 HGX) unless NVLS was disabled on "
                        "purpose (it uses more GPU memory)", f"{ENV_DOCS}#nccl-nvls-enable")]
    if not unavailable and not (zero_channels and nvswitch_gpus):
        return []
    evidence = []
    if unavailable:
        evidence.append(f"'NVLS multicast support is not available' on {len(unavailable)} line(s)")
    if zero_channels:
        evidence.append(f"0 nvls channels on {len(zero_channels)} line(s)")
    if nvswitch_gpus:
        evidence.append(f"GPUs: {', '.join(nvswitch_gpus)} (nodes with NVSwitch)")
    fix = ("on an NVSwitch system (HGX/DGX H100, H200, B200): start nvidia-fabricmanager with the driver's version, "
           "use a driver with multicast support (CUDA 12.1+), let the container see the NVSwitch/IMEX devices, and "
           "for multi-node NVLink configure IMEX; on PCIe or NVLink-bridged GPUs there is no NVLS and nothing to fix")
    return [Finding("nvls_unavailable", "warning" if nvswitch_gpus else "info",
                    "NVLS (NVLink SHARP) is not available", "; ".join(evidence), finding_lines(unavailable + zero_channels),
                    fix, "https://github.com/NVIDIA/nccl/issues/892")]


def _check_cross_socket(log: NcclInfoLog) -> list[Finding]:
    sys_graphs = [g for g in log.graphs if g.type_intra == "SYS"]
    if not sys_graphs and not log.sys_gpu_paths:
        return []
    evidence = []
    if sys_graphs:
        g = sys_graphs[0]
        evidence.append(f"the topology search found only SYS paths between GPUs (type {g.type_intra}/{g.type_inter}, "
                        f"{g.nchannels} channel(s) at {g.bw_intra_gbps:g} GB/s)")
    if log.sys_gpu_paths:
        evidence.append(f"{len(log.sys_gpu_paths)} GPU path line(s) of type SYS")
    return [Finding(
        "cross_socket", "warning", "GPUs talk through the CPU-socket link (SYS paths)", "; ".join(evidence),
        finding_lines([g.line for g in sys_graphs] + list(log.sys_gpu_paths)),
        "place the job's GPUs under one CPU socket (pick them from 'nvidia-smi topo -m' with CUDA_VISIBLE_DEVICES) "
        "or accept the socket link's bandwidth; NCCL_P2P_LEVEL=SYS allows P2P across sockets where the CPU "
        "supports it",
        f"{ENV_DOCS}#nccl-p2p-level")]


_CHANNEL_CAPS = ("NCCL_MAX_NCHANNELS", "NCCL_MAX_CTAS", "NCCL_MAX_NRINGS")
_FEW_CHANNELS = 4
"""A channel cap at or below this many channels is flagged: NVLink and multi-NIC systems use 8-32."""


def _check_channels(log: NcclInfoLog) -> list[Finding]:
    caps = {k: v for k in _CHANNEL_CAPS if (v := _int_env(log, k)) is not None and v <= _FEW_CHANNELS}
    if not caps:
        return []
    channels = log.coll_channels
    return [Finding(
        "few_channels", "warning", "the number of channels is capped by the environment",
        ", ".join(f"{k}={v}" for k, v in caps.items())
        + (f"; {channels} collective channel(s) built" if channels is not None else ""),
        finding_lines(log.env_lines[k] for k in caps),
        "remove the cap unless it is there to leave SMs to computation: one channel drives one ring over one link, "
        "so few channels cannot fill NVLink or several NICs",
        f"{ENV_DOCS}#nccl-max-ctas")]


def _check_forced(log: NcclInfoLog) -> list[Finding]:
    out = []
    if "NCCL_ALGO" in log.env:
        out.append(Finding(
            "forced_algorithm", "warning", "the algorithm is forced by NCCL_ALGO",
            f"NCCL_ALGO={log.env['NCCL_ALGO']}", finding_lines([log.env_lines["NCCL_ALGO"]]),
            "unset NCCL_ALGO outside experiments: NCCL's tuner picks the fastest algorithm per size and topology, "
            "and a forced one is usually slower at other sizes (an algorithm that cannot run is silently replaced)",
            f"{ENV_DOCS}#nccl-algo"))
    if "NCCL_PROTO" in log.env:
        out.append(Finding(
            "forced_protocol", "warning", "the protocol is forced by NCCL_PROTO",
            f"NCCL_PROTO={log.env['NCCL_PROTO']}", finding_lines([log.env_lines["NCCL_PROTO"]]),
            "unset NCCL_PROTO unless a plugin requires it (AWS EFA needs Simple): it is meant for debugging and "
            "workarounds; NCCL enables LL128 only where it is safe",
            "https://github.com/NVIDIA/nccl/issues/281"))
    return out

