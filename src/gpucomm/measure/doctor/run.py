"""The doctor's run: what it measures (:class:`DoctorPlan`), and its steps in order (:func:`run_doctor`).

Each step is one function of a :class:`_Run` (what the steps read so far, and the report they fill):
it reads through the probe, calls the checks, and appends to the report, so that what finished
survives a Ctrl-C. The model's part (the fabric of this node, and the band a healthy all_reduce falls
in) is :mod:`gpucomm.model.machine`'s; :func:`node_fabric` hands it what the doctor read.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gpucomm import GpucommError
from gpucomm.measure.copy_bandwidth import catalog_gpu_key, expected_copy_bw_bytes_per_s
from gpucomm.measure.doctor.checks import (
    check_acs,
    check_gdr,
    check_inventory,
    check_iommu,
    check_nvlink,
    check_nvls,
    check_p2p,
    check_pcie_links,
    check_topology,
)
from gpucomm.measure.doctor.measured_checks import check_all_reduce, check_copy_bandwidth, check_nccl_log
from gpucomm.measure.doctor.probe import NvmlReader, NvmlUnavailable, PcieSampler, SystemProbe, read_iommu_state, read_rdma_state
from gpucomm.measure.doctor.report import Check, DoctorReport, skip
from gpucomm.measure.logs.nccl_info import NcclInfoLog, parse_nccl_info_log
from gpucomm.measure.topology import TopoMatrix, describe_cell, parse_topo_matrix
from gpucomm.model.machine import machine_fabric, model_band
from gpucomm.model.units import MiB

__all__ = ["DoctorPlan", "plan_for", "run_doctor", "node_fabric", "NCCL_DEBUG_ENV"]


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

_NCCL_LOG_FACTS = ("nccl_version", "num_ranks", "transports", "coll_channels", "nvls_channels", "tuning_summary", "env")
"""The log reader's facts the report keeps (:meth:`gpucomm.measure.logs.nccl_info.NcclInfoLog.as_dict`)."""


def node_fabric(gpu_names: Sequence[str], topology: TopoMatrix | None, p2p: Sequence[Sequence[bool]] | None,
                cpu_name: str):
    """The model's fabric for this node from what the doctor read, or why there is none.

    Maps the GPUs' names to catalog keys (:func:`gpucomm.measure.copy_bandwidth.catalog_gpu_key`)
    and the topology's GPU pairs to their legend codes, then asks
    :func:`gpucomm.model.machine.machine_fabric`.

    Parameters
    ----------
    gpu_names : sequence of str
        The CUDA devices' names (``torch.cuda.get_device_name``).
    topology : TopoMatrix or None
        ``nvidia-smi topo -m`` parsed; None where it could not be read.
    p2p : sequence of sequence of bool, or None
        The P2P access matrix; None where unknown.
    cpu_name : str
        The CPU's model name.

    Returns
    -------
    (Fabric or None, str)
        The fabric and its label, or None and the reason (a GPU not in the catalog, or
        :func:`~gpucomm.model.machine.machine_fabric`'s reason).
    """
    keys = [catalog_gpu_key(n) for n in gpu_names]
    if not gpu_names or None in keys:
        return None, f"GPU {gpu_names[0] if gpu_names else '?'} is not in the catalog"
    pair_kinds = None if topology is None else {code: describe_cell(code)[0].code for code in topology.gpu_pairs()}
    return machine_fabric(keys, pair_kinds, p2p, cpu_name)


@dataclass
class _Run:
    """One run of the doctor: its options, what the steps read so far, and the report they fill."""

    report: DoctorReport
    probe: SystemProbe
    out_dir: Path
    quick: bool
    sweep: bool
    torch: dict | None = None
    nvml: dict | None = None
    nvml_reason: str = ""
    reader: NvmlReader | None = None
    cpu: str = ""
    topology: TopoMatrix | None = None
    p2p: list | None = None
    rdma: dict = field(default_factory=dict)
    log: NcclInfoLog | None = None

    @property
    def plan(self) -> DoctorPlan:
        """The sizes for the mode the inventory found."""
        return plan_for(self.report.mode, quick=self.quick)

    @property
    def cuda_gpus(self) -> list[str]:
        """Names of the CUDA GPUs torch sees (empty without torch or GPUs)."""
        return (self.torch or {}).get("cuda_gpus") or []

    def nvml_gpus(self) -> tuple[list, str]:
        """NVML's GPUs (``NvmlReader.snapshot()["gpus"]``), and why there are none."""
        if self.nvml is None:
            why = self.nvml_reason or "NVML not available"
            return [], why if self.report.mode == "gpu" else "no CUDA GPU"
        return self.nvml["gpus"], "" if self.nvml["gpus"] else "NVML lists no GPU"


