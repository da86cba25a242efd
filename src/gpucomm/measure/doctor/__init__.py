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

Where things are
----------------
:mod:`~gpucomm.measure.doctor.report` (:class:`Check`, :class:`DoctorReport`, :func:`worst_status`),
:mod:`~gpucomm.measure.doctor.probe` (:class:`SystemProbe`, :class:`NvmlReader`, :class:`PcieSampler`: what
reads the machine), :mod:`~gpucomm.measure.doctor.checks` (the checks of the node itself),
:mod:`~gpucomm.measure.doctor.measured_checks` (copies, the sweep, NCCL's log) and
:mod:`~gpucomm.measure.doctor.run` (:class:`DoctorPlan`, :func:`run_doctor`). The model's part, this node's
fabric and the band a healthy all_reduce falls in, is :mod:`gpucomm.model.machine`
(:func:`~gpucomm.model.machine.machine_fabric`, :func:`~gpucomm.model.machine.model_band`,
:func:`~gpucomm.model.machine.inter_socket_key`). Every public name is importable from this package.

Importing this package imports neither torch nor pynvml.
"""

from gpucomm.measure.doctor.checks import (
    SRC_ACS,
    SRC_FABRIC_MANAGER,
    SRC_PEERMEM,
    SRC_TOPO,
    check_acs,
    check_gdr,
    check_inventory,
    check_iommu,
    check_nvlink,
    check_nvls,
    check_p2p,
    check_pcie_links,
    check_topology,
    parse_acs,
)
from gpucomm.measure.doctor.measured_checks import (
    COPY_TOLERANCES,
    LATENCY_FACTOR,
    SRC_VALIDATION,
    check_all_reduce,
    check_copy_bandwidth,
    check_nccl_log,
)
from gpucomm.measure.doctor.probe import (
    SRC_NVML,
    NvmlReader,
    NvmlUnavailable,
    PcieSampler,
    SystemProbe,
    read_iommu_state,
    read_rdma_state,
)
from gpucomm.measure.doctor.report import CHECK_ORDER, SCHEMA_VERSION, STATUSES, Check, DoctorReport, worst_status
from gpucomm.measure.doctor.run import NCCL_DEBUG_ENV, DoctorPlan, node_fabric, plan_for, run_doctor
from gpucomm.model.machine import inter_socket_key, machine_fabric, model_band

__all__ = ["STATUSES", "CHECK_ORDER", "Check", "DoctorReport", "SystemProbe", "NvmlUnavailable", "NvmlReader",
           "PcieSampler", "DoctorPlan", "plan_for", "run_doctor", "worst_status", "node_fabric", "NCCL_DEBUG_ENV",
           "check_inventory", "check_topology", "check_pcie_links", "check_nvlink", "check_nvls", "check_p2p",
           "check_iommu", "check_acs", "check_gdr", "check_copy_bandwidth", "check_all_reduce", "check_nccl_log",
           "parse_acs", "read_iommu_state", "read_rdma_state", "inter_socket_key", "machine_fabric", "model_band",
           "COPY_TOLERANCES", "LATENCY_FACTOR", "SCHEMA_VERSION", "SRC_ACS", "SRC_FABRIC_MANAGER", "SRC_NVML",
           "SRC_PEERMEM", "SRC_TOPO", "SRC_VALIDATION"]
