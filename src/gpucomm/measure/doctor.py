"""``gpucomm doctor``: is this node healthy? Inventory, topology, links, P2P, copies, a sweep, the model.

Every check is a small function that turns what was read or measured into one :class:`Check`:
``ok``, ``below`` (measured under the expected band), ``pathology`` (a known problem, with its fix
and a public source) or ``skipped`` (with the reason: no GPU, no NVML, one GPU...). The checks are
pure functions of plain data, so each pathology is tested on a machine without a GPU with a fake
NVML module and recorded ``nvidia-smi topo -m`` outputs; :class:`SystemProbe` is the only part
that reads the machine (NVML through ``pynvml`` from the ``nvidia-ml-py`` package, imported lazily;
``torch.cuda``; ``nvidia-smi topo -m``; ``/sys`` and ``/proc``; ``lspci``) and runs measurements
(:func:`gpucomm.measure.copy_bandwidth.measure_copy_bandwidth`, :func:`gpucomm.measure.run_sweep`).
:func:`run_doctor` runs every step in order, appending to a :class:`DoctorReport`, so that what
finished survives a Ctrl-C.

What runs where
---------------
========================  ==========================================  ====================================
check                     with CUDA GPUs                              without (CPU only)
========================  ==========================================  ====================================
``inventory``             GPUs, driver, CUDA, NCCL, torch             CPU, torch; "no CUDA GPU"
``topology``              ``nvidia-smi topo -m`` parsed; SYS pairs    skipped (no nvidia-smi)
``pcie_link``             NVML: generation and width, current         skipped (NVML not available)
                          (sampled under load) against maximum
``nvlink``                NVML: active links against the catalog      skipped
``nvls``                  NVML fabric state (Fabric Manager),         skipped
                          NCCL's "NVLS multicast support" lines
``p2p``                   ``torch.cuda.can_device_access_peer``       skipped
                          matrix, NVML's reason where refused
``iommu``, ``acs``        ``/sys/kernel/iommu_groups``, ``lspci``     the same (they are host settings)
``gdr``                   RDMA NICs and ``nvidia_peermem``            the same (skipped without a GPU)
``copy:<kind>``           host<->device, device, peer copies          host memory copies, no catalog value
                          against the catalog
``all_reduce``            NCCL sweep on every GPU against the         gloo sweep on 2 ranks; correctness
                          model's band for this machine               only: "no model for gloo on CPU"
``nccl_log``, ``nccl:*``  the sweep's ``NCCL_DEBUG=INFO`` log read    skipped (gloo writes none)
                          by :mod:`gpucomm.measure.logs.nccl_info`
========================  ==========================================  ====================================

Importing this module imports neither torch nor pynvml.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import gpucomm
from gpucomm import GpucommError
from gpucomm.measure.copy_bandwidth import (
    HOST_KINDS,
    PEER_KINDS,
    catalog_gpu_key,
    expected_copy_bw_bytes_per_s,
)
from gpucomm.measure.harness import cpu_model_name
from gpucomm.measure.logs.nccl_info import NcclInfoLog, parse_nccl_info_log
from gpucomm.measure.topology import TopoMatrix, describe_cell, parse_topo_matrix
from gpucomm.measure.topology_examples import local_topology_text
from gpucomm.model.units import MiB, format_size, format_time, to_gb_per_s

__all__ = ["STATUSES", "CHECK_ORDER", "Check", "DoctorReport", "SystemProbe", "NvmlUnavailable", "NvmlReader",
           "PcieSampler", "DoctorPlan", "plan_for", "run_doctor", "worst_status",
           "check_inventory", "check_topology", "check_pcie_links", "check_nvlink", "check_nvls", "check_p2p",
           "check_iommu", "check_acs", "check_gdr", "check_copy_bandwidth", "check_all_reduce", "check_nccl_log",
           "parse_acs", "inter_socket_key", "machine_fabric", "model_band", "COPY_TOLERANCES", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1
"""Version of ``report.json`` (``DoctorReport.as_dict``)."""

STATUSES = ("ok", "below", "pathology", "skipped")
"""How a check ends: as expected; measured under the expected band; a known problem (with its fix); not run (with why)."""

CHECK_ORDER = ("inventory", "topology", "pcie_link", "nvlink", "nvls", "p2p", "iommu", "acs", "gdr", "copy",
               "all_reduce", "nccl")
"""The order checks are listed in (by the part of ``Check.name`` before ``:``), whatever order they ran in."""

# Public pages cited by the fixes (NCCL's documentation of the release the log reader follows, and issue threads).
_NCCL_DOCS = "https://docs.nvidia.com/deeplearning/nccl/archives/nccl_2262/user-guide/docs"
SRC_ACS = f"{_NCCL_DOCS}/troubleshooting.html#pci-access-control-services-acs"
SRC_NVML = "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html"
SRC_FABRIC_MANAGER = "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html"
SRC_PEERMEM = "https://docs.nvidia.com/cuda/gpudirect-rdma/index.html"
SRC_TOPO = "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/paths.cc"
SRC_VALIDATION = "gpucomm.model.validation.TARGETS (the model against published measurements: gpucomm validate)"


# ------------------------------------------------------------------------------------------------ records

@dataclass(frozen=True)
class Check:
    """The outcome of one check.

    Attributes
    ----------
    name : str
        Stable identifier: ``inventory``, ``topology``, ``pcie_link``, ``nvlink``, ``nvls``, ``p2p``,
        ``iommu``, ``acs``, ``gdr``, ``copy:<kind>``, ``all_reduce``, ``nccl_log``, ``nccl:<finding code>``.
    title : str
        What was checked, in words.
    status : str
        One of :data:`STATUSES`.
    measured : str
        What was seen (or, when skipped, why not).
    expected : str
        What a healthy node shows, with the basis of the expectation.
    fix : str
        For ``below`` and ``pathology``: what usually fixes it ("" otherwise).
    source : str
        A public page for the expectation or the fix ("" where none applies).
    data : dict
        The numbers behind ``measured`` and ``expected`` (JSON-ready), for the report's figures.
    """

    name: str
    title: str
    status: str
    measured: str
    expected: str = ""
    fix: str = ""
    source: str = ""
    data: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise GpucommError(f"check status {self.status!r} is not valid: expected one of {', '.join(STATUSES)}")

    def as_dict(self) -> dict:
        """All fields as plain data."""
        return asdict(self)


def _skip(name: str, title: str, why: str, **data) -> Check:
    return Check(name, title, "skipped", why, data=dict(data))


def worst_status(checks: Sequence[Check]) -> str:
    """``pathology`` if any check found one, else ``below`` if any, else ``ok`` (skipped checks count as ok).

    Examples
    --------
    >>> worst_status([Check("a", "a", "ok", ""), Check("b", "b", "below", "")])
    'below'
    """
    statuses = {c.status for c in checks}
    return "pathology" if "pathology" in statuses else "below" if "below" in statuses else "ok"


def _order_key(check: Check) -> int:
    head = check.name.split(":")[0]
    head = "nccl" if head in ("nccl_log", "nccl") else head
    return CHECK_ORDER.index(head) if head in CHECK_ORDER else len(CHECK_ORDER)


@dataclass
class DoctorReport:
    """What :func:`run_doctor` found so far: checks, and the data the report's figures are drawn from.

    Filled step by step (a Ctrl-C leaves the finished steps in it). :meth:`as_dict` is ``report.json``.

    Attributes
    ----------
    mode : str
        ``gpu`` (CUDA GPUs visible to torch) or ``cpu``.
    checks : list of Check
        In the order they finished (:meth:`ordered` sorts them for display).
    inventory : dict
        Host, CPU, GPUs, versions.
    topology : dict
        ``text`` (``nvidia-smi topo -m``), ``matrix`` (``{row: {column: code}}``), or empty.
    p2p : dict
        ``matrix`` (``matrix[i][j]``: GPU i can access GPU j), ``gpus`` (names), or empty.
    copy : dict
        ``records`` and ``meta`` of the copy measurement, ``expected`` (kind -> bytes/s).
    sweep : dict
        ``records`` and ``meta`` of the all_reduce sweep, ``band`` (the model's curve and band per
        size, :func:`model_band`), ``model_label`` or ``model_reason``.
    nccl : dict
        ``files`` (the debug logs written), and the log reader's facts and findings.
    steps_done, steps_total : int
        Progress through :func:`run_doctor`'s steps.
    interrupted : bool
        True when the run was stopped before its last step (Ctrl-C); ``steps_done`` says how far it got.
    """

    mode: str = "cpu"
    started: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).astimezone().isoformat(
        timespec="seconds"))
    host: str = field(default_factory=socket.gethostname)
    checks: list = field(default_factory=list)
    inventory: dict = field(default_factory=dict)
    topology: dict = field(default_factory=dict)
    p2p: dict = field(default_factory=dict)
    copy: dict = field(default_factory=dict)
    sweep: dict = field(default_factory=dict)
    nccl: dict = field(default_factory=dict)
    steps_done: int = 0
    steps_total: int = 0
    interrupted: bool = False

    def add(self, *checks: Check) -> None:
        """Append finished checks."""
        self.checks.extend(checks)

    def ordered(self) -> list[Check]:
        """The checks in :data:`CHECK_ORDER` (stable within one kind)."""
        return sorted(self.checks, key=_order_key)

    def skipped(self) -> list[Check]:
        """The checks that did not run, each with why."""
        return [c for c in self.ordered() if c.status == "skipped"]

    @property
    def status(self) -> str:
        """:func:`worst_status` of all checks."""
        return worst_status(self.checks)

    def as_dict(self) -> dict:
        """The whole report as JSON-ready data (``report.json``)."""
        counts = Counter(c.status for c in self.checks)
        return {"schema": SCHEMA_VERSION, "tool": "gpucomm doctor", "gpucomm_version": gpucomm.__version__,
                "started": self.started, "host": self.host, "mode": self.mode, "status": self.status,
                "counts": {s: counts.get(s, 0) for s in STATUSES}, "interrupted": self.interrupted,
                "steps_done": self.steps_done, "steps_total": self.steps_total,
                "checks": [c.as_dict() for c in self.ordered()], "inventory": self.inventory,
                "topology": self.topology, "p2p": self.p2p, "copy": self.copy, "sweep": self.sweep,
                "nccl": self.nccl}

    def write_json(self, path: str | os.PathLike) -> dict:
        """Write :meth:`as_dict` to ``path`` (``report.json``); return the data as read back (plain JSON types)."""
        text = json.dumps(self.as_dict(), indent=1, default=str)  # default=str: paths and other non-JSON values
        Path(path).write_text(text + "\n", encoding="utf-8")
        return json.loads(text)


# ------------------------------------------------------------------------------------------------ NVML

class NvmlUnavailable(Exception):
    """NVML cannot be used here; the message says why in one line (``NVML not available: ...``)."""


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class NvmlReader:
    """NVML through a ``pynvml``-compatible module: a context manager around ``nvmlInit``/``nvmlShutdown``.

    Parameters
    ----------
    nvml : module
        ``pynvml`` (package ``nvidia-ml-py``) or a fake with the same functions and constants.

    Raises
    ------
    NvmlUnavailable
        On entry, where ``nvmlInit`` fails (no driver, no ``libnvidia-ml.so.1``).

    Notes
    -----
    Every query is optional: a call the driver does not support (``NVMLError``, e.g. NVLink state on
    a GPU without NVLink, the fabric state before Hopper) gives None for that field. The NVML calls
    used, and what they return, are documented in NVIDIA's NVML API reference (:data:`SRC_NVML`).
    """

    def __init__(self, nvml) -> None:
        self.nvml = nvml
        self.handles: list = []

    def __enter__(self) -> NvmlReader:
        try:
            self.nvml.nvmlInit()
        except self.nvml.NVMLError as exc:
            raise NvmlUnavailable(f"NVML not available: {exc}") from None
        try:
            self.handles = [self.nvml.nvmlDeviceGetHandleByIndex(i) for i in range(self.nvml.nvmlDeviceGetCount())]
        except self.nvml.NVMLError as exc:
            self.nvml.nvmlShutdown()
            raise NvmlUnavailable(f"NVML not available: listing GPUs failed: {exc}") from None
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.nvml.nvmlShutdown()
        except self.nvml.NVMLError:
            pass  # shutting down a library that is going away anyway

    def _try(self, fn: str, *args):
        try:
            return getattr(self.nvml, fn)(*args)
        except (self.nvml.NVMLError, AttributeError):  # not supported here, or an older pynvml without it
            return None

    def pcie_now(self, index: int) -> tuple[int | None, int | None]:
        """Current PCIe generation and width of GPU ``index`` (None where NVML does not say)."""
        h = self.handles[index]
        return self._try("nvmlDeviceGetCurrPcieLinkGeneration", h), self._try("nvmlDeviceGetCurrPcieLinkWidth", h)

    def _nvlinks(self, handle) -> dict | None:
        states = []
        for link in range(getattr(self.nvml, "NVML_NVLINK_MAX_LINKS", 18)):
            state = self._try("nvmlDeviceGetNvLinkState", handle, link)
            if state is not None:  # links the GPU does not have answer "not supported" or "invalid argument"
                states.append(int(state))
        return {"present": len(states), "active": sum(1 for s in states if s)} if states else None

    def _fabric(self, handle) -> dict | None:
        struct = getattr(self.nvml, "c_nvmlGpuFabricInfo_t", None)
        if struct is None:
            return None
        info = struct()
        try:  # fills ``info`` in place (Hopper and later; older GPUs answer "not supported")
            self.nvml.nvmlDeviceGetGpuFabricInfo(handle, ctypes.byref(info))
        except (self.nvml.NVMLError, AttributeError):
            return None
        return {"state": int(info.state), "status": int(info.status)}

    def snapshot(self) -> dict:
        """Driver, CUDA driver version and, per GPU, name, bus id, PCIe, NVLink and fabric state; P2P status.

        Returns
        -------
        dict
            ``driver_version`` (str or None), ``cuda_driver_version`` (``"12.4"`` or None), ``gpus``: one
            dict per GPU in NVML order with ``index``, ``name``, ``bus_id``, ``pcie`` (``curr_gen``,
            ``max_gen``: the most the GPU and its slot can train to, ``gpu_max_gen``: the GPU's own,
            ``curr_width``, ``max_width``, ``pstate``: 0 = P0, busy ... 8+ = idle), ``nvlink``
            (``present``, ``active`` or None) and ``fabric`` (``state``, ``status`` or None); and
            ``p2p_status``: ``"i-j"`` -> NVML's P2P read status code (0 = OK) for each ordered pair.
        """
        n = self.nvml
        cuda = self._try("nvmlSystemGetCudaDriverVersion")
        out = {"driver_version": _text(v) if (v := self._try("nvmlSystemGetDriverVersion")) is not None else None,
               "cuda_driver_version": f"{cuda // 1000}.{cuda % 1000 // 10}" if cuda else None, "gpus": []}
        for i, h in enumerate(self.handles):
            pci = self._try("nvmlDeviceGetPciInfo", h)
            out["gpus"].append({
                "index": i, "name": _text(self._try("nvmlDeviceGetName", h) or f"GPU {i}"),
                "bus_id": _text(pci.busId) if pci is not None else None,
                "pcie": {"curr_gen": self._try("nvmlDeviceGetCurrPcieLinkGeneration", h),
                         "max_gen": self._try("nvmlDeviceGetMaxPcieLinkGeneration", h),
                         "gpu_max_gen": self._try("nvmlDeviceGetGpuMaxPcieLinkGeneration", h),
                         "curr_width": self._try("nvmlDeviceGetCurrPcieLinkWidth", h),
                         "max_width": self._try("nvmlDeviceGetMaxPcieLinkWidth", h),
                         "pstate": self._try("nvmlDeviceGetPerformanceState", h)},
                "nvlink": self._nvlinks(h), "fabric": self._fabric(h)})
        read_index = getattr(n, "NVML_P2P_CAPS_INDEX_READ", 0)
        read_index = read_index[0] if isinstance(read_index, tuple) else read_index  # pynvml writes "= 0," (a tuple)
        out["p2p_status"] = {}
        for i, a in enumerate(self.handles):
            for j, b in enumerate(self.handles):
                if i != j and (code := self._try("nvmlDeviceGetP2PStatus", a, b, read_index)) is not None:
                    out["p2p_status"][f"{i}-{j}"] = int(code)
        return out


class PcieSampler:
    """Samples every GPU's current PCIe generation and width in a thread while a measurement runs.

    GPUs lower their link speed when idle to save power (an idle H100 reports Gen1), so the
    generation that counts is the one read under load: the highest seen while the copies ran.

    Parameters
    ----------
    reader : NvmlReader or None
        An entered reader; None samples nothing.
    interval_s : float
        Seconds between samples.
    """

    def __init__(self, reader: NvmlReader | None, interval_s: float = 0.05) -> None:
        self.reader = reader
        self.interval_s = interval_s
        self.best: dict[int, dict] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> None:
        """Take one sample of every GPU (the thread calls it; tests call it directly)."""
        for i in range(len(self.reader.handles) if self.reader else 0):
            gen, width = self.reader.pcie_now(i)
            best = self.best.setdefault(i, {"gen": None, "width": None, "samples": 0})
            best["samples"] += 1
            if gen is not None:
                best["gen"] = max(gen, best["gen"] or 0)
            if width is not None:
                best["width"] = max(width, best["width"] or 0)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def __enter__(self) -> PcieSampler:
        if self.reader is not None:
            self._thread = threading.Thread(target=self._run, name="gpucomm-doctor-pcie", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


# ------------------------------------------------------------------------------------------------ the machine

class SystemProbe:
    """Everything the doctor reads from the machine or measures on it; tests substitute a fake.

    Parameters
    ----------
    root : str
        Where ``/proc`` and ``/sys`` are read from (``"/"``; a folder laid out alike in tests).
    topo_timeout_s : float
        Seconds to wait for ``nvidia-smi topo -m`` and ``lspci`` (either can hang on a GPU in a bad state).
    """

    def __init__(self, root: str = "/", topo_timeout_s: float = 20.0) -> None:
        self.root = root
        self.topo_timeout_s = topo_timeout_s

    # -- software and GPUs
    def torch_info(self) -> dict:
        """torch's version, its CUDA build, NCCL's version and the CUDA GPUs torch sees (names)."""
        import torch
        import torch.distributed

        cuda = torch.cuda.is_available()
        info = {"torch_version": torch.__version__, "torch_cuda": torch.version.cuda, "nccl_version": None,
                "cuda_gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if cuda else []}
        if cuda and torch.distributed.is_nccl_available():
            from gpucomm.measure.harness import nccl_version

            info["nccl_version"] = nccl_version()
        return info

    def nvml(self):
        """The ``pynvml`` module, or :class:`NvmlUnavailable` saying how to get it."""
        try:
            import pynvml
        except ImportError:
            raise NvmlUnavailable("NVML not available: the nvidia-ml-py package is not installed "
                                  "(pip install nvidia-ml-py, or gpucomm[bench])") from None
        return pynvml

    def peer_access(self, i: int, j: int) -> bool:
        """``torch.cuda.can_device_access_peer(i, j)``."""
        import torch

        return bool(torch.cuda.can_device_access_peer(i, j))

    def topology_text(self) -> str | None:
        """``nvidia-smi topo -m``, or None where nvidia-smi is missing or fails."""
        return local_topology_text(self.topo_timeout_s)

    def cpu_name(self) -> str:
        """The CPU's model name."""
        return cpu_model_name()

    # -- host settings
    def _path(self, rel: str) -> Path:
        return Path(self.root, rel.lstrip("/"))

    def read_text(self, rel: str) -> str | None:
        """The text of a file under :attr:`root` (``"proc/cmdline"``), or None where it cannot be read."""
        try:
            return self._path(rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def list_dir(self, rel: str) -> list[str] | None:
        """Entries of a folder under :attr:`root`, sorted, or None where it does not exist."""
        try:
            return sorted(os.listdir(self._path(rel)))
        except OSError:
            return None

    def lspci_text(self) -> tuple[str | None, str]:
        """``lspci -vvv`` (ACS control lines need root), or (None, why)."""
        exe = shutil.which("lspci")
        if exe is None:
            return None, "lspci not found (Debian/Ubuntu package pciutils)"
        try:
            out = subprocess.run([exe, "-vvv"], capture_output=True, text=True, timeout=self.topo_timeout_s)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"lspci -vvv failed: {type(exc).__name__}"
        if out.returncode != 0:
            return None, f"lspci -vvv exited with code {out.returncode}"
        return out.stdout, ""

    # -- measurements
    def copy_bandwidth(self, **kwargs):
        """:func:`gpucomm.measure.copy_bandwidth.measure_copy_bandwidth` (no table printed)."""
        from gpucomm.measure.copy_bandwidth import measure_copy_bandwidth

        return measure_copy_bandwidth(print_table=False, **kwargs)

    def sweep(self, **kwargs):
        """:func:`gpucomm.measure.run_sweep` (no table printed)."""
        from gpucomm.measure.launch import run_sweep

        return run_sweep(print_table=False, progress=False, **kwargs)


def read_iommu_state(probe: SystemProbe) -> dict:
    """The kernel's IOMMU state: command line, IOMMU devices, the type of each IOMMU group.

    Returns
    -------
    dict
        ``cmdline`` (``/proc/cmdline`` or None), ``iommu_devices`` (``/sys/class/iommu`` entries or
        None), ``group_types`` (``/sys/kernel/iommu_groups/*/type`` values counted: ``identity`` is
        passthrough, ``DMA``/``DMA-FQ`` translate every DMA address) or None where unreadable.
    """
    groups = probe.list_dir("sys/kernel/iommu_groups")
    types = None
    if groups is not None:
        types = Counter((probe.read_text(f"sys/kernel/iommu_groups/{g}/type") or "unknown").strip() for g in groups)
    return {"cmdline": (probe.read_text("proc/cmdline") or "").strip() or None,
            "iommu_devices": probe.list_dir("sys/class/iommu"), "group_types": dict(types) if types is not None else None}


def read_rdma_state(probe: SystemProbe) -> dict:
    """RDMA NICs (``/sys/class/infiniband``) and whether a GPUDirect RDMA module is loaded (``/sys/module``)."""
    modules = [m for m in ("nvidia_peermem", "nv_peer_mem") if probe.list_dir(f"sys/module/{m}") is not None]
    return {"devices": probe.list_dir("sys/class/infiniband") or [], "peer_modules": modules}


# ------------------------------------------------------------------------------------------------ the checks

def _gpu_key(name: str) -> str | None:
    return catalog_gpu_key(name)


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
            "nvml_reason": nvml_reason, "catalog_gpus": sorted({k for n in names if (k := _gpu_key(n))})}
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
        return _skip("topology", title, reason or "nvidia-smi not found: no topology")
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
        return _skip("pcie_link", title, reason or "no GPU")
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
        return _skip("nvlink", title, reason or "no GPU")
    with_links = [g for g in gpus if g.get("nvlink")]
    if not with_links:
        return _skip("nvlink", title, "these GPUs report no NVLink (PCIe only)")
    problems, rows, notes = [], [], []
    for g in with_links:
        links = g["nvlink"]
        key = _gpu_key(g["name"])
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

    key = _gpu_key(name)
    if key is None:
        return False
    spec = get_gpu(key)
    return bool(spec.nvlink_gen and spec.nvlink_gen >= 4 and not spec.nvlink_bridge)