def _inventory(run: _Run) -> None:
    torch_reason = ""
    try:
        run.torch = run.probe.torch_info()
    except ImportError:
        torch_reason = "torch is not installed: pip install torch"
    try:
        run.reader = NvmlReader(run.probe.nvml()).__enter__()  # left open for the PCIe sampler; closed by run_doctor
        run.nvml = run.reader.snapshot()
    except NvmlUnavailable as exc:
        run.nvml_reason = str(exc)
    run.report.mode = "gpu" if run.cuda_gpus else "cpu"
    run.cpu = run.probe.cpu_name()
    check = check_inventory(run.torch, run.nvml, cpu=run.cpu, host=run.report.host, torch_reason=torch_reason,
                            nvml_reason=run.nvml_reason)
    run.report.inventory = check.data
    run.report.add(check)


def _topology(run: _Run) -> None:
    text = run.probe.topology_text()
    reason = "nvidia-smi not found or failed: no topology"
    if text is not None:
        try:
            run.topology = parse_topo_matrix(text)
        except GpucommError as exc:
            reason = f"nvidia-smi topo -m could not be read: {exc}"
    if run.topology is not None:
        run.report.topology = {"text": text, "matrix": run.topology.as_dict(), "gpus": list(run.topology.gpus)}
    run.report.add(check_topology(run.topology, text, reason=reason))


def _nvlink(run: _Run) -> None:
    gpus, reason = run.nvml_gpus()
    run.report.add(check_nvlink(gpus, reason=reason))


def _p2p(run: _Run) -> None:
    names = run.cuda_gpus
    if names:
        run.p2p = [[i == j or run.probe.peer_access(i, j) for j in range(len(names))] for i in range(len(names))]
        run.report.p2p = {"matrix": run.p2p, "gpus": names}
    reason = "no CUDA GPU visible to torch" if run.torch is not None else "torch is not installed"
    run.report.add(check_p2p(run.p2p, run.topology, (run.nvml or {}).get("p2p_status"), reason=reason))


def _host(run: _Run) -> None:
    has_gpu = run.report.mode == "gpu" or bool(run.nvml_gpus()[0])
    run.report.add(check_iommu(read_iommu_state(run.probe), has_gpu=has_gpu))
    text, why = run.probe.lspci_text()
    run.report.add(check_acs(text, has_gpu=has_gpu, reason=why))
    run.rdma = read_rdma_state(run.probe)


def _copy(run: _Run) -> None:
    plan, report = run.plan, run.report
    with PcieSampler(run.reader if report.mode == "gpu" else None) as sampler:
        results = run.probe.copy_bandwidth(min_bytes=plan.copy_min_bytes, max_bytes=plan.copy_max_bytes,
                                           iters=plan.copy_iters, warmup_iters=2, blocks=3,
                                           out=run.out_dir / "copy.jsonl")
    expected = {}
    if report.mode == "gpu" and (key := catalog_gpu_key(run.cuda_gpus[0])):
        expected = expected_copy_bw_bytes_per_s(key)
    records = [dict(r) for r in results]
    report.copy = {"records": records, "meta": dict(getattr(results, "meta", {}) or {}),
                   "expected": {k: v[0] for k, v in expected.items()}, "basis": {k: v[1] for k, v in expected.items()}}
    report.add(*check_copy_bandwidth(records, expected))
    gpus, reason = run.nvml_gpus()
    report.add(check_pcie_links(gpus, sampler.best or None, reason=reason))


def _run_sweep(run: _Run):
    """The all_reduce sweep: NCCL on every GPU (its debug log in the output folder), else gloo on the CPU."""
    plan, gpus = run.plan, run.cuda_gpus
    if not gpus:
        return run.probe.sweep(num_ranks=plan.sweep_ranks, backend="gloo", max_bytes=plan.sweep_max_bytes,
                               iters=plan.sweep_iters, warmup_iters=2, out=run.out_dir / "sweep.jsonl")
    for old in glob.glob(str(run.out_dir / "nccl_debug.*.log")):
        os.remove(old)  # this run's logs only
    env = dict(NCCL_DEBUG_ENV, NCCL_DEBUG_FILE=str(run.out_dir / "nccl_debug.%h.%p.log"))
    return run.probe.sweep(num_ranks=len(gpus), backend="nccl", max_bytes=plan.sweep_max_bytes,
                           iters=plan.sweep_iters, warmup_iters=3, out=run.out_dir / "sweep.jsonl", env=env)


