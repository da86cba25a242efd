"""Findings from NCCL's ``WARN`` lines and from NCCL result strings the application printed.

A ``WARN`` line is matched against :data:`WARN_RULES` (first match wins; one finding per rule, with every
line it matched); a result string (``unhandled system error``...) becomes one finding per string.
This module uses the standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpucomm.measure.logs.nccl_info_lines import IBVERBS_MISSING_RE
from gpucomm.measure.logs.nccl_info_records import Finding, NcclInfoLog, WarnLine, finding_lines
from gpucomm.measure.logs.nccl_info_sources import DOCS, SRC_ACS, SRC_ERRORS, SRC_NETWORK

__all__ = ["WARN_RULES", "check_warns", "check_results"]


@dataclass(frozen=True)
class _WarnRule:
    code: str
    pattern: re.Pattern
    severity: str
    title: str
    fix: str
    source: str


_IB_STATUS = {"4": "local protection error: the NIC could not access the buffer (memory registration; "
                   "GPUDirect RDMA modules or ACS)",
              "5": "work request flushed: an earlier error broke the connection",
              "12": "transport retry counter exceeded: the peer did not answer (link down, wrong GID/route, "
                    "peer process gone)",
              "13": "RNR retry counter exceeded: the peer was not ready to receive"}
"""``ibv_wc_status`` numbers (``enum ibv_wc_status`` in rdma-core's ``verbs.h``) NCCL prints in completion errors."""

_IB_STATUS_FIX = {"4": "a local protection error is usually GPUDirect RDMA failing on this host, not the fabric: check that "
                       "PCIe ACS is off on the switches between GPU and NIC (NCCL's own hint for status 4, "
                       "printIbWcStatusHint in net_ib/common.h at v2.30.7-1) and that nvidia-peermem or DMA-BUF is "
                       "available; NCCL_NET_GDR_LEVEL=LOC (GPUDirect RDMA off) confirms it if the error goes away"}
"""Per ``ibv_wc_status`` number, what to try first, where it differs from the rule's fix (which tests the fabric)."""

WARN_RULES = (
    _WarnRule("warn_ib_completion", re.compile(r"NET/IB\w* ?: ?(?:\w+: )?Got (?:completion|CQE with error)"), "error",
              "an InfiniBand/RoCE transfer failed (completion with error)",
              "test the fabric between the nodes named in the lines (ibstat, ibv_devinfo, ib_write_bw); on RoCE set "
              "NCCL_IB_GID_INDEX to the RoCE v2 GID (show_gids); check cables/ports and NCCL_IB_TIMEOUT; a peer "
              "that died first also shows up here, so look at the earliest error across ranks",
              "https://github.com/NVIDIA/nccl/issues/1664"),
    _WarnRule("warn_shared_memory", re.compile(r"shared memory segment|/dev/shm|shm_open|posix_fallocate|ShmOpen"),
              "error", "NCCL cannot create its shared-memory buffers in /dev/shm",
              "give the container more /dev/shm (docker run --shm-size=1g, or --ipc=host; Kubernetes: an emptyDir with "
              "medium Memory on /dev/shm) and make it writable; NCCL_SHM_DISABLE=1 avoids it at a cost in speed",
              "https://github.com/NVIDIA/nccl/issues/342"),
    _WarnRule("warn_cuda_ipc", re.compile(r"CUDA IPC|cudaIpc|peer access is not supported|P2P is disabled between NVLINK"),
              "error", "GPUs of one node cannot map each other's memory (P2P/IPC failed)",
              "check P2P with 'nvidia-smi topo -p2p r': disable PCIe ACS (or set iommu=pt) on bare metal, give a VM or "
              "container all GPUs with P2P allowed; on GPUs without P2P support set NCCL_P2P_DISABLE=1 so NCCL "
              "uses shared memory",
              SRC_ACS),
    _WarnRule("warn_cuda_failure", re.compile(r"Cuda failure|CUDA failure|cuda failure"), "error",
              "a CUDA call inside NCCL failed",
              "read the CUDA error in the line: 'out of memory' (free GPU memory, smaller NCCL_BUFFSIZE), 'CUDA driver "
              "is a stub library' or version errors (driver older than the CUDA NCCL was built for), other errors "
              "(GPU fault: dmesg for Xid errors, nvidia-smi)",
              SRC_ERRORS),
    _WarnRule("warn_address_family", re.compile(r"connecting to address.{0,80}? with family \d+ is neither"), "error",
              "a peer's connection address cannot be read (corrupt or incompatible handle)",
              "make sure every node runs the same NCCL version (this error was traced to one node with a different "
              "NCCL wheel) and the same network plugin",
              "https://github.com/NVIDIA/nccl/issues/1267"),
    _WarnRule("warn_socket", re.compile(r"socket|Socket|Connection (?:refused|reset|closed)|Call to connect|"
                                        r"Net : |wrong type|remote peer"), "error",
              "a TCP connection between ranks failed",
              "look for the rank that failed first (a crash closes its sockets); pick a routable interface with "
              "NCCL_SOCKET_IFNAME (the same on every node), open the ports in firewalls; 'wrong type' means the two "
              "sides use different networks or NCCL versions",
              f"{DOCS}/troubleshooting.html#ip-network-interfaces"),
    _WarnRule("warn_ib_setup", re.compile(r"ibv_\w+ failed|Unable to open device|ibv_reg_mr|ibv_modify_qp"), "error",
              "an InfiniBand/RoCE setup call failed",
              "ibv_reg_mr: raise the locked-memory limit (ulimit -l unlimited) and load nvidia-peermem for GPU buffers; "
              "ibv_modify_qp: on RoCE check NCCL_IB_GID_INDEX and that the nodes can reach each other; 'Unable to open "
              "device': pass the device into the container or exclude it with NCCL_IB_HCA",
              SRC_NETWORK),
    _WarnRule("warn_timeout", re.compile(r"[Tt]ime ?out|timed out"), "error", "NCCL gave up waiting (timeout)",
              "a peer is stuck or gone: find the first rank that failed or hung; for a slow network raise "
              "NCCL_IB_TIMEOUT",
              SRC_NETWORK),
    _WarnRule("warn_libibverbs", IBVERBS_MISSING_RE, "warning", "libibverbs is missing: NCCL cannot use InfiniBand/RoCE",
              "install rdma-core (libibverbs) in the image and expose /dev/infiniband, or ignore this where the nodes "
              "have no RDMA NIC",
              SRC_NETWORK),
    _WarnRule("warn_mismatch", re.compile(r"[Mm]ismatch"), "error", "ranks disagree about a collective",
              "every rank must call the same collectives in the same order with the same sizes; a different NCCL "
              "version on one node gives the same message",
              "https://github.com/NVIDIA/nccl/issues/296"),
)
_GENERIC_WARN = _WarnRule("warn_other", re.compile(""), "warning", "NCCL printed a warning",
                          "read the first WARN in time: NCCL prints the failing call and its error there",
                          SRC_ERRORS)


def check_warns(log: NcclInfoLog) -> list[Finding]:
    groups: dict[str, list[WarnLine]] = {}
    for w in log.warnings:
        rule = next((r for r in WARN_RULES if r.pattern.search(w.message)), _GENERIC_WARN)
        groups.setdefault(rule.code, []).append(w)
    rules = {r.code: r for r in (*WARN_RULES, _GENERIC_WARN)}
    out = []
    for code, warns in groups.items():
        rule = rules[code]
        first = warns[0]
        evidence = f"{len(warns)} WARN line{'s' if len(warns) > 1 else ''}, first: {first.message!r}"
        fix = rule.fix
        if code == "warn_ib_completion":
            # "error 12" (2.8 and older), "status=12" (until 2.28), "status=IBV_WC_RETRY_EXC_ERR(12)" (the status's
            # name, then its number: net_ib/p2p.cc from v2.29.2-1 to v2.30.7-1). From 2.29.7 a "Got CQE with error
            # (devIndex=...)" line, without the status, comes first; the status is read from the first line that has it.
            found = (re.search(r"status=(?:[^(\s][^(]*\()?(\d+)|error (\d+)", w.message) for w in warns)
            status = next((m.group(1) or m.group(2) for m in found if m), None)
            if status in _IB_STATUS:
                evidence += f" (status {status}: {_IB_STATUS[status]})"
            fix = f"{_IB_STATUS_FIX[status]}; then {rule.fix}" if status in _IB_STATUS_FIX else rule.fix
        hosts = sorted({w.host for w in warns if w.host})
        if len(hosts) > 1:
            evidence += f"; on {len(hosts)} hosts ({', '.join(hosts[:6])}{'...' if len(hosts) > 6 else ''})"
        out.append(Finding(code, rule.severity, rule.title, evidence, finding_lines(w.line for w in warns), fix,
                           rule.source))
    return out


_RESULTS = {
    "unhandled system error": ("nccl_error_system", "a system or library call failed (sockets, shared memory, "
                               "InfiniBand verbs)"),
    "unhandled cuda error": ("nccl_error_cuda", "a CUDA call failed"),
    "internal error": ("nccl_error_internal", "NCCL hit an inconsistent state (often after an earlier failure, or "
                       "with peers that do not match)"),
    "invalid usage": ("nccl_error_usage", "the application used NCCL wrongly (e.g. two ranks on one GPU)"),
    "remote process exited or there was a network error": ("nccl_error_remote", "a peer died or the network failed"),
}
"""NCCL result strings (``ncclGetErrorString``) -> (finding code, meaning per NCCL's troubleshooting guide)."""


def check_results(log: NcclInfoLog) -> list[Finding]:
    out = []
    for result in dict.fromkeys(r for r, _ in log.results):
        code, meaning = _RESULTS[result]
        lines = [n for r, n in log.results if r == result]
        hint = (" The WARN lines say which call failed." if log.warnings else
                " The log has no WARN line: rerun with NCCL_DEBUG=WARN (or INFO) on every rank to see which call failed.")
        out.append(Finding(
            code, "error", f"NCCL returned '{result}'", f"'{result}' on {len(lines)} line(s): {meaning}.{hint}",
            finding_lines(lines), "fix the call NCCL names in its WARN line (see the other findings); NCCL's troubleshooting "
            "guide lists the error classes", SRC_ERRORS))
    return out

