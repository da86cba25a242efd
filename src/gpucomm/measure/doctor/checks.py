"""The checks of the node itself: inventory, topology, PCIe links, NVLink, NVLS, P2P, IOMMU, ACS, GPUDirect RDMA.

Each check is a pure function of what :mod:`gpucomm.measure.doctor.probe` read (plain dicts, a parsed
topology, a parsed NCCL log) that returns one :class:`~gpucomm.measure.doctor.report.Check`. Every
pathology names its fix and a public source (the ``SRC_*`` pages below); the codes a check compares
against are NVML's and ``nvidia-smi``'s own, named here with their header.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from gpucomm.measure.copy_bandwidth import catalog_gpu_key
from gpucomm.measure.doctor.probe import SRC_NVML
from gpucomm.measure.doctor.report import Check, skip
from gpucomm.measure.logs.nccl_info import NcclInfoLog
from gpucomm.measure.topology import TopoMatrix, describe_cell

__all__ = ["check_inventory", "check_topology", "check_pcie_links", "check_nvlink", "check_nvls", "check_p2p",
           "check_iommu", "check_acs", "check_gdr", "parse_acs", "SRC_ACS", "SRC_FABRIC_MANAGER", "SRC_PEERMEM",
           "SRC_TOPO"]

# Public pages cited by the fixes (NCCL's documentation of the release the log reader follows, and issue threads).
_NCCL_DOCS = "https://docs.nvidia.com/deeplearning/nccl/archives/nccl_2262/user-guide/docs"
SRC_ACS = f"{_NCCL_DOCS}/troubleshooting.html#pci-access-control-services-acs"
SRC_FABRIC_MANAGER = "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html"
SRC_PEERMEM = "https://docs.nvidia.com/cuda/gpudirect-rdma/index.html"
SRC_TOPO = "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/paths.cc"


def check_inventory(torch_info: dict | None, nvml: dict | None, *, cpu: str, host: str,
                    torch_reason: str = "", nvml_reason: str = "") -> Check:
    """What this node has: GPUs, driver, CUDA, NCCL and torch versions.

    ``pathology`` where NVML sees GPUs but torch sees none (a CPU build of torch, or a driver older
    than torch's CUDA needs); otherwise ``ok``.

    Parameters
    ----------
    torch_info : dict or None
        :meth:`SystemProbe.torch_info`, or None without torch (``torch_reason`` says why).
    nvml : dict or None
        :meth:`NvmlReader.snapshot`, or None without NVML (``nvml_reason``).
    cpu, host : str
        The CPU's model name and the host name.
    """
    torch_gpus = (torch_info or {}).get("cuda_gpus") or []
    nvml_gpus = [g["name"] for g in (nvml or {}).get("gpus", [])]
    names = torch_gpus or nvml_gpus
    counted = Counter(names)
    gpus = ", ".join(f"{k} x {v}" for k, v in counted.items()) if names else "no CUDA GPU"
    parts = [gpus]
    if nvml:
        parts.append(f"driver {nvml.get('driver_version') or '?'} (CUDA {nvml.get('cuda_driver_version') or '?'})")
    if torch_info:
        parts.append(f"torch {torch_info['torch_version']}"
                     + (f" built for CUDA {torch_info['torch_cuda']}" if torch_info.get("torch_cuda") else " (CPU build)"))
        if torch_info.get("nccl_version"):
            parts.append(f"NCCL {torch_info['nccl_version']}")
    parts.append(f"CPU {cpu}")
    data = {"host": host, "cpu": cpu, "gpus": names, "torch": torch_info, "torch_reason": torch_reason,
            "driver_version": (nvml or {}).get("driver_version"), "cuda_driver_version": (nvml or {}).get("cuda_driver_version"),
            "nvml_reason": nvml_reason, "catalog_gpus": sorted({k for n in names if (k := catalog_gpu_key(n))})}
    measured = "; ".join(parts)
    if nvml_gpus and torch_info is not None and not torch_gpus:
        return Check("inventory", "GPUs and software versions", "pathology", measured,
                     f"torch sees the {len(nvml_gpus)} GPU(s) NVML lists",
                     "install a CUDA build of torch whose CUDA version the driver supports (pip install torch from "
                     "the CUDA index; nvidia-smi shows the newest CUDA the driver runs), and check CUDA_VISIBLE_DEVICES",
                     "https://pytorch.org/get-started/locally/", data)
    return Check("inventory", "GPUs and software versions", "ok", measured,
                 "" if names else "nothing to compare: a CPU-only node", data=data)


def check_topology(matrix: TopoMatrix | None, text: str | None = None, *, reason: str = "") -> Check:
    """``nvidia-smi topo -m`` parsed: how GPU pairs connect; ``pathology`` when GPU pairs cross CPU sockets.

    A ``SYS`` (or old ``SOC``) path between two GPUs goes through the link between CPU sockets
    (UPI, Infinity Fabric): slower than PCIe, and NCCL does not use P2P there by default
    (``p2pLevel = PATH_PXB``, :data:`SRC_TOPO`).
    """
    title = "GPU topology (nvidia-smi topo -m)"
    if matrix is None:
        return skip("topology", title, reason or "nvidia-smi not found: no topology")
    pairs = matrix.gpu_pairs()
    summary = ", ".join(f"{code} x {len(p)}" for code, p in sorted(pairs.items(), key=lambda kv: describe_cell(kv[0])[0].rank))
    data = {"gpus": list(matrix.gpus), "pairs": {k: [list(p) for p in v] for k, v in pairs.items()}}
    measured = f"{len(matrix.gpus)} GPU(s); GPU pairs: {summary or 'none (one GPU)'}"
    far = [(code, p) for code, ps in pairs.items() for p in ps if describe_cell(code)[0].code in ("SYS", "SOC")]
    if far:
        shown = ", ".join(f"{a}-{b}" for _, (a, b) in far[:6]) + (f" (+{len(far) - 6} more)" if len(far) > 6 else "")
        return Check("topology", title, "pathology", measured + f"; across CPU sockets: {shown}",
                     "GPUs that work together under one CPU socket (NV#, PIX or PXB between them)",
                     "run each job on GPUs of one socket (pick them from the CPU/NUMA affinity columns of nvidia-smi "
                     "topo -m with CUDA_VISIBLE_DEVICES); where a job must span both sockets, NCCL_P2P_LEVEL=SYS lets "
                     "NCCL try P2P across them, else traffic is staged through host memory",
                     SRC_TOPO, data)
    host_paths = [p for code, ps in pairs.items() for p in ps if describe_cell(code)[0].code in ("PHB", "NODE")]
    note = (f"; {len(host_paths)} pair(s) through a host bridge (PHB/NODE): NCCL stages those through host memory "
            "unless NCCL_P2P_LEVEL allows P2P") if host_paths else ""
    return Check("topology", title, "ok", measured + note, "no GPU pair across CPU sockets", source=SRC_TOPO, data=data)


def check_pcie_links(gpus: Sequence[dict], under_load: dict | None = None, *, reason: str = "") -> Check:
    """PCIe generation and width of each GPU: current against maximum (NVML).

    Two pathologies: a link narrower than it can be (``x8`` of ``x16``: a riser, a slot wired
    x8, a bad seat); a link that trains below its maximum generation *under load* (idle GPUs drop
    to Gen1 to save power, so only the generation sampled while copies ran, ``under_load``, is
    judged; without it an idle reading below the maximum is reported, not judged). ``below`` where
    the slot caps the generation under the GPU's own (``max_gen < gpu_max_gen``: a BIOS setting, a
    riser, or a platform a generation older than the GPU).

    Parameters
    ----------
    gpus : sequence of dict
        ``NvmlReader.snapshot()["gpus"]``.
    under_load : dict or None
        ``PcieSampler.best``: GPU index -> ``{"gen", "width", "samples"}``.
    reason : str
        Why ``gpus`` is empty (NVML not available, no GPU).
    """
    title = "PCIe link of each GPU: generation and width, current against maximum"
    if not gpus:
        return skip("pcie_link", title, reason or "no GPU")
    problems, capped, rows, idle_notes = [], [], [], []
    for g in gpus:
        p = g.get("pcie") or {}
        load = (under_load or {}).get(g["index"]) or {}
        gen = load.get("gen") or p.get("curr_gen")
        width = load.get("width") or p.get("curr_width")
        row = {"gpu": g["index"], "name": g["name"], "gen": gen, "width": width, "max_gen": p.get("max_gen"),
               "gpu_max_gen": p.get("gpu_max_gen"), "max_width": p.get("max_width"),
               "under_load": bool(load.get("samples")), "pstate": p.get("pstate")}
        rows.append(row)
        label = f"GPU{g['index']}"
        if width and p.get("max_width") and width < p["max_width"]:
            problems.append(f"{label} runs at x{width} of x{p['max_width']}")
        if p.get("max_gen") and p.get("gpu_max_gen") and p["max_gen"] < p["gpu_max_gen"]:
            capped.append(f"{label}'s slot allows Gen{p['max_gen']}, the GPU Gen{p['gpu_max_gen']}")
        if gen and p.get("max_gen") and gen < p["max_gen"]:
            if row["under_load"]:
                problems.append(f"{label} trained at Gen{gen} of Gen{p['max_gen']} under load")
            else:
                idle_notes.append(f"{label} Gen{gen} of Gen{p['max_gen']} while idle")
    links = ", ".join(f"GPU{r['gpu']} Gen{r['gen'] or '?'} x{r['width'] or '?'}" for r in rows)
    when = "under load" if any(r["under_load"] for r in rows) else "idle"
    expected = ", ".join(sorted({f"Gen{r['max_gen'] or '?'} x{r['max_width'] or '?'}" for r in rows})) + " (NVML's maximum)"
    data = {"gpus": rows}
    fix = ("reseat the GPU or its riser, use a x16 slot wired x16, set the slot to its full generation in the BIOS (not "
           "Auto/Gen3), and check 'lspci -vvv' LnkSta against LnkCap for the GPU and the PCIe switch above it")
    if problems:
        return Check("pcie_link", title, "pathology", f"{links} ({when}): " + "; ".join(problems + capped), expected,
                     fix, SRC_NVML, data)
    if capped:  # a BIOS setting, or a platform a generation older than the GPU: slower, not broken
        return Check("pcie_link", title, "below", f"{links} ({when}): " + "; ".join(capped),
                     expected + "; the GPU's own: " + ", ".join(sorted({f"Gen{r['gpu_max_gen']}" for r in rows})),
                     fix + "; on a platform a generation older than the GPU this is the platform's limit", SRC_NVML, data)
    note = ("; " + ", ".join(idle_notes) + ": idle GPUs lower the link speed to save power, not judged") if idle_notes else ""
    return Check("pcie_link", title, "ok", f"{links} ({when}){note}", expected, source=SRC_NVML, data=data)


def check_nvlink(gpus: Sequence[dict], *, reason: str = "") -> Check:
    """Active NVLinks of each GPU (NVML) against the links it has and the catalog's count.

    ``pathology`` when a GPU has inactive links while others are up, or fewer active links than
    the catalog lists for an SXM part (a link down lowers the GPU's NVLink bandwidth in proportion).
    A bridged PCIe card with no active link has no bridge fitted: reported, not judged.
    """
    from gpucomm.model.hardware import get_gpu

    title = "NVLink: active links of each GPU"
    if not gpus:
        return skip("nvlink", title, reason or "no GPU")
    with_links = [g for g in gpus if g.get("nvlink")]
    if not with_links:
        return skip("nvlink", title, "these GPUs report no NVLink (PCIe only)")
    problems, rows, notes = [], [], []
    for g in with_links:
        links = g["nvlink"]
        key = catalog_gpu_key(g["name"])
        spec = get_gpu(key) if key else None
        catalog = spec.nvlink_links if spec else None
        rows.append({"gpu": g["index"], "name": g["name"], "active": links["active"], "present": links["present"],
                     "catalog": catalog})
        label = f"GPU{g['index']}"
        if links["active"] == 0 and spec is not None and spec.nvlink_bridge:
            notes.append(f"{label}: no active link (no NVLink bridge fitted)")
        elif 0 < links["active"] < links["present"]:
            problems.append(f"{label}: {links['present'] - links['active']} of {links['present']} links down")
        elif links["active"] == 0:
            problems.append(f"{label}: all {links['present']} links down")
        elif catalog and not spec.nvlink_bridge and links["active"] < catalog:
            problems.append(f"{label}: {links['active']} active links, the catalog lists {catalog} for {spec.name}")
    measured = ", ".join(f"GPU{r['gpu']} {r['active']}/{r['present']}" for r in rows) + " active"
    catalog_counts = sorted({r["catalog"] for r in rows if r["catalog"]})
    expected = ("every link active" + (f" ({', '.join(map(str, catalog_counts))} per GPU in the catalog)"
                                        if catalog_counts else ""))
    data = {"gpus": rows}
    if problems:
        return Check("nvlink", title, "pathology", measured + ": " + "; ".join(problems), expected,
                     "check 'nvidia-smi nvlink -s' and '-e' (error counters); reseat bridges; on NVSwitch systems make "
                     "sure nvidia-fabricmanager runs, then reset the GPUs or reboot; persistent link errors are a "
                     "hardware case for the vendor", SRC_NVML, data)
    return Check("nvlink", title, "ok", measured + ("; " + "; ".join(notes) if notes else ""), expected,
                 source=SRC_NVML, data=data)


def _nvswitch_gpu(name: str) -> bool:
    """NVLink 4+ on an SXM part, not a bridged card: the GPUs of NVSwitch systems where NCCL can use NVLS."""
    from gpucomm.model.hardware import get_gpu

    key = catalog_gpu_key(name)
    if key is None:
        return False
    spec = get_gpu(key)
    return bool(spec.nvlink_gen and spec.nvlink_gen >= 4 and not spec.nvlink_bridge)


_FABRIC_STATES = {0: "not supported", 1: "not started", 2: "in progress", 3: "completed"}
"""``NVML_GPU_FABRIC_STATE_*`` (``nvml.h``)."""
_FABRIC_NOT_SUPPORTED, _FABRIC_COMPLETED = 0, 3
"""``NVML_GPU_FABRIC_STATE_NOT_SUPPORTED`` (GPUs before Hopper: nothing to judge) and ``..._COMPLETED`` (``nvml.h``)."""


def check_nvls(gpus: Sequence[dict], log: NcclInfoLog | None = None, *, reason: str = "") -> Check:
    """NVLS (NVLink SHARP) on NVSwitch systems: the GPU's fabric state (Fabric Manager) and NCCL's own words.

    ``pathology`` when NVML says a GPU's fabric registration has not completed or failed (Fabric
    Manager not running or at another version than the driver), or when NCCL printed "NVLS
    multicast support is not available". Skipped on GPUs without NVLink 4 switches.
    """
    title = "NVLS (NVLink SHARP) and Fabric Manager"
    if not gpus:
        return skip("nvls", title, reason or "no GPU")
    if not any(_nvswitch_gpu(g["name"]) for g in gpus):
        return skip("nvls", title, f"{gpus[0]['name']}: NVLS needs NVLink 4+ GPUs behind NVSwitch (H100/H200/B200 SXM)")
    fabric = [(g["index"], g["fabric"]) for g in gpus if g.get("fabric")]
    unfinished = [(i, f) for i, f in fabric if f["state"] not in (_FABRIC_COMPLETED, _FABRIC_NOT_SUPPORTED)]
    failed = [(i, f) for i, f in fabric if f["state"] == _FABRIC_COMPLETED and f["status"] != 0]  # status: an NVML_ERROR code
    log_off = [dev for dev, ok, _ in (log.nvls_support if log else ()) if not ok]
    log_on = [dev for dev, ok, _ in (log.nvls_support if log else ()) if ok]
    states = Counter(_FABRIC_STATES.get(f["state"], str(f["state"])) for _, f in fabric)
    parts = [("fabric state: " + ", ".join(f"{k} x {v}" for k, v in states.items())) if fabric
             else "NVML reports no fabric state"]
    if log is not None:
        parts.append(f"NCCL: NVLS available on {len(log_on)}, not available on {len(log_off)} device line(s)"
                     if log.nvls_support else "NCCL printed no NVLS line")
    data = {"fabric": [{"gpu": i, **f} for i, f in fabric], "nccl_nvls_off": log_off, "nccl_nvls_on": log_on}
    if unfinished or failed or log_off:
        problems = [f"GPU{i} fabric {_FABRIC_STATES.get(f['state'], f['state'])}" for i, f in unfinished]
        problems += [f"GPU{i} fabric registration failed (NVML status {f['status']})" for i, f in failed]
        if log_off:
            problems.append("NCCL: NVLS multicast support is not available")
        return Check("nvls", title, "pathology", "; ".join(parts) + ": " + "; ".join(problems),
                     "fabric state completed with status 0 on every GPU; NCCL finds NVLS multicast support",
                     "start nvidia-fabricmanager at exactly the driver's version (systemctl enable --now "
                     "nvidia-fabricmanager), let containers see the NVSwitch devices, use a driver with multicast "
                     "support (CUDA 12.1+); NVLS is also off with NCCL_NVLS_ENABLE=0",
                     SRC_FABRIC_MANAGER, data)
    if not fabric and log is None:
        return skip("nvls", title, "NVML reports no fabric state and no NCCL log was read", **data)
    return Check("nvls", title, "ok", "; ".join(parts), "fabric state completed; NVLS available",
                 source=SRC_FABRIC_MANAGER, data=data)


_P2P_STATUS = {1: "the chipset does not support it", 2: "the GPU does not support it (consumer GPUs)",
               3: "the PCIe topology does not support it (e.g. across a host bridge, or ACS redirection)",
               4: "disabled by a driver registry key", 5: "not supported", 6: "unknown"}
"""``NVML_P2P_STATUS_*`` codes 1-6 (``nvml.h``) in words; 0 is OK."""
_P2P_DISABLED_BY_REGKEY = 4
"""``NVML_P2P_STATUS_DISABLED_BY_REGKEY`` (``nvml.h``): refused by a setting, not by the hardware, so always judged."""


def check_p2p(matrix: Sequence[Sequence[bool]] | None, topology: TopoMatrix | None = None,
              nvml_status: dict | None = None, *, reason: str = "") -> Check:
    """The P2P access matrix (``torch.cuda.can_device_access_peer``) against what the topology promises.

    ``pathology`` for a pair without P2P that the topology says should have it (NVLink, or PCIe
    switches only: ``NV#``, ``PIX``, ``PXB``, where NCCL uses P2P by default), or that NVML says a
    registry key disabled. Pairs through a host bridge or across sockets without P2P are noted:
    many platforms do not route P2P there.
    """
    title = "P2P access between GPUs"
    if matrix is None:
        return skip("p2p", title, reason or "no GPU")
    n = len(matrix)
    if n < 2:
        return skip("p2p", title, "one GPU: no pair to check", matrix=[list(r) for r in matrix])
    missing = [(i, j) for i in range(n) for j in range(n) if i != j and not matrix[i][j]]
    data = {"matrix": [list(map(bool, r)) for r in matrix], "missing": [list(p) for p in missing]}
    pairs = n * (n - 1)
    if not missing:
        return Check("p2p", title, "ok", f"every ordered pair of {n} GPUs ({pairs}) has P2P access",
                     "P2P between GPUs linked by NVLink or PCIe switches", source=SRC_ACS, data=data)
    should, other = [], []
    for i, j in missing:
        code = None
        if topology is not None and f"GPU{i}" in topology.devices and f"GPU{j}" in topology.devices:
            code = describe_cell(topology.cell(f"GPU{i}", f"GPU{j}"))[0]
        why = _P2P_STATUS.get((nvml_status or {}).get(f"{i}-{j}"))
        label = f"{i}->{j}" + (f" ({topology.cell(f'GPU{i}', f'GPU{j}')})" if code else "") + (f": {why}" if why else "")
        regkey = (nvml_status or {}).get(f"{i}-{j}") == _P2P_DISABLED_BY_REGKEY
        (should if regkey or (code is not None and code.nccl_p2p_by_default) else other).append(label)
    measured = f"{pairs - len(missing)} of {pairs} ordered pairs have P2P access"
    if should:
        return Check("p2p", title, "pathology", measured + "; missing where the topology allows it: " + ", ".join(should[:8]),
                     "P2P on every pair joined by NVLink or PCIe switches (NV#, PIX, PXB)",
                     "on bare metal disable PCIe ACS on the switches and set the IOMMU to passthrough (iommu=pt); in a "
                     "VM, P2P needs the hypervisor's support; consumer GPUs have no PCIe P2P; 'nvidia-smi topo -p2p r' "
                     "shows the driver's view", SRC_ACS, data)
    return Check("p2p", title, "ok", measured + "; without P2P: " + ", ".join(other[:8])
                 + " (through a host bridge or across sockets: many platforms do not route P2P there)",
                 "P2P on every pair joined by NVLink or PCIe switches", source=SRC_ACS, data=data)


def check_iommu(state: dict, *, has_gpu: bool) -> Check:
    """Is the IOMMU translating device DMA? Then GPU P2P goes through the root complex (slow, or it hangs).

    ``pathology`` when IOMMU groups of type ``DMA``/``DMA-FQ`` exist on a node with GPUs (NCCL's
    troubleshooting guide, :data:`SRC_ACS`); passthrough (``identity``, ``iommu=pt``) or no IOMMU is ``ok``.
    """
    title = "IOMMU mode (P2P traffic must not be translated)"
    types = state.get("group_types")
    if types is None and state.get("iommu_devices") is None:
        return skip("iommu", title, "/sys/kernel/iommu_groups and /sys/class/iommu cannot be read")
    cmdline = state.get("cmdline") or ""
    flags = " ".join(w for w in cmdline.split() if "iommu" in w)
    data = {"group_types": types or {}, "iommu_devices": state.get("iommu_devices") or [], "cmdline_flags": flags}
    translating = sum(v for k, v in (types or {}).items() if k.startswith("DMA"))
    if not types:
        return Check("iommu", title, "ok", "IOMMU off (no IOMMU groups)" + (f"; kernel flags: {flags}" if flags else ""),
                     "IOMMU off or in passthrough", source=SRC_ACS, data=data)
    summary = ", ".join(f"{k} x {v}" for k, v in sorted(types.items()))
    measured = f"IOMMU groups: {summary}" + (f"; kernel flags: {flags}" if flags else "")
    if translating and has_gpu:
        return Check("iommu", title, "pathology", measured + " (DMA: addresses translated)",
                     "IOMMU off or in passthrough (groups of type identity)",
                     "on bare metal boot with iommu=pt (with intel_iommu=on or amd_iommu=on where needed) or turn the "
                     "IOMMU (VT-d / AMD-Vi) off in the BIOS; in a VM the hypervisor decides", SRC_ACS, data)
    note = " (no GPU here: nothing is affected)" if translating else ""
    return Check("iommu", title, "ok", measured + note, "IOMMU off or in passthrough", source=SRC_ACS, data=data)


_LSPCI_DEVICE_RE = re.compile(r"^(?P<bdf>[0-9a-fA-F]{2,4}:[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2})?\.[0-7]) (?P<what>.*)$")
_ACS_CTL_RE = re.compile(r"^\s+ACSCtl:\s+(?P<flags>.*)$")


def parse_acs(lspci_text: str) -> dict:
    """Read ``lspci -vvv``: the devices whose ACS control redirects peer-to-peer requests.

    Returns
    -------
    dict
        ``with_acs``: devices with an ``ACSCtl`` line; ``redirecting``: those with ``ReqRedir+`` or
        ``CmpltRedir+`` (P2P requests or completions sent up to the root complex), each
        ``"BDF description"``; ``denied``: whether lspci lacked the rights to read capabilities.

    Examples
    --------
    >>> text = ("0000:00:01.0 PCI bridge: Intel Corporation Device 1234\\n"
    ...         "\\t\\tACSCtl:\\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\\n")
    >>> parse_acs(text)["redirecting"]
    ['0000:00:01.0 PCI bridge: Intel Corporation Device 1234']
    """
    current = None
    with_acs, redirecting = [], []
    for line in lspci_text.splitlines():
        m = _LSPCI_DEVICE_RE.match(line)
        if m:
            current = f"{m['bdf']} {m['what'].strip()}"
            continue
        m = _ACS_CTL_RE.match(line)
        if m and current:
            with_acs.append(current)
            flags = set(m["flags"].split())
            if {"ReqRedir+", "CmpltRedir+"} & flags:
                redirecting.append(current)
    return {"with_acs": with_acs, "redirecting": redirecting, "denied": "<access denied>" in lspci_text}


def check_acs(lspci_text: str | None, *, has_gpu: bool, reason: str = "") -> Check:
    """PCIe ACS on bridges: with request/completion redirect on, P2P detours through the root complex.

    ``pathology`` on a node with GPUs when any device redirects (NCCL's troubleshooting guide
    says to disable ACS on bare metal, :data:`SRC_ACS`). Needs root for lspci to show ``ACSCtl``.
    """
    title = "PCIe ACS (Access Control Services) redirection"
    if lspci_text is None:
        return skip("acs", title, reason or "lspci output not available")
    acs = parse_acs(lspci_text)
    if not acs["with_acs"]:
        why = ("lspci could not read the capabilities: run gpucomm doctor as root to check ACS" if acs["denied"]
               else "no device shows an ACSCtl line")
        return skip("acs", title, why, **acs) if acs["denied"] else Check(
            "acs", title, "ok", why, "no ACS redirection on the GPUs' bridges", source=SRC_ACS, data=acs)
    measured = f"{len(acs['redirecting'])} of {len(acs['with_acs'])} devices with ACS redirect P2P requests"
    if acs["redirecting"] and has_gpu:
        shown = "; ".join(acs["redirecting"][:4]) + (" ..." if len(acs["redirecting"]) > 4 else "")
        return Check("acs", title, "pathology", f"{measured}: {shown}", "ReqRedir- CmpltRedir- on every bridge",
                     "disable ACS on bare metal: in the BIOS (PCIe ACS / 'ACS Control'), or at boot with "
                     "'setpci -s BDF ECAP_ACS+0x6.w=0000' on each bridge; keep it in VMs that pass GPUs through",
                     SRC_ACS, acs)
    note = " (no GPU here: nothing is affected)" if acs["redirecting"] else ""
    return Check("acs", title, "ok", measured + note, "ReqRedir- CmpltRedir- on every bridge", source=SRC_ACS, data=acs)


def check_gdr(rdma: dict, *, has_gpu: bool, log: NcclInfoLog | None = None) -> Check:
    """GPUDirect RDMA: with RDMA NICs, the NIC should read GPU memory directly (``nvidia_peermem`` or DMA-BUF).

    ``pathology`` with RDMA NICs and GPUs but no GPUDirect RDMA module loaded, unless NCCL's log
    shows ``/GDRDMA`` connections (DMA-BUF needs no module); also when NCCL's log shows IB
    connections without it. Skipped without RDMA NICs or GPUs.
    """
    title = "GPUDirect RDMA (NIC reads and writes GPU memory)"
    devices = rdma.get("devices") or []
    if not devices:
        return skip("gdr", title, "no RDMA NIC (/sys/class/infiniband is empty): GPUDirect RDMA does not apply", **rdma)
    if not has_gpu:
        return skip("gdr", title, f"RDMA NICs {', '.join(devices)} but no GPU", **rdma)
    ib = [c for c in (log.connections if log else ()) if c.transport == "NET/IB"]
    gdr_in_log = any(c.gdr for c in ib)
    modules = rdma.get("peer_modules") or []
    measured = f"RDMA NICs: {', '.join(devices)}; module: {', '.join(modules) or 'none loaded'}"
    if ib:
        measured += f"; NCCL: {sum(c.gdr for c in ib)} of {len(ib)} IB connection lines with GDRDMA"
    expected = "nvidia_peermem loaded (or DMA-BUF), NCCL's IB connections /GDRDMA"
    if (not modules and not gdr_in_log) or (ib and not all(c.gdr for c in ib)):
        return Check("gdr", title, "pathology", measured, expected,
                     "load the nvidia-peermem module (modprobe nvidia-peermem; it ships with the driver) or use DMA-BUF "
                     "(open GPU kernel modules, Linux >= 5.12); keep PCIe ACS off; check NCCL_NET_GDR_LEVEL when the NIC "
                     "sits under another socket than the GPU", SRC_PEERMEM, rdma)
    return Check("gdr", title, "ok", measured, expected, source=SRC_PEERMEM, data=rdma)


