"""The model against published measurements: every case, predicted vs measured, and summary figures.

Each case of ``gpucomm/model/data/cases.csv`` (and each size of the bundled sweeps, :data:`SWEEPS`) is mapped
below to the model inputs that describe its hardware, with the NCCL release the source states
(the model follows that release's tuner, :mod:`gpucomm.model.nccl_tuner`). Cases whose numbers
were used to fit a parameter are marked ``in_sample``: they show the fit, not a prediction.
:func:`sweep_bands` gives the error per sweep and size band, :func:`targets` the project's
acceptance figures. Run ``gpucomm validate`` to print the tables.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, replace

from gpucomm.model.collectives import busbw_factor
from gpucomm.model.cost import band_transport, collective_cost
from gpucomm.model.fabric import Fabric, make_fabric, system_fabric
from gpucomm.model.hardware import get_inter_socket_link
from gpucomm.model.hardware.calibration import SIZE_BANDS, leave_one_out_folds, prediction_band, using
from gpucomm.model.hardware.gpus import bridge_link
from gpucomm.model.measurements import case, llama70b_tp4_4xa100, read_bundled_csv
from gpucomm.model.nccl_fabric import DEFAULT_NCCL_VERSION, comm_and_table, parse_nccl_version
from gpucomm.model.units import format_size, format_time

GROUPS = ("nvlink_large", "pcie_large", "network_large", "small_latency")
"""large-message busbw on NVLink/NVSwitch, on PCIe and across nodes (collectives other than the all_reduce
the network efficiency was fitted on), small-message time."""

SMALL_MESSAGE_MAX_BYTES = 64 * 2**10
"""Sweep sizes up to this (64 KiB) count as small messages, where latency dominates; larger ones form the
``sweep`` group."""

TARGETS = {"nvlink_large": ("error", 0.15), "pcie_large": ("error", 0.40), "small_latency": ("factor", 2.0)}
"""What a group's prediction should reach (the project's acceptance figures, and the band ``gpucomm doctor`` holds a
node to): |error| below 15 % for large-message busbw on NVLink/NVSwitch, below 40 % on PCIe, within a factor of 2
for small-message time."""

ISSUE_TARGETS = {"nvlink_large": ("error", 0.10), "pcie_large": ("error", 0.30), "small_latency": ("factor", 1.5)}
"""The model issue's tighter figures, which :func:`targets` reports: |error| below 10 % for large messages on
NVLink/NVSwitch, below 30 % on PCIe, within a factor of 1.5 for messages up to 64 KiB."""

BANDS = SIZE_BANDS
"""Size bands of :func:`sweep_bands` and :func:`accuracy`: (name, lowest bytes, bytes above the band), those of the
prediction band (:data:`~gpucomm.model.hardware.calibration.SIZE_BANDS`)."""

SWEEP_TARGETS = {"within": 0.15, "share_within": 0.70, "median": 0.09, "band_median": 0.12, "min_busbw_gb_per_s": 1.0}
"""The model issue's figures (its "done when") for the sweep points with busbw >= 1 GB/s, each predicted
leave-one-sweep-out (with the free parameters refitted without its sweep): at least 70 % of them within 15 %, median
|error| <= 9 %, each size band's median <= 12 %."""


def _socket_gb(key: str, *, nccl: bool = False) -> float:
    link = get_inter_socket_link(key)
    return (link.nccl_bw_bytes_per_s if nccl else link.bw_bytes_per_s) / 1e9


@dataclass(frozen=True)
class Case:
    """A published measurement and the model inputs that describe its system: a fabric, and an algorithm where the
    measurement fixed one (``auto``: NCCL's choice)."""

    case_id: str
    group: str
    metric: str  # "busbw" (GB/s) or "time" (us)
    label: str
    fabric: Fabric
    measured: float | None = None  # overrides the cases.csv value (e.g. a ring figure quoted in the notes)
    msg_bytes: int | None = None
    num_ranks: int | None = None
    in_sample: bool = False
    why: str = ""
    row: str | None = None  # the cases.csv id when several cases come from one row (default: case_id)
    collective: str = "all_reduce"
    algorithm: str = "auto"
    nccl_version: str | None = None  # overrides the release cases.csv states (None: that one, else the model's default)
    gpus_per_thread: int = 1  # GPUs one process drove (nccl-tests -g); see collective_cost
    protocol: str = "auto"  # a protocol the run forced (NCCL_PROTO)
    disturbed: str = ""  # non-empty: why the measurement does not show NCCL's behaviour; reported, left out of targets


_T123 = ("nccl-tests issue #123's rerun with one thread per GPU (-t 8, NCCL_ALGO=Ring, NCCL_MAX_NCHANNELS=1, the "
         "protocol forced; the poster's table, '~' values): NCCL's latency x the NVLink latency scale, without the host "
         "thread's floor")