def _sweep_band(run: _Run, records: list[dict]) -> tuple[list[dict] | None, str, str]:
    """The model's band at the swept sizes, the fabric's label, or why there is no model to compare."""
    gpus = run.cuda_gpus
    if not gpus:
        return None, "", "no model for gloo on CPU: correctness only"
    if len(gpus) == 1:
        return None, "", "one GPU: all_reduce moves no data between GPUs (busbw 0), so there is no model to compare"
    fabric, label = node_fabric(gpus, run.topology, run.p2p, run.cpu)
    if fabric is None:
        return None, "", f"no model for this machine: {label}"
    return model_band([r["msg_bytes"] for r in records], len(gpus), fabric), label, ""


def _read_nccl_log(run: _Run) -> str:
    """Read the sweep's NCCL debug logs into ``run.log`` and the report; return why there is none ("" if read)."""
    if not run.cuda_gpus:
        return "gloo (CPU) writes no NCCL log"
    files = sorted(glob.glob(str(run.out_dir / "nccl_debug.*.log")))
    run.report.nccl = {"files": [os.path.basename(f) for f in files]}
    text = "".join(Path(f).read_text(encoding="utf-8", errors="replace") for f in files)
    try:
        run.log = parse_nccl_info_log(text)
    except GpucommError as exc:
        return f"NCCL wrote no debug line ({exc})"
    run.report.nccl.update(facts={k: v for k, v in run.log.as_dict().items() if k in _NCCL_LOG_FACTS},
                           findings=[asdict(f) for f in run.log.findings])
    return ""


def _sweep(run: _Run) -> None:
    if not run.sweep:
        run.report.add(skip("all_reduce", "all_reduce sweep against the model", "--no-sweep: not run"))
        run.report.add(*check_nccl_log(None, reason="--no-sweep: no NCCL log"))
        return
    results = _run_sweep(run)
    records = [dict(r) for r in results]
    backend = "nccl" if run.cuda_gpus else "gloo"
    band, fabric_label, model_reason = _sweep_band(run, records)
    run.report.sweep = {"records": records, "meta": dict(getattr(results, "meta", {}) or {}), "band": band or [],
                        "model_label": fabric_label, "model_reason": model_reason, "backend": backend}
    num_wrong = sum(r.get("num_wrong") or 0 for r in records)
    run.report.add(check_all_reduce(records, backend=backend, band=band, model_reason=model_reason, num_wrong=num_wrong))
    log_reason = _read_nccl_log(run)
    run.report.add(*check_nccl_log(run.log, reason=log_reason))


def _late(run: _Run) -> None:
    gpus, reason = run.nvml_gpus()
    run.report.add(check_nvls(gpus, run.log, reason=reason))
    run.report.add(check_gdr(run.rdma, has_gpu=run.report.mode == "gpu", log=run.log))


_STEPS: tuple[tuple[str, Callable[[_Run], None]], ...] = (
    ("inventory: torch, NVML, versions", _inventory),
    ("topology: nvidia-smi topo -m", _topology),
    ("NVLink and fabric state (NVML)", _nvlink),
    ("P2P access matrix", _p2p),
    ("host settings: IOMMU, ACS, RDMA", _host),
    ("copy bandwidth", _copy),
    ("all_reduce sweep", _sweep),
    ("NVLS and GPUDirect RDMA", _late),
)
"""The steps in order, each with the title progress shows; a step that fails is reported as ``step:<name>``."""


def _stopped(title: str, fn: Callable, exc: GpucommError) -> Check:
    """The check a step that could not finish leaves: what stopped it, and that the rest went on."""
    return Check(f"step:{fn.__name__.strip('_')}", f"{title} (stopped)", "pathology", " ".join(str(exc).split()),
                 "the step to finish", "fix what the error names, then run gpucomm doctor again")


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

    Raises
    ------
    KeyboardInterrupt
        Passed on after marking ``report.interrupted`` (the finished steps stay in ``report``).
    """
    run = _Run(report, probe or SystemProbe(), Path(out_dir), quick, sweep)
    report.steps_total = len(_STEPS)
    try:
        for i, (title, fn) in enumerate(_STEPS, 1):
            if progress:
                progress(i, len(_STEPS), title)
            try:
                fn(run)
            except GpucommError as exc:  # a measurement that could not run: say so, and go on with the rest
                report.add(_stopped(title, fn, exc))
            report.steps_done = i
    except KeyboardInterrupt:
        report.interrupted = True
        raise
    finally:
        if run.reader is not None:
            run.reader.__exit__(None, None, None)
    return report