_FABRIC_STATES = {0: "not supported", 1: "not started", 2: "in progress", 3: "completed"}
"""``NVML_GPU_FABRIC_STATE_*`` (``nvml.h``)."""


def check_nvls(gpus: Sequence[dict], log: NcclInfoLog | None = None, *, reason: str = "") -> Check:
    """NVLS (NVLink SHARP) on NVSwitch systems: the GPU's fabric state (Fabric Manager) and NCCL's own words.

    ``pathology`` when NVML says a GPU's fabric registration has not completed or failed (Fabric
    Manager not running or at another version than the driver), or when NCCL printed "NVLS
    multicast support is not available". Skipped on GPUs without NVLink 4 switches.
    """
    title = "NVLS (NVLink SHARP) and Fabric Manager"
    if not gpus:
        return _skip("nvls", title, reason or "no GPU")
    if not any(_nvswitch_gpu(g["name"]) for g in gpus):
        return _skip("nvls", title, f"{gpus[0]['name']}: NVLS needs NVLink 4+ GPUs behind NVSwitch (H100/H200/B200 SXM)")
    fabric = [(g["index"], g["fabric"]) for g in gpus if g.get("fabric")]
    unfinished = [(i, f) for i, f in fabric if f["state"] != 3 and f["state"] != 0]
    failed = [(i, f) for i, f in fabric if f["state"] == 3 and f["status"] != 0]
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
        return _skip("nvls", title, "NVML reports no fabric state and no NCCL log was read", **data)
    return Check("nvls", title, "ok", "; ".join(parts), "fabric state completed; NVLS available",
                 source=SRC_FABRIC_MANAGER, data=data)