CASES = (
    Case("C04", "nvlink_large", "busbw", "DGX A100, 4 GPUs, 8 GiB", make_fabric("nvlink3")),
    Case("C17", "nvlink_large", "busbw", "Azure ND A100 v4, 8 GPUs, 8 GiB", make_fabric("nvlink3"), msg_bytes=8 * 2**30),
    Case("C06", "nvlink_large", "busbw", "DGX H100, 4 GPUs, 8 GiB", make_fabric("nvlink4")),
    Case("C11", "nvlink_large", "busbw", "8x H100, ring, 4 GiB", make_fabric("nvlink4"), algorithm="ring", measured=367.5),
    *(Case(f"C11n{n}", "nvlink_large", "busbw", f"{n}x H100, NVLS, 2-4 GiB", make_fabric("nvlink4"), algorithm="nvls",
           measured=busbw, num_ranks=n, msg_bytes=4 * 2**30, row="C11", nccl_version="2.21.5",
           why="NCCL release not stated (NGC container); issue #1455 is from 2024, so the NVLS formula of 2.19-2.27 "
               "(2.21.5 here): 2.28 changed it, and 2.30.7's gives 299 GB/s for 5 GPUs")
      for n, busbw in ((5, 420), (6, 440), (7, 460))),
    Case("C10", "nvlink_large", "busbw", "8x H100, NVLS (maintainer's figure)", make_fabric("nvlink4"), msg_bytes=16 * 2**30,
         why="the NCCL maintainer's rounded figure (about 275 GB/s algbw)"),
    Case("C13", "nvlink_large", "busbw", "8x H200, NVLS, 16 GiB", make_fabric("nvlink4")),
    Case("C14", "nvlink_large", "busbw", "8x H200, NVLS, 8 GiB", make_fabric("nvlink4")),
    Case("C01", "nvlink_large", "busbw", "2x A40 with NVLink bridge, 8 GiB", make_fabric(bridge_link("a40")),
         why="NCCL plans the A40 bridge at 4 NVLinks x 12 GB/s (sm86, topo.h), 40 GB/s busbw; the bridge delivers more, "
             "as the model's transfer assumes (its rate x the default NVLink ring efficiency)"),
    Case("C28", "nvlink_large", "busbw", "2x RTX 2080 Ti bridge, all_gather, 128 MiB (NCCL 2.6)",
         make_fabric(bridge_link("rtx_2080_ti")), collective="all_gather",
         disturbed="a faulty bridge, shown but not counted in the targets: a month after this run the poster found the "
                   "bridge could not be plugged in fully, re-seated it and reported that everything then ran smoothly "
                   "(https://github.com/NVIDIA/nccl/issues/340, 2020-07-09; no rerun of the bandwidth was posted); "
                   "NCCL's maintainer read that thread as 'some NVLinks were detected but not all, as the connector was "
                   "only partially making contact' (issue #557). The run reached 41 % of the two links' rate, close to "
                   "what one of them would deliver"),
    Case("C08", "nvlink_large", "busbw", "2 nodes x 8 H100, 8x 200 Gb/s per node, 8 GiB",
         make_fabric("nvlink4", num_nodes=2, network="tcpxo_200g")),
    Case("C07", "pcie_large", "busbw", "DGX H100, 4 GPUs, P2P off, PCIe 5.0, 1 GiB", make_fabric("pcie5", p2p=False),
         why="24.0 GB/s at 1 GiB falling to 20.0 GB/s at 8 GiB on the same host"),
    Case("C39", "pcie_large", "time", "4 GPUs, P2P off, PCIe 4.0, 64 MiB (Llama-3-70B article)",
         make_fabric("pcie4", p2p=False),
         measured=llama70b_tp4_4xa100()["all_reduce_pcie4_no_p2p_s"].value * 1e6),
    Case("C05", "pcie_large", "busbw", "DGX A100, 4 GPUs, P2P off, PCIe 4.0, 8 GiB",
         make_fabric("pcie4", p2p=False, gpus_per_uplink=2),
         why="two GPUs share each PCIe switch's uplink to the host (DGX A100: 4 PCIe switches for 8 GPUs, "
             "https://docs.nvidia.com/dgx/dgxa100-user-guide/ [U])"),
    Case("C03", "pcie_large", "busbw", "A40 server, 2 GPUs, P2P off (NODE), 1 GiB", make_fabric("pcie4", p2p=False),
         why="host path of this server unknown (PCIe switches, memory copy rate); the model assumes a DGX-class host"),
    Case("C02", "pcie_large", "busbw", "A40 server, 4 GPUs over 2 sockets, P2P off, 1 GiB",
         make_fabric("pcie4", p2p=False, inter_socket="upi_skylake"),
         why=f"CPU not stated: a PCIe 4.0 host is Ice Lake or EPYC, and the slowest of their socket links in the catalog "
             f"(upi_skylake, {_socket_gb('upi_skylake'):.0f} GB/s) still allows far more than 1.4 GB/s: the staged copies "
             f"across sockets on this host are slow, which no catalog entry describes"),
    Case("P01", "pcie_large", "busbw", "8x RTX 5090, P2P (patched driver), dual EPYC Turin, 128 MiB",
         make_fabric("pcie5", inter_socket="xgmi_zen5"),
         why=f"the Turin socket link ({_socket_gb('xgmi_zen5'):.1f} GB/s measured each way; NCCL plans with "
             f"{_socket_gb('xgmi_zen5', nccl=True):.0f}) is faster than the PCIe P2P ring, so it does not limit it"),
    Case("P02", "pcie_large", "busbw", "7 GPUs (RTX PRO 6000, RTX 5090), P2P, dual EPYC Turin, 4 GiB",
         make_fabric("pcie5", inter_socket="xgmi_zen5"), why="as P01"),
    Case("P03", "pcie_large", "busbw", "2x RTX 2080 Ti, PIX, no P2P (GeForce), PCIe 3.0, 1 GiB",
         make_fabric("pcie3", p2p=False),
         why="one host-staged efficiency serves every host: this PCIe 3.0 host's staged copies deliver less of its "
             "link than the PCIe 4.0 and 5.0 hosts the fit also holds"),
    Case("P04", "pcie_large", "busbw", "8x RTX 5090, no P2P (stock driver), dual Xeon 8480+, 1-8 GiB",
         make_fabric("pcie5", p2p=False),
         why="P2P assumed off, as with any stock GeForce driver (https://github.com/aikitoria/open-gpu-kernel-modules "
             "patches it in); the issue does not say. NCCL's maintainer: on PCI systems the CPU and memory bandwidth "
             "decide, which the model does not describe"),
    Case("P05", "pcie_large", "busbw", "4x RTX 5090, no P2P (stock driver), same host as P04, 1-8 GiB",
         make_fabric("pcie5", p2p=False),
         why="the model gives the same staged rate for 4 and 8 GPUs; the host gives 4 GPUs more (fewer flows through "
             "host memory, or all 4 on one socket: the issue does not say which)"),
    Case("P06", "pcie_large", "busbw", "8x RTX PRO 6000, P2P, 3 PCIe 5.0 switches, one CPU", make_fabric("pcie5"),
         why="NCCL_MIN_NCHANNELS=8 on this host"),
    Case("P07", "pcie_large", "busbw", "8x RTX PRO 6000, P2P, 4 PCIe 5.0 switches, one CPU", make_fabric("pcie5")),
    Case("M01", "network_large", "busbw", "all_gather, 2 nodes x 8 B200, 8x 400 Gb/s RoCE, 8 GiB",
         make_fabric("nvlink5", num_nodes=2, network="eth_400g"), collective="all_gather"),
    Case("M02", "network_large", "busbw", "all_gather, 2 nodes x 8 H100, 8x 200 Gb/s TCPXO, 8 GiB",
         make_fabric("nvlink4", num_nodes=2, network="tcpxo_200g"), collective="all_gather",
         why="same platform as C08"),
    Case("M03", "network_large", "busbw", "all_gather, 2 nodes x 8 H100, 4x 200 Gb/s TCPX, 8 GiB",
         make_fabric("nvlink4", num_nodes=2, network="eth_200g", nics_per_node=4), collective="all_gather",
         why="GPUDirect-TCPX, the first generation of Google's TCP transport: it reaches about half of what the "
             "network efficiency gives on its successor TCPXO (C08, M02)"),
    Case("C22", "small_latency", "time", "DGX A100, 8 GPUs, ring, 8 B", make_fabric("nvlink3"), algorithm="ring",
         gpus_per_thread=8,
         why="one process drives the 8 GPUs (-g 8): the host thread's launch cost per GPU sets the time "
             "(calibration.HOST_LAUNCH_PER_GPU_S)"),
    *(Case(f"C22t-{proto}", "small_latency", "time", f"DGX A100, 8 GPUs, ring, {proto}, one thread per GPU, 8 B",
           make_fabric("nvlink3"), measured=measured, msg_bytes=8, num_ranks=8, row="C22", algorithm="ring",
           protocol=proto, why=_T123)
      for proto, measured in (("LL", 21.0), ("LL128", 32.0), ("Simple", 84.0))),
    Case("C41", "small_latency", "time", "4x V100 behind a PCIe switch, P2P, 4 KiB", make_fabric("pcie3"),
         why="NCCL's own PCI step latency (the NVLink latency scale is not applied to PCIe)"),
    Case("C26", "small_latency", "time", "8x RTX 4090, PCIe, no P2P, 8 B", make_fabric("pcie4", p2p=False),
         gpus_per_thread=8, why="one process drives the 8 GPUs (-g 8)"),
    Case("C29", "small_latency", "time", "2x DGX Spark over one 200 Gb/s RoCE link, 8 KiB",
         make_fabric("nvlink5", num_nodes=2, network="eth_200g"),
         why="one GPU per node over one RoCE link; RoCE's latency scale is shared with 2 nodes of 8x A100 (S14)"),
    Case("P01s", "small_latency", "time", "8x RTX 5090, PCIe 5.0 P2P, 8 B", make_fabric("pcie5"), measured=25.47,
         msg_bytes=8, gpus_per_thread=8,
         why="one process drives the 8 GPUs (-g 8); its host (EPYC Turin) launches faster than the DGX A100's the "
             "hosts that set the floor per GPU"),
    Case("C08s", "small_latency", "time", "2 nodes x 8 H100 over GPUDirect-TCPXO, 8 B",
         make_fabric("nvlink4", num_nodes=2, network="tcpxo_200g"), measured=123.5, msg_bytes=8, num_ranks=16,
         in_sample=True, why="TCPXO moves data through a host-side TCP stack: its per-step latency "
                             "(calibration.NET_PLUGIN_LATENCY_S) is read off this log's floor (8 B to 4 KiB, sweep "
                             "C08), outside the joint fit"),
)


