"""What the doctor reads from the machine: NVML (:class:`NvmlReader`, :class:`PcieSampler`), torch, ``nvidia-smi``,
``/proc`` and ``/sys``, ``lspci``, and the measurements it runs (:class:`SystemProbe`).

Everything else in :mod:`gpucomm.measure.doctor` is a pure function of what these return, so tests
substitute a fake probe and a fake NVML module. Importing this module imports neither torch nor pynvml.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import threading
from collections import Counter
from pathlib import Path

from gpucomm.measure.harness import cpu_model_name
from gpucomm.measure.topology_examples import local_topology_text

__all__ = ["NvmlUnavailable", "NvmlReader", "PcieSampler", "SystemProbe", "read_iommu_state", "read_rdma_state",
           "SRC_NVML"]

SRC_NVML = "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html"
"""NVIDIA's NVML API reference: the device queries :class:`NvmlReader` calls, and what they return."""


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