_P2P_STATUS = {1: "the chipset does not support it", 2: "the GPU does not support it (consumer GPUs)",
               3: "the PCIe topology does not support it (e.g. across a host bridge, or ACS redirection)",
               4: "disabled by a driver registry key", 5: "not supported", 6: "unknown"}
"""``NVML_P2P_STATUS_*`` codes 1-6 (``nvml.h``) in words; 0 is OK."""


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
        return _skip("p2p", title, reason or "no GPU")
    n = len(matrix)
    if n < 2:
        return _skip("p2p", title, "one GPU: no pair to check", matrix=[list(r) for r in matrix])
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
        regkey = (nvml_status or {}).get(f"{i}-{j}") == 4
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
        return _skip("iommu", title, "/sys/kernel/iommu_groups and /sys/class/iommu cannot be read")
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
        return _skip("acs", title, reason or "lspci output not available")
    acs = parse_acs(lspci_text)
    if not acs["with_acs"]:
        why = ("lspci could not read the capabilities: run gpucomm doctor as root to check ACS" if acs["denied"]
               else "no device shows an ACSCtl line")
        return _skip("acs", title, why, **acs) if acs["denied"] else Check(
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
        return _skip("gdr", title, "no RDMA NIC (/sys/class/infiniband is empty): GPUDirect RDMA does not apply", **rdma)
    if not has_gpu:
        return _skip("gdr", title, f"RDMA NICs {', '.join(devices)} but no GPU", **rdma)
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


COPY_TOLERANCES = {"h2d_pinned": 0.70, "d2h_pinned": 0.70, "d2d": 0.60, "peer_0_to_1": 0.60, "peer_1_to_0": 0.60}
"""Fraction of the catalog rate under which a copy kind is ``below`` expected. Published pinned host copies
reach 80-90 % of the PCIe rate (55.4 of 63.0 GB/s on H200, the PCIe 5.0 entry's notes), device copies and
NVLink peer copies about 80-90 % of theirs; these tolerances leave room for a busy host and still catch a
link at half its rate (x8, one generation down). Pageable copies are staged through a pinned buffer and
depend on host memory, so they are shown, not judged."""


def check_copy_bandwidth(records: Sequence[dict], expected: dict[str, tuple[float | None, str]] | None = None) -> list[Check]:
    """One check per copy kind: its peak bandwidth against the catalog (:func:`expected_copy_bw_bytes_per_s`).

    ``below`` where the peak is under :data:`COPY_TOLERANCES` of the catalog rate; ``ok`` otherwise,
    and for kinds with nothing to compare (host memory copies, pageable copies, a GPU not in the catalog).
    """
    out = []
    kinds = list(dict.fromkeys(r["kind"] for r in records))
    for kind in kinds:
        rows = [r for r in records if r["kind"] == kind]
        best = max(rows, key=lambda r: r["bw_bytes_per_s"])
        bw, basis = (expected or {}).get(kind, (None, ""))
        measured = f"peak {to_gb_per_s(best['bw_bytes_per_s']):.3g} GB/s at {format_size(best['bytes'])}"
        data = {"kind": kind, "peak_bw_bytes_per_s": best["bw_bytes_per_s"], "peak_at_bytes": best["bytes"],
                "expected_bw_bytes_per_s": bw, "basis": basis, "tolerance": COPY_TOLERANCES.get(kind)}
        title = f"copy bandwidth: {kind}"
        if kind in HOST_KINDS:
            out.append(Check(f"copy:{kind}", title, "ok", measured, "no catalog value for host memory copies (CPU only)",
                             data=data))
            continue
        if not bw:
            out.append(Check(f"copy:{kind}", title, "ok", measured, basis or "no catalog value for this GPU", data=data))
            continue
        tol = COPY_TOLERANCES.get(kind)
        expected_text = f"{to_gb_per_s(bw):.3g} GB/s: {basis}" + (f"; below {tol:.0%} of it is flagged" if tol else
                                                                   " (shown, not judged)")
        data["fraction"] = best["bw_bytes_per_s"] / bw
        measured += f" ({data['fraction']:.0%} of the catalog)"
        if tol and best["bw_bytes_per_s"] < tol * bw:
            fix = ("a PCIe link trained down (see pcie_link: width and generation under load), a GPU under another "
                   "CPU socket than the process's memory (numactl --cpunodebind/--membind to the GPU's NUMA node), "
                   "or IOMMU translation (see iommu)") if kind in ("h2d_pinned", "d2h_pinned") else (
                   "NVLinks down (see nvlink) or no P2P between the GPUs (see p2p)" if kind in PEER_KINDS else
                   "GPU clocks held low (nvidia-smi -q -d PERFORMANCE: thermal or power limits) or other work on the GPU")
            out.append(Check(f"copy:{kind}", title, "below", measured, expected_text, fix,
                             "gpucomm.measure.copy_bandwidth.expected_copy_bw_bytes_per_s", data))
        else:
            out.append(Check(f"copy:{kind}", title, "ok", measured, expected_text,
                             source="gpucomm.measure.copy_bandwidth.expected_copy_bw_bytes_per_s", data=data))
    return out


def inter_socket_key(cpu_name: str) -> str | None:
    """The inter-socket link of :data:`gpucomm.model.hardware.INTER_SOCKET_LINKS` a CPU model name most likely has.

    A guess from the model number, as NCCL's ``ncclTopoGetInterCpuBw`` guesses from CPUID: AMD EPYC's
    last digit is its generation (1-2: Zen 1-2, 3-4: Zen 3-4, 5: Zen 5); Intel Xeon Scalable's second
    digit is its generation (1-3: Skylake to Ice Lake, 4: Sapphire Rapids, 5: Emerald Rapids); Xeon E5/E7
    are Broadwell or older. None for anything else.

    Examples
    --------
    >>> inter_socket_key("AMD EPYC 9654 96-Core Processor"), inter_socket_key("Intel(R) Xeon(R) Platinum 8480+")
    ('xgmi_zen4', 'upi_sapphire_rapids')
    >>> inter_socket_key("Intel(R) Xeon(R) CPU E5-2698 v4 @ 2.20GHz"), inter_socket_key("Apple M2") is None
    ('qpi_broadwell', True)
    """
    m = re.search(r"EPYC\s+\d{3}(\d)", cpu_name)
    if m:
        return {"1": "xgmi_zen2", "2": "xgmi_zen2", "3": "xgmi_zen4", "4": "xgmi_zen4", "5": "xgmi_zen5"}.get(m[1])
    m = re.search(r"Xeon.*?\b(?:Platinum|Gold|Silver|Bronze)\s+\d(\d)\d\d", cpu_name)
    if m:
        return {"1": "upi_skylake", "2": "upi_skylake", "3": "upi_skylake", "4": "upi_sapphire_rapids",
                "5": "upi_emerald_rapids"}.get(m[1])
    if re.search(r"Xeon.*\bE[57]-\d{4}", cpu_name):
        return "qpi_broadwell"
    return None


def machine_fabric(gpu_names: Sequence[str], topology: TopoMatrix | None, p2p: Sequence[Sequence[bool]] | None,
                   cpu_name: str):
    """The model's :class:`~gpucomm.model.fabric.Fabric` for this node's GPUs, or why there is none.

    NVLink everywhere (every GPU pair ``NV#`` with one count, or no topology on an NVLink SXM part):
    that NVLink generation through a switch; bridged cards: ``pairs`` over the GPUs' PCIe; otherwise
    the GPUs' PCIe generation (catalog), P2P as the access matrix says, and the CPU's inter-socket link
    where GPU pairs show ``SYS``.

    Returns
    -------
    (Fabric or None, str)
        The fabric and its label, or None and the reason (GPU not in the catalog, a mixed NVLink
        mesh such as DGX-1's hybrid cube-mesh, an unknown CPU across sockets...).
    """
    from gpucomm.model.fabric import make_fabric
    from gpucomm.model.hardware import get_gpu

    keys = {_gpu_key(n) for n in gpu_names}
    if not gpu_names or None in keys:
        return None, f"GPU {gpu_names[0] if gpu_names else '?'} is not in the catalog"
    if len(keys) > 1:
        return None, f"mixed GPUs {', '.join(sorted(keys))}: not modelled"
    spec = get_gpu(keys.pop())
    codes = set()
    if topology is not None:
        codes = set(topology.gpu_pairs())
    kinds = {describe_cell(c)[0].code for c in codes}
    sys_pairs = bool(kinds & {"SYS", "SOC"})
    try:
        if spec.nvlink_gen and (kinds == {"NV#"} and len(codes) == 1 or (topology is None and not spec.nvlink_bridge)):
            if spec.nvlink_bridge:
                fabric = make_fabric(f"nvlink{spec.nvlink_gen}", gpu=spec.key, topology="pairs",
                                     pcie_link=f"pcie{spec.pcie_gen or 4}")
            else:
                fabric = make_fabric(f"nvlink{spec.nvlink_gen}", gpu=spec.key)
        elif "NV#" in kinds:
            return None, f"a mixed NVLink topology ({', '.join(sorted(codes))}): not modelled"
        elif not spec.pcie_gen:
            return None, f"the catalog has no PCIe generation for {spec.name}"
        else:
            allowed = p2p is None or all(p2p[i][j] for i in range(len(p2p)) for j in range(len(p2p)) if i != j)
            socket_link = None
            if sys_pairs:
                socket_link = inter_socket_key(cpu_name)
                if socket_link is None:
                    return None, f"GPUs across sockets, and the CPU {cpu_name!r} is not one the model knows"
            fabric = make_fabric(f"pcie{spec.pcie_gen}", gpu=spec.key, p2p=bool(allowed), inter_socket=socket_link)
    except GpucommError as exc:
        return None, f"not modelled: {exc}"
    return fabric, fabric.label


def model_band(sizes: Sequence[int], num_ranks: int, fabric) -> list[dict]:
    """The model's all_reduce busbw at each size, with the band a healthy node falls in.

    The band is the project's acceptance figures for the model against published measurements
    (:data:`gpucomm.model.validation.TARGETS`): up to 64 KiB (latency-bound) within a factor of 2
    of the model's time; above, within 15 % of the model's busbw on NVLink, 40 % on PCIe.

    Returns
    -------
    list of dict
        Per size: ``msg_bytes``, ``time_s``, ``busbw_bytes_per_s`` (model), ``low``, ``high``
        (busbw bytes/s), ``algorithm``, ``protocol``.
    """
    from gpucomm.model.cost import collective_cost
    from gpucomm.model.validation import SMALL_MESSAGE_MAX_BYTES, TARGETS

    large = TARGETS["nvlink_large" if fabric.link.kind == "nvlink" else "pcie_large"][1]
    small = TARGETS["small_latency"][1]
    out = []
    for size in sizes:
        cost = collective_cost("all_reduce", size, num_ranks=num_ranks, fabric=fabric)
        busbw = cost.busbw_bytes_per_s
        lo, hi = (busbw / small, busbw * small) if size <= SMALL_MESSAGE_MAX_BYTES else (busbw * (1 - large),
                                                                                          busbw * (1 + large))
        out.append({"msg_bytes": size, "time_s": cost.time_s, "busbw_bytes_per_s": busbw, "low": lo, "high": hi,
                    "algorithm": cost.algorithm, "protocol": cost.protocol})
    return out


def check_all_reduce(records: Sequence[dict], *, backend: str, band: Sequence[dict] | None = None,
                     model_reason: str = "", num_wrong: int = 0) -> Check:
    """The all_reduce sweep: correct results, and the measured busbw against the model's band.

    ``pathology`` when any element came back wrong; ``below`` when the largest size's busbw is
    under the band (bandwidth) or the smallest size's time is more than the band allows
    (latency); ``ok`` otherwise. Without a band (gloo on the CPU, one GPU, a machine the model does
    not cover) only correctness is judged, and ``model_reason`` says why.
    """
    title = "all_reduce sweep against the model"
    if not records:
        return _skip("all_reduce", title, model_reason or "no sweep ran")
    rows = sorted(records, key=lambda r: r["msg_bytes"])
    first, last = rows[0], rows[-1]
    ranks = last["num_ranks"]
    measured = (f"{ranks} ranks, {backend}: busbw {to_gb_per_s(last['busbw_bytes_per_s']):.3g} GB/s at "
                f"{format_size(last['msg_bytes'])}, {format_time(first['time_s'])} at {format_size(first['msg_bytes'])}")
    data = {"backend": backend, "num_ranks": ranks, "num_wrong": num_wrong}
    if num_wrong:
        return Check("all_reduce", title, "pathology", measured + f"; {num_wrong} wrong element(s)",
                     "every element correct",
                     "wrong results point at the hardware or the driver: check 'nvidia-smi -q -d ECC' and dmesg for Xid "
                     "errors, and rerun with NCCL_PROTO=Simple and NCCL_ALGO=Ring to isolate a protocol",
                     "https://docs.nvidia.com/deploy/xid-errors/index.html", data)
    if not band:
        return Check("all_reduce", title, "ok", measured + "; every element correct",
                     model_reason or "no model for this machine", data=data)
    by_size = {b["msg_bytes"]: b for b in band}
    hi_band, lo_band = by_size.get(last["msg_bytes"]), by_size.get(first["msg_bytes"])
    data.update(model_busbw_bytes_per_s=hi_band and hi_band["busbw_bytes_per_s"])
    expected = (f"busbw {to_gb_per_s(hi_band['low']):.3g}-{to_gb_per_s(hi_band['high']):.3g} GB/s at "
                f"{format_size(last['msg_bytes'])} (model {to_gb_per_s(hi_band['busbw_bytes_per_s']):.3g}, "
                f"{hi_band['algorithm']}/{hi_band['protocol']}); at most {format_time(2 * lo_band['time_s'])} at "
                f"{format_size(first['msg_bytes'])}")
    problems = []
    if last["busbw_bytes_per_s"] < hi_band["low"]:
        problems.append(f"large-message busbw {last['busbw_bytes_per_s'] / hi_band['busbw_bytes_per_s']:.0%} of the model")
    if first["time_s"] > 2 * lo_band["time_s"]:
        problems.append(f"small-message time {first['time_s'] / lo_band['time_s']:.1f}x the model")
    if problems:
        return Check("all_reduce", title, "below", measured + ": " + "; ".join(problems), expected,
                     "read the NCCL log findings below (transports, channels, P2P), the P2P and link checks above, "
                     "and make sure nothing else runs on the GPUs (nvidia-smi)", SRC_VALIDATION, data)
    return Check("all_reduce", title, "ok", measured, expected, source=SRC_VALIDATION, data=data)


def check_nccl_log(log: NcclInfoLog | None, *, reason: str = "") -> list[Check]:
    """The sweep's ``NCCL_DEBUG=INFO`` log as read by :mod:`gpucomm.measure.logs.nccl_info`: a summary, then each finding.

    A finding of severity ``error`` or ``warning`` is a ``pathology`` with the reader's fix and
    source; ``info`` findings are ``ok``.
    """
    title = "NCCL's own report (NCCL_DEBUG=INFO during the sweep)"
    if log is None:
        return [_skip("nccl_log", title, reason or "no NCCL log")]
    transports = ", ".join(f"{k} x {v}" for k, v in log.transports.items()) or "no connection line"
    measured = (f"NCCL {log.nccl_version or ', '.join(log.nccl_versions) or '?'}, {log.num_ranks or '?'} rank(s), "
                f"{log.coll_channels or '?'} channel(s); transports: {transports}")
    out = [Check("nccl_log", title, worst_status([Check("x", "x", "pathology" if f.severity != "info" else "ok", "")
                                                  for f in log.findings]),
                 measured + f"; {len(log.findings)} finding(s)", "no error or warning finding",
                 data={"transports": log.transports, "findings": [f.code for f in log.findings]})]
    for f in log.findings:
        status = "ok" if f.severity == "info" else "pathology"
        out.append(Check(f"nccl:{f.code}", f"NCCL log: {f.title}", status, f"{f.evidence} (lines {', '.join(map(str, f.lines))})",
                         "", f.fix, f.source, {"severity": f.severity, "lines": list(f.lines)}))
    return out


# ------------------------------------------------------------------------------------------------ the run

@dataclass(frozen=True)
class DoctorPlan:
    """What :func:`run_doctor` measures: sizes and counts, by mode (:func:`plan_for`)."""

    copy_min_bytes: int
    copy_max_bytes: int
    copy_iters: int
    sweep_ranks: int | None  # None: one per GPU
    sweep_max_bytes: int
    sweep_iters: int


def plan_for(mode: str, *, quick: bool) -> DoctorPlan:
    """Sizes for ``mode`` (``gpu``/``cpu``): ``quick`` keeps the largest copy and message small.

    On GPUs the copies go to 256 MiB (PCIe and HBM copies reach their plateau by then) and the
    sweep to 256 MiB; on the CPU 64 MiB copies and a 4 MiB sweep on 2 gloo ranks keep the run
    under a minute on a laptop.

    Examples
    --------
    >>> plan_for("cpu", quick=True).sweep_max_bytes
    262144
    """
    if mode == "gpu":
        return DoctorPlan(MiB, (16 if quick else 256) * MiB, 10, None, (16 if quick else 256) * MiB, 10 if quick else 20)
    return DoctorPlan(MiB, (8 if quick else 64) * MiB, 5 if quick else 10, 2, (256 * 2**10) if quick else 4 * MiB,
                      5 if quick else 10)


NCCL_DEBUG_ENV = {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,ENV,GRAPH,NET,TUNING"}
"""What the sweep's ranks run with: INFO lines of setup, environment, topology search, network and tuning
choices (NCCL's env.rst: NCCL_DEBUG, NCCL_DEBUG_SUBSYS); NCCL_DEBUG_FILE sends them to files in the output folder."""


def run_doctor(report: DoctorReport, *, out_dir: str | os.PathLike, quick: bool = False, sweep: bool = True,
               probe: SystemProbe | None = None, progress: Callable[[int, int, str], None] | None = None) -> DoctorReport:
    """Run every check on this node, appending to ``report`` as each step finishes.

    Parameters
    ----------
    report : DoctorReport
        Filled in place (so a caller that catches Ctrl-C keeps the finished steps).
    out_dir : str or Path
        An existing, writable folder: the copy and sweep results (``copy.jsonl``, ``sweep.jsonl``) and
        NCCL's debug logs (``nccl_debug.<host>.<pid>.log``) are written there.
    quick : bool
        Smaller copies and sweep (:func:`plan_for`).
    sweep : bool
        Run the all_reduce sweep (and so read NCCL's log); False skips both, saying so.
    probe : SystemProbe or None
        What reads the machine (default: this machine).
    progress : callable or None
        ``progress(step, total, title)`` before each step (steps numbered from 1).

    Returns
    -------
    DoctorReport
        ``report``, complete.
    """
    probe = probe or SystemProbe()
    out_dir = Path(out_dir)
    steps: list[tuple[str, Callable[[], None]]] = []
    state: dict = {}

    def step(title: str):
        def wrap(fn):
            steps.append((title, fn))
            return fn
        return wrap

    @step("inventory: torch, NVML, versions")
    def _inventory() -> None:
        torch_info, torch_reason = None, ""
        try:
            torch_info = probe.torch_info()
        except ImportError:
            torch_reason = "torch is not installed: pip install torch"
        nvml_snap, nvml_reason, reader = None, "", None
        try:
            reader = NvmlReader(probe.nvml()).__enter__()
            nvml_snap = reader.snapshot()
        except NvmlUnavailable as exc:
            nvml_reason = str(exc)
        state.update(torch=torch_info, nvml=nvml_snap, nvml_reason=nvml_reason, reader=reader)
        report.mode = "gpu" if torch_info and torch_info.get("cuda_gpus") else "cpu"
        state["plan"] = plan_for(report.mode, quick=quick)
        cpu = probe.cpu_name()
        state["cpu"] = cpu
        check = check_inventory(torch_info, nvml_snap, cpu=cpu, host=report.host, torch_reason=torch_reason,
                                nvml_reason=nvml_reason)
        report.inventory = check.data
        report.add(check)

    @step("topology: nvidia-smi topo -m")
    def _topology() -> None:
        text = probe.topology_text()
        matrix, reason = None, "nvidia-smi not found or failed: no topology"
        if text is not None:
            try:
                matrix = parse_topo_matrix(text)
            except GpucommError as exc:
                reason = f"nvidia-smi topo -m could not be read: {exc}"
        state["topology"] = matrix
        if matrix is not None:
            report.topology = {"text": text, "matrix": matrix.as_dict(), "gpus": list(matrix.gpus)}
        report.add(check_topology(matrix, text, reason=reason))

    def nvml_gpus() -> tuple[list, str]:
        snap = state.get("nvml")
        if snap is None:
            why = state.get("nvml_reason") or "NVML not available"
            return [], why if report.mode == "gpu" else "no CUDA GPU"
        return snap["gpus"], "" if snap["gpus"] else "NVML lists no GPU"

    @step("NVLink and fabric state (NVML)")
    def _nvlink() -> None:
        gpus, reason = nvml_gpus()
        report.add(check_nvlink(gpus, reason=reason))

    @step("P2P access matrix")
    def _p2p() -> None:
        names = (state["torch"] or {}).get("cuda_gpus") or []
        matrix = None
        if names:
            matrix = [[i == j or probe.peer_access(i, j) for j in range(len(names))] for i in range(len(names))]
            report.p2p = {"matrix": matrix, "gpus": names}
        state["p2p"] = matrix
        reason = "no CUDA GPU visible to torch" if state["torch"] is not None else "torch is not installed"
        report.add(check_p2p(matrix, state.get("topology"), (state.get("nvml") or {}).get("p2p_status"), reason=reason))

    @step("host settings: IOMMU, ACS, RDMA")
    def _host() -> None:
        has_gpu = report.mode == "gpu" or bool(nvml_gpus()[0])
        report.add(check_iommu(read_iommu_state(probe), has_gpu=has_gpu))
        text, why = probe.lspci_text()
        report.add(check_acs(text, has_gpu=has_gpu, reason=why))
        state["rdma"] = read_rdma_state(probe)

    @step("copy bandwidth")
    def _copy() -> None:
        plan: DoctorPlan = state["plan"]
        sampler = PcieSampler(state.get("reader") if report.mode == "gpu" else None)
        with sampler:
            results = probe.copy_bandwidth(min_bytes=plan.copy_min_bytes, max_bytes=plan.copy_max_bytes,
                                           iters=plan.copy_iters, warmup_iters=2, blocks=3, out=out_dir / "copy.jsonl")
        expected = {}
        if report.mode == "gpu":
            key = _gpu_key(state["torch"]["cuda_gpus"][0])
            if key:
                expected = expected_copy_bw_bytes_per_s(key)
        records = [dict(r) for r in results]
        report.copy = {"records": records, "meta": dict(getattr(results, "meta", {}) or {}),
                       "expected": {k: v[0] for k, v in expected.items()}, "basis": {k: v[1] for k, v in expected.items()}}
        report.add(*check_copy_bandwidth(records, expected))
        gpus, reason = nvml_gpus()
        report.add(check_pcie_links(gpus, sampler.best or None, reason=reason))

    @step("all_reduce sweep")
    def _sweep() -> None:
        plan: DoctorPlan = state["plan"]
        gpus = (state["torch"] or {}).get("cuda_gpus") or []
        log = None
        if not sweep:
            report.add(_skip("all_reduce", "all_reduce sweep against the model", "--no-sweep: not run"))
            log_reason = "--no-sweep: no NCCL log"
        else:
            if gpus:
                for old in glob.glob(str(out_dir / "nccl_debug.*.log")):
                    os.remove(old)  # this run's logs only
                env = dict(NCCL_DEBUG_ENV, NCCL_DEBUG_FILE=str(out_dir / "nccl_debug.%h.%p.log"))
                results = probe.sweep(num_ranks=len(gpus), backend="nccl", max_bytes=plan.sweep_max_bytes,
                                      iters=plan.sweep_iters, warmup_iters=3, out=out_dir / "sweep.jsonl", env=env)
            else:
                results = probe.sweep(num_ranks=plan.sweep_ranks, backend="gloo", max_bytes=plan.sweep_max_bytes,
                                      iters=plan.sweep_iters, warmup_iters=2, out=out_dir / "sweep.jsonl")
            records = [dict(r) for r in results]
            backend = "nccl" if gpus else "gloo"
            band, fabric_label, model_reason = None, "", ""
            if not gpus:
                model_reason = "no model for gloo on CPU: correctness only"
            elif len(gpus) == 1:
                model_reason = "one GPU: all_reduce moves no data between GPUs (busbw 0), so there is no model to compare"
            else:
                fabric, fabric_label = machine_fabric(gpus, state.get("topology"), state.get("p2p"), state["cpu"])
                if fabric is None:
                    model_reason, fabric_label = f"no model for this machine: {fabric_label}", ""
                else:
                    band = model_band([r["msg_bytes"] for r in records], len(gpus), fabric)
            report.sweep = {"records": records, "meta": dict(getattr(results, "meta", {}) or {}), "band": band or [],
                            "model_label": fabric_label, "model_reason": model_reason, "backend": backend}
            num_wrong = sum(r.get("num_wrong") or 0 for r in records)
            report.add(check_all_reduce(records, backend=backend, band=band, model_reason=model_reason,
                                        num_wrong=num_wrong))
            log_reason = "gloo (CPU) writes no NCCL log"
            if gpus:
                files = sorted(glob.glob(str(out_dir / "nccl_debug.*.log")))
                report.nccl = {"files": [os.path.basename(f) for f in files]}
                text = "".join(Path(f).read_text(encoding="utf-8", errors="replace") for f in files)
                try:
                    log = parse_nccl_info_log(text)
                except GpucommError as exc:
                    log_reason = f"NCCL wrote no debug line ({exc})"
                if log is not None:
                    report.nccl.update(facts={k: v for k, v in log.as_dict().items()
                                              if k in ("nccl_version", "num_ranks", "transports", "coll_channels",
                                                       "nvls_channels", "tuning_summary", "env")},
                                       findings=[asdict(f) for f in log.findings])
        state["log"] = log
        report.add(*check_nccl_log(log, reason=log_reason))

    @step("NVLS and GPUDirect RDMA")
    def _late() -> None:
        gpus, reason = nvml_gpus()
        report.add(check_nvls(gpus, state.get("log"), reason=reason))
        has_gpu = report.mode == "gpu"
        report.add(check_gdr(state.get("rdma") or {}, has_gpu=has_gpu, log=state.get("log")))

    report.steps_total = len(steps)
    try:
        for i, (title, fn) in enumerate(steps, 1):
            if progress:
                progress(i, len(steps), title)
            try:
                fn()
            except GpucommError as exc:  # a measurement that could not run: say so, and go on with the rest
                report.add(Check(f"step:{fn.__name__.strip('_')}", f"{title} (stopped)", "pathology", " ".join(str(exc).split()),
                                 "the step to finish", "fix what the error names, then run gpucomm doctor again"))
            report.steps_done = i
    except KeyboardInterrupt:
        report.interrupted = True
        raise
    finally:
        if state.get("reader") is not None:
            state["reader"].__exit__(None, None, None)
    return report