@dataclass(frozen=True)
class Result:
    """One line of the validation table."""

    case_id: str
    group: str
    label: str
    metric: str
    measured: float
    predicted: float
    algorithm: str
    in_sample: bool
    why: str
    msg_bytes: int = 0
    sweep: str = ""
    """The bundled sweep the point belongs to (empty for a case)."""
    busbw_gb_per_s: float = 0.0
    """Measured busbw of the point, GB/s (the sweeps' filter: points below 1 GB/s are left out of the targets)."""
    counted: bool = True
    """False for a point of a disturbed run (:attr:`Sweep.disturbed`): shown, left out of summaries and targets."""
    fit_predicted: float = 0.0
    """The in-sample prediction: with the parameters of the joint fit over every sweep and case, this one included
    (:attr:`predicted` is the leave-one-out one, refitted without this point's sweep or case)."""
    unit: str = ""
    """What leave-one-out leaves out with this point: its sweep, or its case (cases of one ``cases.csv`` row together)."""
    transport: str = ""
    """``nvlink``, ``pcie`` or ``network`` (:func:`~gpucomm.model.cost.band_transport`)."""
    generation: str = ""
    """The GPUs' architecture (``Ampere``, ``Hopper``, ...), from the compute capability the model runs NCCL's tuner with."""

    @property
    def error(self) -> float:
        """Relative error of the prediction, (predicted - measured) / measured."""
        return self.predicted / self.measured - 1

    @property
    def fit_error(self) -> float:
        """Relative error of the in-sample prediction, (fit_predicted - measured) / measured."""
        return self.fit_predicted / self.measured - 1

    @property
    def time_ratio(self) -> float:
        """Measured / predicted (leave-one-out) time: for a busbw, predicted / measured busbw."""
        return self.predicted / self.measured if self.metric == "busbw" else self.measured / self.predicted

    @property
    def factor(self) -> float:
        """max(predicted/measured, measured/predicted): how many times off."""
        return max(self.predicted / self.measured, self.measured / self.predicted)


def _stated_version(text: str) -> str | None:
    """The first ``2.x.y`` in a cases.csv ``nccl_version`` cell, or None when it states none."""
    found = re.search(r"\b2\.\d+\.\d+\b", text or "")
    return found.group(0) if found else None


def _predict(c: Case) -> Result:
    row = case(c.row or c.case_id.rstrip("s"))
    n = c.num_ranks or int(row["n_gpus"])
    size = c.msg_bytes or int(row["bytes"])
    version = c.nccl_version or _stated_version(row.get("nccl_version", "")) or DEFAULT_NCCL_VERSION
    cost = collective_cost(c.collective, size, num_ranks=n, fabric=c.fabric, algorithm=c.algorithm,
                           protocol=c.protocol, nccl_version=version, gpus_per_thread=c.gpus_per_thread)
    if c.metric == "busbw":
        measured = c.measured if c.measured is not None else float(row["busbw_GBps"])
        predicted = cost.busbw_bytes_per_s / 1e9
    else:
        measured = c.measured if c.measured is not None else float(row["time_us"])
        predicted = cost.time_s * 1e6
    return Result(c.case_id, c.group, c.label, c.metric, measured, predicted, cost.algorithm, c.in_sample,
                  c.disturbed or c.why, msg_bytes=size, counted=not c.disturbed, fit_predicted=predicted,
                  unit=case_unit(c), transport=band_transport(c.fabric), generation=generation(c.fabric, n, version))


@dataclass(frozen=True)
class Sweep:
    """A bundled published sweep (every message size of one run) and the model inputs that describe its system.

    ``source`` is a bundled CSV (``bytes``, ``n_gpus``, ``busbw_GBps`` columns) or ``nccl_logs/<ID>.txt``, whose
    in-place rows :mod:`gpucomm.measure`'s parser wrote into :data:`LOG_SWEEPS_CSV` (the model layer cannot import
    the parser; a test checks the CSV against the logs). Sizes from ``min_bytes`` are compared. Every counted sweep is
    in the joint fit (:mod:`gpucomm.model.calibrate`); :func:`validate` predicts it with the parameters refitted
    without it.
    """

    sweep_id: str
    label: str
    source: str
    fabric: Fabric
    nccl_version: str | None  # the release the source states; None: the model's default (DEFAULT_NCCL_VERSION)
    collective: str = "all_reduce"
    algorithm: str = "auto"
    min_bytes: int = 0
    why: str = ""  # what is uncertain about the system or the model inputs
    disturbed: str = ""  # non-empty: why the run does not show NCCL's behaviour; reported, left out of the targets
    gpus_per_thread: int = 1  # GPUs one process drove (nccl-tests -g N: N; mpirun/torchrun: 1)
    launch: str = "eager"  # how calls were timed (cost.LAUNCH_MODES): back to back (eager) or one at a time (sync)


LOG_SWEEPS_CSV = "nccl_log_sweeps.csv"
"""In-place rows of the bundled nccl-tests logs that :data:`SWEEPS` names (``scripts/extract_log_sweeps.py``)."""

_SUPERBENCH_NCCL = "2.10.3"
"""NCCL release assumed for sweeps S08-S10: not printed; the fixture was committed on 2021-07-13, when 2.10.3
(tagged 2021-07-08) was the latest, so the run used it or an older one; for the model only "before 2.13" matters."""

_ALL_GATHER_SIZE = "nccl-tests' size column: the gathered buffer, ranks x each rank's part"

SWEEPS = (
    Sweep("Azure A100x8", "Azure ND A100 v4, 8x A100 SXM4 (NVSwitch), page-quoted busbw",
          "azure_a100_allreduce_busbw.csv", make_fabric("nvlink3"), "2.18.5", min_bytes=1024,
          why="the guide's script runs -g with every GPU of the VM: its small-message floor (about 5.4 us per GPU) is "
              "this host's, above the model's; NCCL 2.18.5. The page calls the column NVLS, but with NCCL_ALGO=NVLS "
              "that release has no algorithm on A100 (no NVLS channels, ring and tree disabled: 'no algorithm/protocol "
              "available', init.cc, tuning.cc and enqueue.cc at v2.18.5-1), so the quoted numbers come from another of "
              "the script's runs (Tree or Ring, not said); the model takes NCCL's own choice (ring)", gpus_per_thread=8),
    Sweep("H200x8", "8x H200 SXM (NVSwitch), torch.distributed all_reduce", "mleng_8xH200_torch_allreduce.csv",
          make_fabric("nvlink4"), "2.27.7", min_bytes=32 * 2**10,
          why="ml-engineering's all_reduce_bench.py of August 2026 times one call per trial: barrier, CUDA event, "
              "all_reduce, event, synchronize, so the GPU idles from the first event while the host dispatches the "
              "call through PyTorch and NCCL (the later README puts PyTorch's host overhead at 20-30 us per call); "
              "the model times it so (launch 'sync', PyTorch's host overhead per call as that README states it)",
          launch="sync"),
    Sweep("S16", "8x H200 SXM (NVSwitch), torch.distributed all_reduce back to back, NCCL 2.30.7",
          "mleng_8xH200_nccl2307_allreduce.csv", system_fabric("dgx_h200"), "2.30.7", min_bytes=32 * 2**10,
          why="ml-engineering's later timing queues up to 10 back-to-back calls behind ~2 ms of GPU work and divides "
              "the elapsed time by the calls, one process per GPU; the same node's nccl-tests run (bundled beside "
              "it) agrees within 2 %, 3-7 % lower from 1 to 16 MiB"),
    Sweep("S17", "8x B200 (AWS P6-B200) behind NVSwitch, torch.distributed all_reduce, NCCL 2.27.7",
          "mleng_8xB200_torch_allreduce.csv", system_fabric("dgx_b200"), "2.27.7", min_bytes=32 * 2**10,
          why="ml-engineering's all_reduce_bench.py of August 2026 times one call per trial after a barrier (launch "
              "'sync'); the DGX B200 entry of the catalog stands for the P6-B200's 8 B200 and NVSwitch; NVLS "
              "delivers NCCL's Blackwell share of the Hopper fit (nvlsEfficiency 0.74 / 0.85); from 512 MiB to 4 GiB "
              "the sweep sits at 690-740 GB/s and jumps to 839 at 8 GiB, which no single algorithm of the model does",
          launch="sync"),
    Sweep("S01", "2 nodes x 8 H100 SXM (HGX), 8x 400 Gb/s InfiniBand", "nccl_logs/S01.txt",
          system_fabric("dgx_h100", num_nodes=2), "2.26.2",
          why="Dell XE9680 (HGX H100, 8 ConnectX-7 NDR per node): the DGX H100 entry of the catalog, same GPUs, "
              "NVSwitch and NICs"),
    Sweep("S02", "4 nodes x 8 H100 SXM (VMs), 8x 400 Gb/s InfiniBand", "nccl_logs/S02.txt",
          system_fabric("dgx_h100", num_nodes=4), "2.26.2",
          why="virtual machines with a hand-written NCCL topology file (the poster's 2-node runs on them reach the "
              "bare-metal S01 figures); the catalog has no VM overhead"),
    Sweep("C08", "2 nodes x 8 H100 (GCP A3 Mega), 8x 200 Gb/s GPUDirect-TCPXO", "nccl_logs/C08.txt",
          make_fabric("nvlink4", num_nodes=2, network="tcpxo_200g"), None,
          why="NCCL release and environment not printed (mpirun -x ${HOST_VARS}); its floor (8 B to 4 KiB) sets the "
              "TCPXO latency per network step (calibration.NET_PLUGIN_LATENCY_S)",
          disturbed="shown but not counted in the targets: the run most likely used Google's TCPXO setup, whose "
                    "profile (https://cloud.google.com/hpc-toolkit/docs/machine-learning/a3-mega-enable-gpudirect-tcpxo) "
                    "allows only the Simple and LL128 protocols and loads Google's tuner plugin, which picks the "
                    "algorithm instead of NCCL's tuner: from 1 to 64 MiB the times are 2-3x those of the pair NCCL's "
                    "tuner picks (tree/LL128) and lie near other pairs NCCL has (tree/LL at 2-16 MiB, ring/Simple at "
                    "32-64 MiB), and busbw doubles from 16 to 32 MiB"),
    Sweep("S03", "all_gather, 2 nodes x 8 B200 (GCP A4), 8x 400 Gb/s RoCE (gIB)", "nccl_logs/S03.txt",
          system_fabric("dgx_b200", num_nodes=2, network="eth_400g"), "2.26.6", collective="all_gather",
          why="a Kubernetes DRA wiring demo, not a tuned run: it peaks at 263 GB/s where M01 (same GPUs and NICs) "
              f"reaches more; sizes are {_ALL_GATHER_SIZE}",
          disturbed="a disturbed run, shown but not counted in the targets: its times fall as sizes double (1.75 ms "
                    "at 2 MiB, 0.93 ms at 4 MiB; 1.48 ms at 16 MiB, 1.24 ms at 32 MiB) and stay near 0.25 ms from 1 "
                    "to 128 KiB, which no NCCL algorithm does on an idle network"),
    Sweep("S04", "Azure ND H200 v5, 8x H200 (NVSwitch), page-quoted busbw", "azure_nd_h200_v5_allreduce_busbw.csv",
          system_fabric("dgx_h200"), "2.20.5", algorithm="nvls", min_bytes=1024,
          why="the page quotes the NVLS column of the guide's script, which runs nccl-tests once per NCCL_ALGO (Tree, "
              "Ring, NVLS, NVLSTree) with -g 8: NVLS at every size, as the model is forced to", gpus_per_thread=8),
    Sweep("S18", "Azure ND H100 v5, 8x H100 (NVSwitch), page-quoted busbw", "azure_nd_h100_v5_allreduce_busbw.csv",
          system_fabric("dgx_h100"), "2.18.5", algorithm="nvls", min_bytes=1024,
          why="the same guide, script and page wording as S04 on H100 instead of H200 (NCCL 2.18.5): the NVLS column "
              "of nccl-tests run once per NCCL_ALGO with -g 8, so NVLS at every size, as the model is forced to; "
              "the same NVLS column as S04", gpus_per_thread=8),
    Sweep("S05", "Azure ND GB200 v6, 4x GB200 (one VM of an NVL72), ring, page-quoted busbw",
          "azure_nd_gb200_v6_allreduce_busbw.csv", system_fabric("gb200_nvl72"), "2.25.1", algorithm="ring",
          min_bytes=1024,
          why="ranks not stated: 4 assumed (one ND GB200 v6 VM); the page says the Ring algorithm, which the model "
              "is forced to", gpus_per_thread=4),
    Sweep("S06", "8x RTX 4090, PCIe 4.0, no P2P (stock driver), dual EPYC 7542", "nccl_logs/S06.txt",
          make_fabric("pcie4", p2p=False, inter_socket="xgmi_zen2"), None,
          why="NCCL release not stated (the model's default tuner); no PCIe switch, one GPU per root port and NUMA "
              "node (NPS4), so every staged copy crosses the host, half of them the socket link: the catalog's "
              "pcie_8x_rtx4090 is an Intel host, this one AMD Rome (xgmi_zen2). The host-memory path's rate on "
              "this host (memory, Infinity Fabric) is not measured", gpus_per_thread=8),
    Sweep("S07", "8x RTX 4090, PCIe 4.0, P2P (tinygrad driver), dual EPYC 7542", "nccl_logs/S07.txt",
          make_fabric("pcie4", inter_socket="xgmi_zen2"), None,
          why="NCCL release not stated; P2P through a patched driver (BAR1 P2P, IOMMU off), same host as S06: "
              "cudaMemcpyPeer 25 GB/s each way within a socket, 20-22 GB/s across, which the ring's cross-socket "
              "hops run at; the model takes one PCIe P2P efficiency for every host. One "
              "process drives the 8 GPUs (-g 8): below 64 KiB its times equal S06's although P2P cuts a hop from "
              "11.6 us to 1.2 us (the post's p2pBandwidthLatencyTest), so they are the host thread's 8 launches; "
              "one host floor per GPU serves every host, and this EPYC 7542's is above it", gpus_per_thread=8),
    Sweep("S08", "8x A100 SXM4 40GB (NVSwitch), all_reduce, one process (-g 8)", "nccl_logs/S08.txt",
          system_fabric("dgx_a100"), _SUPERBENCH_NCCL, min_bytes=8,
          why="Microsoft SuperBench's test fixture (committed 2021-07-13): NCCL release not stated, 2.10.3 assumed "
              "(the latest release then; any release before 2.13 enqueues per channel, which is what matters here); "
              "the machine type is not named (8x A100 SXM4 in one box: an HGX A100 "
              "board); one process drives the 8 GPUs (-g 8), whose launches, one work slot per channel in that "
              "release, set the time up to 1 MiB", gpus_per_thread=8),
    Sweep("S09", "8x A100 SXM4 40GB (NVSwitch), all_gather, one process (-g 8)", "nccl_logs/S09.txt",
          system_fabric("dgx_a100"), _SUPERBENCH_NCCL, collective="all_gather", min_bytes=8,
          why=f"the same run as S08 (NCCL 2.10.3 assumed, -g 8); sizes are {_ALL_GATHER_SIZE}", gpus_per_thread=8),
    Sweep("S10", "8x A100 SXM4 40GB (NVSwitch), reduce_scatter, one process (-g 8)", "nccl_logs/S10.txt",
          system_fabric("dgx_a100"), _SUPERBENCH_NCCL, collective="reduce_scatter", min_bytes=8,
          why="the same run as S08 (NCCL 2.10.3 assumed, -g 8); sizes are nccl-tests' size column: each rank's "
              "input buffer, ranks x its output", gpus_per_thread=8),
    Sweep("S19", "4x A100 SXM4 80GB on an HGX 4-GPU board (NVLink between every pair), all_reduce, one process (-g 4)",
          "nccl_logs/S19.txt", make_fabric("nvlink3", topology="mesh", mesh_size=4, gpu="a100_sxm4_80gb"), "2.12.12",
          min_bytes=8,
          why="a bare-metal Dell XE8545 of the University of Sheffield's Stanage cluster (not a cloud VM); NCCL release "
              "not printed: 2.12.12 assumed, the NCCL that EasyBuild's nccl-tests 2.13.6 for the same toolchain (GCC "
              "11.3.0, CUDA 11.7.0) depends on, so before 2.13 and one work slot per channel; one process drives the 4 "
              "GPUs (-g 4)", gpus_per_thread=4),
    Sweep("S11", "4 of 8x H100 SXM (NVSwitch), all_reduce, one process (-g 4)", "nccl_logs/S11.txt",
          system_fabric("dgx_h100"), "2.29.2", min_bytes=8,
          why="four GPUs of an HGX H100 (two on each socket) in a container; one process drives them (-g 4)", gpus_per_thread=4),
    Sweep("S12", "4 of 8x H100 SXM (NVSwitch), all_gather, one process (-g 4)", "nccl_logs/S12.txt",
          system_fabric("dgx_h100"), "2.29.2", collective="all_gather", min_bytes=8,
          why=f"the same box and command as S11; sizes are {_ALL_GATHER_SIZE}", gpus_per_thread=4),
    Sweep("S13", "4 of 8x H100 SXM (NVSwitch), reduce_scatter, one process (-g 4)", "nccl_logs/S13.txt",
          system_fabric("dgx_h100"), "2.29.2", collective="reduce_scatter", min_bytes=8,
          why="the same box and command as S11; sizes are nccl-tests' size column: each rank's input buffer", gpus_per_thread=4),
    Sweep("S14", "2 nodes x 8 A100 SXM4 40GB (OCI BM.GPU4.8), RoCE", "nccl_logs/S14.txt",
          system_fabric("dgx_a100", num_nodes=2, network="eth_200g"), None,
          why="OCI's 16 x 100 Gb/s RoCE ports per node are modelled as 8 x 200 Gb/s RoCE (the same 25 GB/s per GPU); "
              "NCCL release not printed (the job's image names 2.19.3; the model's default tuner is used); one GPU "
              "per process (mpirun)"),
    Sweep("S15", "8x H100 SXM (NVSwitch), all_to_all, 32 MiB-16 GiB", "nccl_logs/S15.txt",
          system_fabric("dgx_h100"), "2.29.2", collective="all_to_all",
          why="all_to_all is outside NCCL's tuner (a send and a receive per peer): the model follows NCCL's "
              "point-to-point rules (nccl_p2p: channels per peer, Simple above 16 KiB per channel) with the ring's "
              "delivered NVLink bandwidth, which all_to_all does not quite reach (348 GB/s busbw at 16 GiB); one GPU "
              "per process"),
)
"""Every bundled sweep compared size by size. Every counted sweep and case is in the one joint fit of the free
parameters (:mod:`gpucomm.model.calibrate`); :func:`validate` predicts each with the parameters refitted without it
(leave-one-sweep-out), so every figure it reports is out of sample, and keeps the in-sample prediction beside it (the
8x H200 NCCL 2.30.7 sweep's sizes below 1 MiB also chose the LL overlap, a choice of form without a parameter).
``gpus_per_thread`` is what the run's header says (nccl-tests ``nGpus``) or, for a page without one, the command that
produced it (the Azure guide runs ``-g`` with every GPU of the VM); ``launch`` is how the calls were timed."""


def log_sweep_names() -> list[str]:
    """Names of the bundled nccl-tests logs :data:`SWEEPS` reads, in order.

    Returns
    -------
    list of str
        Log names (``"S01"``), the files ``nccl_logs/<name>.txt`` whose in-place rows :data:`LOG_SWEEPS_CSV` holds.

    Examples
    --------
    >>> log_sweep_names()[0]
    'S01'
    """
    return [s.source.split("/")[1].removesuffix(".txt") for s in SWEEPS if s.source.startswith("nccl_logs/")]


def small_message_floor_us(log: str) -> float:
    """The small-message floor of a bundled nccl-tests log: its median time from 64 B to 16 KiB.

    In a single-process run (nccl-tests ``-g N``) this is the host thread's time, the same for every collective of
    the run (:data:`~gpucomm.model.hardware.calibration.HOST_LAUNCH_PER_GPU_S`).

    Parameters
    ----------
    log : str
        A log of :data:`LOG_SWEEPS_CSV` (``"S06"``; :func:`log_sweep_names`).

    Returns
    -------
    float
        Microseconds, the in-place times as printed.

    Raises
    ------
    statistics.StatisticsError
        If the log has no row in that range.

    Examples
    --------
    >>> round(small_message_floor_us("S08") / small_message_floor_us("S09"), 2)  # all_reduce vs all_gather, one run
    1.03
    """
    return statistics.median(float(r["time_us"]) for r in read_bundled_csv(LOG_SWEEPS_CSV)[0]
                             if r["log"] == log and 64 <= int(r["bytes"]) <= 16384)


def host_cost_per_channel_s(sweep_id: str) -> float:
    """How much a single-process sweep's time per GPU driven grows per channel NCCL runs, from 32 KiB to 1 MiB.

    The least-squares slope of (time / ``gpus_per_thread``) against the channels NCCL runs at each size
    (:func:`~gpucomm.model.nccl_tuner.channels_and_threads` through :func:`~gpucomm.model.cost.collective_cost`, the
    sweep's NCCL release): where the host thread sets the time, its cost per channel
    (:data:`~gpucomm.model.hardware.calibration.HOST_LAUNCH_PER_CHANNEL_S` is this on sweep S09).

    Parameters
    ----------
    sweep_id : str
        A sweep of :data:`SWEEPS` (``"S09"``).

    Returns
    -------
    float
        Seconds per channel per GPU driven.

    Raises
    ------
    StopIteration
        If no sweep has that id.
    statistics.StatisticsError
        If the sweep runs one channel count over the whole range.

    Examples
    --------
    >>> round(host_cost_per_channel_s("S09") * 1e6, 2)
    0.21
    """
    s = next(s for s in SWEEPS if s.sweep_id == sweep_id)
    channels, per_gpu_s = [], []
    for r in _sweep_rows(s):
        size, n = int(r["bytes"]), int(r["n_gpus"])
        if 32 * 2**10 <= size <= 2**20:
            c = collective_cost(s.collective, size, num_ranks=n, fabric=s.fabric, algorithm=s.algorithm,
                                nccl_version=s.nccl_version or DEFAULT_NCCL_VERSION)
            channels.append(c.num_channels)
            per_gpu_s.append(_measured_us(s, r, size, n) * 1e-6 / s.gpus_per_thread)
    return statistics.linear_regression(channels, per_gpu_s).slope


def _measured_us(s: Sweep, r: dict, size: int, n: int) -> float:
    """A sweep row's time: as printed in a log; from its busbw through nccl-tests' factor on a page quoting busbw."""
    return float(r["time_us"]) if r.get("time_us") else size * busbw_factor(s.collective, n) / (
        float(r["busbw_GBps"]) * 1e9) * 1e6


def _sweep_rows(s: Sweep) -> list[dict]:
    if s.source.startswith("nccl_logs/"):
        log = s.source.split("/")[1].removesuffix(".txt")
        return [r for r in read_bundled_csv(LOG_SWEEPS_CSV)[0] if r["log"] == log]
    return read_bundled_csv(s.source)[0]


def _sweep(s: Sweep) -> list[Result]:
    """Every size of a bundled sweep from ``min_bytes``, predicted vs measured (time per operation)."""
    out = []
    for r in _sweep_rows(s):
        size, n, busbw = int(r["bytes"]), int(r["n_gpus"]), float(r["busbw_GBps"])
        if size < s.min_bytes:
            continue
        cost = collective_cost(s.collective, size, num_ranks=n, fabric=s.fabric, algorithm=s.algorithm,
                               nccl_version=s.nccl_version or DEFAULT_NCCL_VERSION, gpus_per_thread=s.gpus_per_thread,
                               launch=s.launch)
        measured_us = _measured_us(s, r, size, n)
        group = "small_latency" if size <= SMALL_MESSAGE_MAX_BYTES else "sweep"
        label = r.get("size_label") or r.get("payload") or format_size(size).replace(" ", "")
        out.append(Result(f"{s.sweep_id} {label}", group, f"{s.sweep_id} sweep", "time", measured_us,
                          cost.time_s * 1e6, cost.algorithm, False, s.disturbed or s.why,
                          msg_bytes=size, sweep=s.sweep_id, busbw_gb_per_s=busbw, counted=not s.disturbed,
                          fit_predicted=cost.time_s * 1e6, unit=s.sweep_id, transport=band_transport(s.fabric),
                          generation=generation(s.fabric, n, s.nccl_version or DEFAULT_NCCL_VERSION)))
    return out


def format_value(x: float, metric: str) -> str:
    """A measured or predicted value as ``gpucomm validate`` and the validation chapter print it.

    Parameters
    ----------
    x : float
        busbw in GB/s (``metric == "busbw"``) or a time in microseconds (the unit of the bundled data).
    metric : {"busbw", "time"}
        :attr:`Result.metric`.

    Returns
    -------
    str
        ``"226 GB/s"`` or a duration (:func:`gpucomm.model.units.format_time`).

    Examples
    --------
    >>> format_value(226.04, "busbw")
    '226 GB/s'
    """
    return f"{x:.3g} GB/s" if metric == "busbw" else format_time(x * 1e-6)


def format_error(error: float) -> str:
    """A relative error in whole percent with its sign: ``+12 %``, ``-3 %``, and ``0 %`` (never ``-0 %``).

    Parameters
    ----------
    error : float
        ``predicted / measured - 1`` (:attr:`Result.error`).

    Returns
    -------
    str

    Examples
    --------
    >>> format_error(0.123), format_error(-0.004)
    ('+12 %', '0 %')
    """
    pct = round(100 * error)
    return f"{pct:+d} %" if pct else "0 %"


def case_unit(c: Case) -> str:
    """What leave-one-out leaves out with a case: its ``cases.csv`` row (``C22`` for C22 and C22t-LL; ``C08`` for C08s).

    Parameters
    ----------
    c : Case
        A case of :data:`CASES`.

    Returns
    -------
    str
        The row id.

    Examples
    --------
    >>> case_unit(next(c for c in CASES if c.case_id == "C22t-LL"))
    'C22'
    """
    return c.row or c.case_id.rstrip("s")


_ARCH_BY_CC = ((100, "Blackwell"), (90, "Hopper"), (89, "Ada"), (80, "Ampere"), (75, "Turing"), (70, "Volta"), (0, "older"))
"""Architecture of the first compute capability at or above each threshold (https://developer.nvidia.com/cuda-gpus)."""


def generation(fabric: Fabric, num_ranks: int, nccl_version) -> str:
    """The GPUs' architecture as the model sees them: from the compute capability of NCCL's communicator.

    Parameters
    ----------
    fabric : Fabric
        How the GPUs connect (its GPU, or the generation that shipped with its link).
    num_ranks : int
        GPUs of the collective.
    nccl_version : str or tuple
        The release followed.

    Returns
    -------
    str
        ``Volta``, ``Turing``, ``Ampere``, ``Ada``, ``Hopper`` or ``Blackwell``.

    Examples
    --------
    >>> generation(make_fabric("nvlink3"), 8, "2.30.7")
    'Ampere'
    """
    cc = comm_and_table(fabric, num_ranks, parse_nccl_version(nccl_version))[0].compute_capability
    return next(name for low, name in _ARCH_BY_CC if cc >= low)


def units() -> dict[str, list]:
    """What leave-one-out leaves out, one at a time: each sweep of :data:`SWEEPS`, each case row of :data:`CASES`.

    Returns
    -------
    dict
        Unit name -> its :class:`Sweep` or :class:`Case` objects, cases first, in declaration order.
    """
    out: dict[str, list] = {}
    for c in CASES:
        out.setdefault(case_unit(c), []).append(c)
    for s in SWEEPS:
        out.setdefault(s.sweep_id, []).append(s)
    return out


def unit_results(members: list) -> list[Result]:
    """The results of one unit's cases or sweep with the current calibration (in-sample: ``predicted`` ==
    ``fit_predicted``).

    Parameters
    ----------
    members : list
        :class:`Case` and :class:`Sweep` objects (a value of :func:`units`).

    Returns
    -------
    list of Result
    """
    out = []
    for m in members:
        out += [_predict(m)] if isinstance(m, Case) else _sweep(m)
    return out


def fit_points(results: list[Result]) -> list[Result]:
    """The results the joint fit and the band count: every counted case but those in sample (their value is set by a
    rule of their own, outside the joint fit: C08s), and every counted sweep point whose measured busbw reaches
    ``SWEEP_TARGETS["min_busbw_gb_per_s"]``.

    Parameters
    ----------
    results : list of Result

    Returns
    -------
    list of Result
    """
    floor = SWEEP_TARGETS["min_busbw_gb_per_s"]
    return [r for r in results if r.counted and (r.busbw_gb_per_s >= floor if r.sweep else not r.in_sample)]


def validate() -> list[Result]:
    """Every case and sweep point, predicted out of sample (leave-one-out) and in sample, vs measured.

    Returns
    -------
    list of Result
        Cases of :data:`CASES` first, then every size of each sweep of :data:`SWEEPS` (time per size). ``predicted``
        is the leave-one-out prediction: with the free parameters refitted without the point's sweep or case (the
        committed calibration file's ``folds``, which ``tests/model/test_calibration.py`` recomputes);
        ``fit_predicted`` the in-sample one, with the joint fit's parameters.

    Raises
    ------
    GpucommError
        Only if the bundled data disagree with the code: a case id missing from ``cases.csv``, or
        model inputs :func:`gpucomm.model.cost.collective_cost` rejects (``tests/model/test_validation.py`` runs it).
    """
    folds = leave_one_out_folds()
    results = []
    for name, members in units().items():
        fitted = unit_results(members)
        fold = folds.get(name)
        if fold:
            with using(fold):
                held_out = unit_results(members)
            fitted = [replace(f, predicted=h.predicted) for f, h in zip(fitted, held_out)]
        results += fitted
    return results


@dataclass(frozen=True)
class Summary:
    """Median and worst error of one group, out-of-sample cases only."""

    group: str
    count: int
    median_abs_error: float
    worst_abs_error: float
    median_factor: float
    worst_factor: float
    within_target: int | None = None  # cases meeting the group's TARGETS entry (None: no target)

    @property
    def target(self) -> str:
        """The group's target in words, e.g. ``"|error| < 40 %"``; empty without one."""
        if self.group not in TARGETS:
            return ""
        kind, value = TARGETS[self.group]
        return f"|error| < {100 * value:.0f} %" if kind == "error" else f"within {value:g}x"


def _meets(r: Result, target: tuple[str, float]) -> bool:
    kind, value = target
    return abs(r.error) < value if kind == "error" else r.factor < value


def summarize(results: list[Result]) -> list[Summary]:
    """Summary figures per group (``GROUPS`` plus ``sweep``), excluding in-sample cases.

    ``within_target`` counts the cases that meet the group's entry of :data:`TARGETS`.

    Parameters
    ----------
    results : list of Result
        As :func:`validate` returns them.

    Returns
    -------
    list of Summary
        One per group, in the order of :data:`GROUPS` then ``sweep``; groups without out-of-sample
        results are left out. Errors are fractions (0.15 = 15 %), factors ratios >= 1.
    """
    out = []
    for group in (*GROUPS, "sweep"):
        rs = [r for r in results if r.group == group and not r.in_sample and r.counted]
        if not rs:
            continue
        errs = [abs(r.error) for r in rs]
        facs = [r.factor for r in rs]
        within = sum(_meets(r, TARGETS[group]) for r in rs) if group in TARGETS else None
        out.append(Summary(group, len(rs), statistics.median(errs), max(errs), statistics.median(facs), max(facs), within))
    return out


def _band(size: int) -> str:
    return next(name for name, low, high in BANDS if low <= size < high)


@dataclass(frozen=True)
class BandSummary:
    """Error of one sweep in one size band, in- or out-of-sample."""

    sweep: str
    band: str
    in_sample: bool
    count: int
    """Points with busbw >= ``SWEEP_TARGETS["min_busbw_gb_per_s"]``."""
    median_abs_error: float
    worst_abs_error: float
    share_within: float
    """Share of the points within ``SWEEP_TARGETS["within"]`` (15 %)."""


def sweep_bands(results: list[Result]) -> list[BandSummary]:
    """Per bundled sweep, per size band (:data:`BANDS`), in- and out-of-sample apart: the error of the points
    whose measured busbw reaches 1 GB/s.

    Parameters
    ----------
    results : list of Result
        As :func:`validate` returns them.

    Returns
    -------
    list of BandSummary
        In sweep order, then band order, out-of-sample before in-sample; empty cells left out.
    """
    floor = SWEEP_TARGETS["min_busbw_gb_per_s"]
    out = []
    for sweep in dict.fromkeys(r.sweep for r in results if r.sweep):
        for band, _, _ in BANDS:
            for in_sample in (False, True):
                rs = [r for r in results if r.sweep == sweep and _band(r.msg_bytes) == band
                      and r.in_sample == in_sample and r.busbw_gb_per_s >= floor]
                if rs:
                    errs = [abs(r.error) for r in rs]
                    out.append(BandSummary(sweep, band, in_sample, len(rs), statistics.median(errs), max(errs),
                                           sum(e <= SWEEP_TARGETS["within"] for e in errs) / len(errs)))
    return out


@dataclass(frozen=True)
class Target:
    """One acceptance figure of the model issue, what the model reaches, and whether that meets it."""

    name: str
    reached: str
    met: bool


def nvlink_sweep_ids() -> set[str]:
    """The sweeps of :data:`SWEEPS` whose GPUs talk over NVLink/NVSwitch inside a node (the PCIe hosts left out: their
    host-memory staging and socket paths vary from host to host, which the catalog does not describe).

    Returns
    -------
    set of str
        Sweep ids.
    """
    return {s.sweep_id for s in SWEEPS if s.fabric.link.kind == "nvlink"}


def targets(results: list[Result], *, sweeps: set[str] | None = None) -> list[Target]:
    """The model issue's acceptance figures against :func:`validate`'s results, out-of-sample points only.

    Parameters
    ----------
    results : list of Result
        As :func:`validate` returns them.
    sweeps : set of str, optional
        Only these sweeps count in the sweep figures (e.g. :func:`nvlink_sweep_ids`); default every sweep.

    Returns
    -------
    list of Target
        Sweep points with busbw >= 1 GB/s (share within 15 %, median, each band's median), large messages on
        NVLink/NVSwitch (10 %) and PCIe (30 %), small messages (<= 64 KiB) within a factor of 1.5.
    """
    floor = SWEEP_TARGETS["min_busbw_gb_per_s"]
    pts = [r for r in results if r.sweep and not r.in_sample and r.counted and r.busbw_gb_per_s >= floor
           and (sweeps is None or r.sweep in sweeps)]
    errs = [abs(r.error) for r in pts]
    out = []
    if errs:
        share = sum(e <= SWEEP_TARGETS["within"] for e in errs) / len(errs)
        med = statistics.median(errs)
        out.append(Target(f"sweep points within 15 % (>= {SWEEP_TARGETS['share_within']:.0%})",
                          f"{share:.0%} of {len(errs)}", share >= SWEEP_TARGETS["share_within"]))
        out.append(Target(f"sweep median |error| (<= {SWEEP_TARGETS['median']:.0%})", f"{med:.1%}",
                          med <= SWEEP_TARGETS["median"]))
        for band, _, _ in BANDS:
            b = [abs(r.error) for r in pts if _band(r.msg_bytes) == band]
            if b:
                m = statistics.median(b)
                out.append(Target(f"sweep median |error| {band} (<= {SWEEP_TARGETS['band_median']:.0%})",
                                  f"{m:.1%} ({len(b)} points)", m <= SWEEP_TARGETS["band_median"]))
    for group in ("nvlink_large", "pcie_large", "small_latency"):
        rs = [r for r in results if r.group == group and not r.in_sample and not r.sweep and r.counted]
        if group == "small_latency":
            rs += [r for r in results if r.sweep and not r.in_sample and r.counted and r.msg_bytes <= SMALL_MESSAGE_MAX_BYTES
                   and (sweeps is None or r.sweep in sweeps)]
        if rs:
            ok = sum(_meets(r, ISSUE_TARGETS[group]) for r in rs)
            kind, value = ISSUE_TARGETS[group]
            what = f"|error| < {value:.0%}" if kind == "error" else f"within {value:g}x"
            out.append(Target(f"{group}: every case {what}", f"{ok} of {len(rs)}", ok == len(rs)))
    return out


@dataclass(frozen=True)
class Accuracy:
    """Leave-one-out and in-sample accuracy of one group of sweep points (busbw >= 1 GB/s)."""

    by: str
    """``all``, ``size band``, ``transport`` or ``generation``."""
    group: str
    points: int
    within_15: float
    """Share of the points whose leave-one-out prediction is within 15 %."""
    median_abs_error: float
    """Median |error| of the leave-one-out predictions."""
    in_sample_within_15: float
    in_sample_median_abs_error: float


def accuracy(results: list[Result]) -> list[Accuracy]:
    """The accuracy ``gpucomm validate`` prints: every counted sweep point with busbw >= 1 GB/s, predicted with the
    parameters refitted without its sweep (leave-one-sweep-out), overall and by size band, transport and GPU
    generation; the in-sample figures beside them.

    Parameters
    ----------
    results : list of Result
        As :func:`validate` returns them.

    Returns
    -------
    list of Accuracy
        ``all`` first, then each size band, transport and generation that has points.
    """
    pts = [r for r in fit_points(results) if r.sweep]
    groups = [("all", "every sweep point", pts)]
    groups += [("size band", band, [r for r in pts if _band(r.msg_bytes) == band]) for band, _, _ in BANDS]
    groups += [("transport", t, [r for r in pts if r.transport == t]) for t in dict.fromkeys(r.transport for r in pts)]
    groups += [("generation", g, [r for r in pts if r.generation == g]) for g in dict.fromkeys(r.generation for r in pts)]
    out = []
    for by, name, rs in groups:
        if rs:
            loo, fit = [abs(r.error) for r in rs], [abs(r.fit_error) for r in rs]
            out.append(Accuracy(by, name, len(rs), sum(e <= 0.15 for e in loo) / len(rs), statistics.median(loo),
                                sum(e <= 0.15 for e in fit) / len(rs), statistics.median(fit)))
    return out


def band_coverage(results: list[Result]) -> float:
    """Share of the leave-one-out fit points (:func:`fit_points`) whose measured time lies in the model's 10-90 %
    band (:func:`~gpucomm.model.hardware.calibration.prediction_band` of their transport and size).

    Parameters
    ----------
    results : list of Result
        As :func:`validate` returns them.

    Returns
    -------
    float
        A fraction; the band is built to hold about 0.8.
    """
    pts = fit_points(results)
    inside = 0
    for r in pts:
        low, high = prediction_band(r.transport, r.msg_bytes)
        inside += low <= r.time_ratio <= high
    return inside / len(pts)
