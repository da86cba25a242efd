"""Effective-vs-nominal factors and protocol latencies, each a named parameter with its source.

Nominal link rates (:mod:`gpucomm.model.hardware.links`) are upper bounds. What NCCL reaches
is lower (packet headers, flow control, synchronisation) and depends on message size.
The model uses the parameters below; each one says where it comes from: a constant NCCL uses (cited), a published
figure (cited), a value derived from those, or a **fit**. Every fitted value is read from
``gpucomm/model/data/calibration.json``, which one deterministic script writes (``scripts/calibrate.py``, the fit in
:mod:`gpucomm.model.calibrate`): all the free parameters of :data:`FREE_PARAMETERS` fitted jointly, over every
bundled sweep and case at once (robust relative errors, physical bounds), with its provenance, its leave-one-out
refits and the prediction band they give (:func:`prediction_band`). ``tests/model/test_calibration.py`` recomputes the
fit, so the values cannot drift from their data.
"""

from __future__ import annotations

import json
import math
from contextlib import contextmanager
from dataclasses import dataclass, replace
from importlib import resources

CALIBRATION_FILE = "calibration.json"
"""The fitted values, their provenance, leave-one-out refits and band, in ``gpucomm/model/data``."""


def read_calibration() -> dict:
    """The committed calibration file, parsed.

    Returns
    -------
    dict
        ``parameters`` (name -> ``value``, ``bounds``, ``unit``), ``alpha_beta`` (the alpha-beta algorithms' own
        fits), ``floor_fits`` (values read off a sweep's measured floor), ``folds`` (unit -> the values refitted
        without it), ``band`` (transport -> size band -> the 10 % and 90 % quantiles of log(measured / predicted) time),
        the provenance and the errors.
    """
    return json.loads(resources.files("gpucomm.model").joinpath("data", CALIBRATION_FILE).read_text())


_CALIBRATION = read_calibration()


def _fit(name: str) -> float:
    """A fitted value of the committed calibration (free parameter, alpha-beta fit or floor fit)."""
    entry = (_CALIBRATION["parameters"].get(name) or _CALIBRATION["alpha_beta"].get(name)
             or _CALIBRATION["floor_fits"][name])
    return float(entry["value"])


_JOINT = ("Fitted jointly with every other free parameter (model/calibrate.py, data/calibration.json) over all the "
          "bundled sweeps and cases: ")


@dataclass(frozen=True)
class Parameter:
    """A model parameter: value, unit and the source it comes from."""

    name: str
    value: float
    unit: str
    source: str
    notes: str


RING_EFFICIENCY = {
    "nvlink3": Parameter(
        "ring_efficiency_nvlink3", _fit("ring_efficiency_nvlink3"), "fraction of nominal per-direction bandwidth",
        "https://github.com/eugenesiow/LLM-Insights/blob/5aa5513ac34d0da5d0214e6939d06f77de00ab48/infrastructure/hardware/README.md",
        _JOINT + "the large-message ring busbw of every NVLink 3 (A100) point sets it: DGX A100, 4 GPUs, 8 GiB, 234.72 "
        "GB/s of 300 (case C04), Azure ND A100 v4 (C17, sweep 'Azure A100x8'), the 8x A100 sweeps S08-S10, the 4x A100 "
        "board S19 and the 2-node RoCE sweep S14 inside the node."),
    "nvlink4": Parameter(
        "ring_efficiency_nvlink4", _fit("ring_efficiency_nvlink4"), "fraction of nominal per-direction bandwidth",
        "https://github.com/NVIDIA/nccl-tests/issues/212",
        _JOINT + "NCCL maintainer: 450 GB/s line rate, ~370 GB/s effective with ~20% protocol overhead. Set by the "
        "NVLink 4 ring points: DGX H100, 4 GPUs, 8 GiB (C06), 8x H100 ring (C11), 8x H200 with NVLS off, the 4x H100 "
        "sweeps S11-S13 and the H100 multi-node sweeps inside the node."),
}
"""Large-message ring busbw / nominal link bandwidth, per NVLink generation with measurements."""

DEFAULT_NVLINK_RING_EFFICIENCY = Parameter(
    "ring_efficiency_nvlink_default",
    (RING_EFFICIENCY["nvlink3"].value + RING_EFFICIENCY["nvlink4"].value) / 2, "fraction of nominal per-direction bandwidth",
    "https://github.com/NVIDIA/nccl-tests/issues/212",
    "Derived, not a free parameter: for NVLink generations without a fitted value, the mean of the NVLink 3 and 4 "
    "fits (recomputed whenever they change); the NCCL maintainer's '~20% protocol overhead' gives about the same.")

PCIE_P2P_EFFICIENCY = Parameter(
    "pcie_p2p_efficiency", _fit("pcie_p2p_efficiency"), "fraction of nominal per-direction bandwidth",
    "https://github.com/voipmonitor/rtx6kpro/blob/070506ff96a20039f71a067adcb250e8fe3414f8/hardware/pcie-bandwidth.md",
    _JOINT + "the PCIe P2P ring points set it: 8x RTX PRO 6000 behind PCIe 5.0 switches (cases P06, P07, "
    "NCCL_MIN_NCHANNELS=8), the dual-EPYC Turin RTX 5090 hosts (P01, P02) and the 8x RTX 4090 with a patched "
    "driver (sweep S07). It combines PCIe packet overhead (a host-to-device copy over PCIe 5.0 x16 reaches 55.4 GB/s "
    "= 88 %, https://github.com/stas00/ml-engineering/blob/master/network/README.md) with NCCL's ring protocol cost, "
    "as RING_EFFICIENCY does for NVLink.")

HOST_STAGED_EFFICIENCY = Parameter(
    "host_staged_efficiency", _fit("host_staged_efficiency"), "fraction of nominal PCIe per-direction bandwidth",
    "https://github.com/eugenesiow/LLM-Insights/blob/5aa5513ac34d0da5d0214e6939d06f77de00ab48/infrastructure/hardware/README.md",
    _JOINT + "with P2P disabled or unsupported, NCCL stages every transfer through host memory (SHM transport): the "
    "sender copies into a host buffer, the receiver copies out. Set by every host-staged point: DGX H100 with "
    "NCCL_P2P_DISABLE=1 (C07: 24.0 GB/s at 1 GiB of 63), DGX A100 (C05), the Llama-3-70B article's PCIe 4.0 run (C39), "
    "the RTX 2080 Ti/5090 hosts (P03-P05) and the 8x RTX 4090 sweep S06. Host-memory paths vary by host (memory, "
    "socket links): the robust fit lets the A40 servers' slow staged copies (C02, C03) count little.")

LL_BASE_LATENCY_S = Parameter(
    "ll_base_latency_s", _fit("ll_base_latency_s"), "s",
    "https://github.com/NVIDIA/nccl-tests/issues/123",
    "An alpha-beta fit, outside the joint fit (no bundled point runs an alpha-beta algorithm), recomputed by the same "
    "script: the intercept of a least-squares line through DGX A100 ring all_reduce latency at 8 B vs number of ring "
    "steps 2(n-1), NCCL_ALGO=Ring, one channel (n = 2..8, 7 points: 10 to 33.7 us). Covers launch and the fixed part "
    "of the protocol. Used only by the algorithms NCCL does not run (one_shot, two_shot, rhd, hierarchical).")

LL_STEP_LATENCY_S = Parameter(
    "ll_step_latency_s", _fit("ll_step_latency_s"), "s per ring step",
    "https://github.com/NVIDIA/nccl-tests/issues/123",
    "An alpha-beta fit, as LL_BASE_LATENCY_S: the slope of the same 7-point line, ~2 us per ring step. That run drove "
    "every GPU from one thread (-g), so most of the slope is the host's launches (HOST_LAUNCH_PER_GPU_S); the poster's "
    "rerun with one thread per GPU gives ~0.75 us per LL step ((21 - 12) / 12), near the 0.6 us NCCL's tuner assumes "
    "per NVLink step for LL (src/graph/tuning.cc). Used only by the alpha-beta algorithms outside NCCL (one_shot, "
    "two_shot, rhd, the hierarchical schedule), where it overstates a run with one process per GPU.")

LL_BW_FRACTION = Parameter(
    "ll_bw_fraction", 0.5, "fraction of the Simple-protocol bandwidth",
    "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc",
    "NCCL's LL protocol stores 4 bytes of data and a 4-byte flag in each 8-byte word (data1, flag1, data2, flag2 of "
    "union ncclLLFifoLine, src/include/device.h), "
    "so its tuner caps ring LL bandwidth at 0.5 x busBw (tuning.cc line 327).")

SIMPLE_LATENCY_S = Parameter(
    "simple_latency_s", _fit("simple_latency_s"), "s",
    "https://github.com/Azure/AI-benchmarking-guide/blob/3bb66cacc25632d8ece36bc1d5128c5ea886a60b/Azure_Results/ND_A100_v4_results.md",
    "An alpha-beta fit, outside the joint fit (no bundled point runs an alpha-beta algorithm), recomputed by the same "
    "script: the intercept of the alpha-beta form for the Simple protocol (not a start-up latency: it stands for the "
    "channel ramp and pipeline fill that a line through mid sizes absorbs), used only by the algorithms NCCL does not "
    "run (one_shot, two_shot, rhd), the explicit hierarchical schedule and all_to_all/send_recv across nodes: the "
    "median of t - S_bus/B_peak over the 7 sizes from 16 MiB to 1 GiB of the Azure ND A100 v4 8-GPU busbw sweep, with "
    "B_peak its 8 GiB busbw. In Hockney's terms alpha = n_1/2 / B: the message size at which half the peak busbw is "
    "reached is alpha x B (~40 MB on A100). NCCL's tuner assumes far less (8.4 us base, src/graph/tuning.cc), because "
    "channel ramp-up and pipelining are not in its latency term.")

NVLS_EFFICIENCY = Parameter(
    "nvls_efficiency", _fit("nvls_efficiency"), "fraction of nominal per-direction NVLink bandwidth",
    "https://github.com/NVIDIA/nccl-tests/issues/212",
    _JOINT + "every NVLS point sets it: the NCCL maintainer's 8x H100 peak algbw of about 275 GB/s (C10), 8x H200 "
    "(C13, C14, the Azure ND H200 v5 sweep S04, the H200 torch.distributed sweeps), Azure ND H100 v5 (S18), NCCL issue "
    "#1455's 5..7 GPUs (C11n5-7) and 8x B200 (S17). With in-switch reduction each GPU's link carries S (1 + 1/n) per "
    "direction (its share of every slice up to the switch, the reduced slices back by multicast), so the efficiency "
    "is algbw x (1 + 1/n) / 450 GB/s on Hopper. NCCL's tuner uses nvlsEfficiency 0.85 for Hopper and 0.74 for Blackwell "
    "(src/graph/tuning.cc:139-144 at v2.30.7-1) on a different bandwidth base; for Blackwell the model takes this "
    "value x 0.74 / 0.85, NCCL's ratio between the two.")

NET_EFFICIENCY = Parameter(
    "net_efficiency", _fit("net_efficiency"), "fraction of nominal per-direction NIC bandwidth",
    "https://github.com/lessizzmore/create-a3mega-ztan-fork/blob/02dd8f455c43ced1cf442ef29334bda97149264b/ztan-NCCL-test-result",
    _JOINT + "every multi-node point's large sizes set it: 2 nodes x 8 H100 over GPUDirect-TCPXO (C08, M02), 2 "
    "nodes x 8 B200 over RoCE (M01), the InfiniBand sweeps S01 and S02 and the RoCE sweep S14.")

TUNER_LATENCY_SCALE_NVLINK = Parameter(
    "tuner_latency_scale_nvlink", _fit("tuner_latency_scale_nvlink"), "multiple of NCCL's tuner latency",
    "https://github.com/NVIDIA/nccl-tests/issues/123",
    _JOINT + "one value for every NVLink generation (3, 4, 5, the bridges): the small-message times of every NVLink "
    "point set it, with the host thread's floor of the single-process runs in the model (HOST_LAUNCH_PER_GPU_S) "
    "rather than folded into the scale: nccl-tests issue #123's one-thread-per-GPU DGX A100 times (C22t), the Azure "
    "sweeps (S04, S05, S18), the 8x H200/B200 torch.distributed sweeps and the 4x/8x A100 and H100 logs. One value "
    "rather than one per generation, tried (2026-12-04) and not kept: fitted apart (NVLink 3 and 4, NVLink 5 and the "
    "bridges taking their mean), the leave-one-sweep-out share within 15 % went from 65.2 % to 66.0 % and the median "
    "from 9.3 % to 9.2 %, but the NVLink 3 scale went to 1.48 (2.31 without case C22) to absorb the A100 sweeps' "
    "1-64 MiB shortfall, which is not latency: the one-thread-per-GPU DGX A100 latencies it should describe (C22t) went "
    "from +7 %, +72 % and -11 % (LL, LL128, Simple) to +82 %, +204 % and +58 % out of sample.")

TUNER_LATENCY_SCALE = {
    "nvlink3": TUNER_LATENCY_SCALE_NVLINK,
    "nvlink4": TUNER_LATENCY_SCALE_NVLINK,
    "nvlink5": TUNER_LATENCY_SCALE_NVLINK,
    "nvlink": TUNER_LATENCY_SCALE_NVLINK,
    "pci": Parameter(
        "tuner_latency_scale_pci", 1.0, "multiple of NCCL's tuner latency",
        "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc",
        "Not a fit: NCCL's own PCI row (1 us per LL step). Out of sample, 4x V100 behind a PCIe switch at 4 KiB in a "
        "CUDA graph took 19.4 us (case C41), against NCCL's estimate plus the graph launch of 18.1 us."),
    "shm": Parameter(
        "tuner_latency_scale_shm", _fit("tuner_latency_scale_shm"), "multiple of NCCL's tuner latency",
        "https://github.com/NVIDIA/nccl/issues/1530",
        _JOINT + "without P2P every step goes through host memory (SHM transport), which NCCL's tuner prices as a "
        "PCI step: the small sizes of the host-staged points set it (8x RTX 4090 at 8 B, case C26, and sweep S06)."),
    "net": Parameter(
        "tuner_latency_scale_net", _fit("tuner_latency_scale_net"), "multiple of NCCL's tuner latency",
        "https://github.com/NVIDIA/nccl-tests/issues/309",
        _JOINT + "the small sizes of the InfiniBand sweeps (2 and 4 nodes x 8 H100, S01 and S02) set it. "
        "GPUDirect-TCPXO adds a latency per network step of its own, read off its log's floor (NET_PLUGIN_LATENCY_S)."),
    "roce": Parameter(
        "tuner_latency_scale_roce", _fit("tuner_latency_scale_roce"), "multiple of NCCL's tuner latency",
        "https://github.com/oracle-quickstart/oci-hpc-oke/blob/1402938d8c77b586e20ec9d40849e2177feef411/README.md",
        _JOINT + "NCCL's tuner gives RoCE the InfiniBand network row; the small sizes over RoCE set this scale: 2 "
        "nodes x 8 A100 (OCI BM.GPU4.8, sweep S14) and 2x DGX Spark over one 200 Gb/s link (case C29)."),
}
"""The multiple of NCCL's tuner latency per transport of the collective's hops (NVLink, PCIe P2P, host memory,
network). The scale applies to the latency term only; NCCL's choice is made on its unscaled estimate, as NCCL does.
The NVLink generations share one fitted value (:data:`TUNER_LATENCY_SCALE_NVLINK`)."""

NET_PLUGIN_LATENCY_S = {
    "tcpxo_200g": Parameter(
        "tcpxo_latency_s", _fit("tcpxo_latency_s"), "s per network step",
        "https://github.com/lessizzmore/create-a3mega-ztan-fork/blob/02dd8f455c43ced1cf442ef29334bda97149264b/ztan-NCCL-test-result",
        "Not a free parameter: read off the measured floor of the one TCPXO sweep (sweep C08: 2 nodes x 8 H100 on GCP "
        "A3 Mega, all_reduce, 8 B to 8 GiB), by the same script after the joint fit (model/calibrate.py, floor_fits): the "
        "extra latency per network step that the net plugin reports to NCCL's tuner (latencyInter) such that the model's "
        "8 B all_reduce takes the median in-place time of that log's sizes up to 4 KiB (10 sizes, 122.3-125.6 us: the "
        "time there does not depend on the size). GPUDirect-TCPXO moves the payload GPU to NIC while a host TCP stack "
        "runs the protocol, so each network step costs more than over RDMA. Tried as a free parameter of the joint fit "
        "with the sweep counted (2026-12-05, bounds 0-150 us) and not kept: the sweep's 1-64 MiB times, 2-3x those of "
        "the pair NCCL's own tuner picks (the run most likely used Google's tuner plugin, see the sweep's note), pulled "
        "it to 72 us, which put the sweep's 8 B-64 KiB sizes 14-43 % above the measured times; leaving the sweep out, "
        "the all_gather M02 alone could not hold the value (C08s -57 % out of sample). No public source gives the "
        "plugin's latency."),
}
"""The extra latency per network step that a network's NCCL net plugin adds (``ncclNetProperties.latency``, NCCL's
``latencyInter``), by :data:`gpucomm.model.hardware.network.NETWORKS` key, where the catalog has a measured value;
the InfiniBand/RoCE verbs and socket transports report none."""

LL_STEP_LATENCY_HOST_STAGED_S = Parameter(
    "ll_step_latency_host_staged_s", 1e-6 * TUNER_LATENCY_SCALE["shm"].value, "s per step",
    "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc",
    "Derived, not a free parameter: NCCL's LL latency per step on a PCI path (hwLatencies PCI row, 1 us, "
    "tuning.cc:164-169) x the fitted host-memory latency scale (TUNER_LATENCY_SCALE['shm']). Used only by the "
    "alpha-beta algorithms without P2P.")

NET_STEP_LATENCY_S = Parameter(
    "net_step_latency_s", 2.7e-6 * TUNER_LATENCY_SCALE["net"].value, "s per step between nodes",
    "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc",
    "Derived, not a free parameter: NCCL's LL ring latency per network step (hwLatencies NET row, 2.7 us, "
    "tuning.cc:170-175) x the fitted network latency scale (TUNER_LATENCY_SCALE['net']). Used only by the alpha-beta "
    "paths across nodes (the hierarchical schedule, all_to_all and send_recv rings).")

NVLS_CHUNK_BYTES = Parameter(
    "nvls_chunk_bytes", 128 * 1024, "bytes",
    "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/nvls.cc",
    "NCCL's constant, not a fit: NCCL_PARAM(NvlsChunkSize, \"NVLS_CHUNKSIZE\", 128 * 1024), the slice of a channel's "
    "data that one NVLS step moves through the switch.")

NVLS_PIPELINE_FILL_CHUNKS = Parameter(
    "nvls_pipeline_fill_chunks", _fit("nvls_pipeline_fill_chunks"), "NVLS chunks per channel",
    "https://github.com/Azure/AI-benchmarking-guide/blob/7f20e5fa/Azure_Results/ND_H200_v5_results.md",
    _JOINT + "NVLS pipeline fill, outside NCCL's tuner: once a channel's share spans more than one chunk "
    "(NVLS_CHUNK_BYTES), the first chunks go up to the switch, are reduced and come back before every stage of the "
    "kernel is busy; the fill costs this many chunk times at the channel's bandwidth (continuous, bounded to [0, 16]). "
    "The mid sizes of every NVLS point set it (S04, S18, the H200/B200 torch.distributed sweeps, and through NVLS Tree "
    "the multi-node H100 sweeps).")

RING_SIMPLE_STEP_BYTES = Parameter(
    "ring_simple_step_bytes", (1 << 22) / 8, "bytes",
    "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc",
    "NCCL's constants, not a fit: a channel's Simple buffer, DEFAULT_BUFFSIZE (1 << 22, 4 MiB, src/init.cc), split into "
    "NCCL_STEPS (8, src/include/device.h) steps of 512 KiB, the most one Simple step of a ring moves per channel [C: "
    "read in copies of init.cc from NCCL 2.28.9 and forks, not at the tag].")

RING_FILL_STEPS_NVLINK3 = Parameter(
    "ring_fill_steps_nvlink3", _fit("ring_fill_steps_nvlink3"), "step times per ring step",
    "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc",
    _JOINT + "a ring's Simple pipeline fill over NVLink 3, outside NCCL's tuner (whose estimate is latency + bytes / "
    "bandwidth): each of the ring's steps (2(n-1) for all_reduce, n-1 otherwise) waits this share of one step's "
    "transfer at a channel's delivered rate, a step moving a rank's share of a channel's data up to "
    "RING_SIMPLE_STEP_BYTES; so the term grows with the size up to a few hundred MiB and then stays, continuous. The "
    "A100 NVLink points set it (S08-S10, S19, the Azure ND A100 v4 sweep, C04, C17). Joint fit and leave-one-sweep-out "
    "(2026-12-04): sweep points within 15 % 65.2 % -> 66.6 %, median |error| 9.33 % -> 9.23 %, >= 64 MiB 2.37 % -> "
    "2.27 %, < 1 MiB and 1-64 MiB unchanged (15.8 %, 15.2 %). The same fill for every transport (pipeline_fill_fraction, "
    "model/calibrate.py REMOVED) had fitted to 0; NVLink 4 and the other links have none (not fitted apart).")

LAUNCH_S = {
    "eager": Parameter(
        "launch_eager_s", 3.5e-6, "s per call",
        "https://github.com/NVIDIA/nccl/issues/1984",
        "Host-side launch of one collective outside a CUDA graph, as nccl-tests runs without -G: a 1 KiB all_reduce "
        "takes 3.5 us eager against 0.5 us in a CUDA graph (NCCL issue #1984). Not in NCCL's tuner."),
    "graph": Parameter(
        "launch_graph_s", 0.5e-6, "s per call",
        "https://github.com/NVIDIA/nccl/issues/1984",
        "The same collective captured in a CUDA graph (nccl-tests -G, vLLM/TensorRT-LLM decode): 0.5 us (issue #1984)."),
    "sync": Parameter(
        "launch_sync_s", 25e-6, "s per call",
        "https://github.com/stas00/ml-engineering/blob/0cc3de50b2dd083c34d848a1dcb5bfe65fe3dace/network/benchmarks/README.md",
        "One torch.distributed call at a time, timed from before the host dispatches it (barrier, CUDA event, "
        "all_reduce, event, synchronize: a program that waits for each result): PyTorch's host overhead per call "
        "is then part of the time. Not a fit: the middle of the '20-30 us of host overhead per call' that "
        "ml-engineering's benchmark README gives for PyTorch."),
}
"""Launch term per call by launch mode, added to NCCL's estimate (which has none): eager and graph for back-to-back
calls, sync for one call at a time through PyTorch."""

HOST_LAUNCH_PER_GPU_S = Parameter(
    "host_launch_per_gpu_s", _fit("host_launch_per_gpu_s"), "s per GPU per call",
    "https://github.com/NVIDIA/nccl-tests/issues/123",
    _JOINT + "one host thread that launches a collective on each of g GPUs (nccl-tests -g g in one process) spends "
    "about this much per GPU per call; back-to-back calls then take at least g times it, whatever the GPUs do. The "
    "small sizes of every single-process run set it: nccl-tests issue #123's DGX A100 (C22), the 8x A100 logs S08-S10, "
    "the 4x A100 S19, the 4x H100 S11-S13, the Azure sweeps run with -g, the RTX 4090/5090 hosts (S06, S07, P01s). "
    "The NCCL maintainer on issue #123: with -g \"all GPUs are handled by a single thread and that causes extra latency "
    "as the CPU is the bottleneck\". It depends on the CPU (single-process floors of these hosts give about 3 to 6 us "
    "per GPU); not in NCCL's tuner; a CUDA graph (-G) or one process per GPU removes it.")


HOST_LAUNCH_PER_CHANNEL_S = Parameter(
    "host_launch_per_channel_s", _fit("host_launch_per_channel_s"), "s per channel per GPU per call",
    "https://github.com/NVIDIA/nccl/blob/v2.10.3-1/src/enqueue.cc",
    _JOINT + "for NCCL releases before 2.13 only (:data:`PER_CHANNEL_ENQUEUE_UNTIL`). Those releases enqueue a "
    "collective one channel at a time: ncclEnqueueCollKernel (enqueue.cc:637-660 at v2.10.3-1) calls getNextOp "
    "(:134-153) once per channel, which waits until that channel's slot of a FIFO in host-mapped memory is free, "
    "clears it and fills it, so the host's time per call grows with the channels NCCL runs at that size (1 channel "
    "at 32 KiB, 24 from 1 MiB on 8x A100). The single-process runs of releases before 2.13 set it: the 8x A100 "
    "all_reduce, all_gather and reduce_scatter of one host (S08-S10) and the 4x A100 board (S19); "
    "validation.host_cost_per_channel_s gives each run's own slope. From 2.13 the host builds each channel's work "
    "into a kernel plan (ncclKernelPlan) and copies it to the FIFO in one pass, which the model leaves out.")

PER_CHANNEL_ENQUEUE_UNTIL = (2, 13, 0)
"""The first NCCL release that builds a call's per-channel work into a kernel plan (v2.13.4-1's enqueue.cc:
``ncclKernelPlan``; v2.12.12-1's still calls ``getNextOp`` per channel): :data:`HOST_LAUNCH_PER_CHANNEL_S`
applies below it."""


def link_efficiency(link_key: str, link_kind: str, *, p2p: bool = True) -> Parameter:
    """The large-message efficiency that applies to a GPU link: what fraction of its nominal rate a ring delivers.

    Parameters
    ----------
    link_key : str
        Catalog key of the link (``"nvlink4"``, ``"pcie5"``, a bridge key).
    link_kind : str
        ``"nvlink"`` or ``"pcie"``.
    p2p : bool
        False: NCCL stages through host memory (PCIe only).

    Returns
    -------
    Parameter
        :data:`RING_EFFICIENCY` of that NVLink (:data:`DEFAULT_NVLINK_RING_EFFICIENCY` without a measurement),
        :data:`PCIE_P2P_EFFICIENCY` or :data:`HOST_STAGED_EFFICIENCY`.
    """
    if link_kind == "nvlink":
        return RING_EFFICIENCY.get(link_key, DEFAULT_NVLINK_RING_EFFICIENCY)
    return PCIE_P2P_EFFICIENCY if p2p else HOST_STAGED_EFFICIENCY


def all_parameters() -> list[Parameter]:
    """Every calibration parameter, for documentation pages and source checks.

    Returns
    -------
    list of Parameter
        Each module-level :class:`Parameter` once, the per-link dicts' entries included
        (:data:`RING_EFFICIENCY`, :data:`TUNER_LATENCY_SCALE` (the NVLink keys share one), :data:`LAUNCH_S`), and
        :data:`HOST_LAUNCH_PER_GPU_S` and :data:`HOST_LAUNCH_PER_CHANNEL_S`.
    """
    out = [*RING_EFFICIENCY.values(), DEFAULT_NVLINK_RING_EFFICIENCY, PCIE_P2P_EFFICIENCY, HOST_STAGED_EFFICIENCY,
           LL_BASE_LATENCY_S, LL_STEP_LATENCY_S, LL_STEP_LATENCY_HOST_STAGED_S, LL_BW_FRACTION, SIMPLE_LATENCY_S,
           NVLS_EFFICIENCY, NET_EFFICIENCY, NET_STEP_LATENCY_S, *NET_PLUGIN_LATENCY_S.values(),
           *TUNER_LATENCY_SCALE.values(), NVLS_CHUNK_BYTES, NVLS_PIPELINE_FILL_CHUNKS, RING_SIMPLE_STEP_BYTES,
           RING_FILL_STEPS_NVLINK3,
           *LAUNCH_S.values(), HOST_LAUNCH_PER_GPU_S, HOST_LAUNCH_PER_CHANNEL_S]
    return list({p.name: p for p in out}.values())


@dataclass(frozen=True)
class FreeParameter:
    """A parameter the joint fit sets (:mod:`gpucomm.model.calibrate`): its name and physical bounds."""

    name: str
    low: float
    high: float
    why_bounds: str


FREE_PARAMETERS = (
    FreeParameter("ring_efficiency_nvlink3", 0.5, 0.95, "a ring delivers a share of the links' rate, less its headers"),
    FreeParameter("ring_efficiency_nvlink4", 0.5, 0.95, "as NVLink 3"),
    FreeParameter("pcie_p2p_efficiency", 0.3, 0.95, "PCIe packet overhead alone leaves 88 % of x16"),
    FreeParameter("host_staged_efficiency", 0.1, 0.9, "two copies through host memory: below the P2P share"),
    FreeParameter("nvls_efficiency", 0.4, 0.95, "a share of the links' rate"),
    FreeParameter("net_efficiency", 0.5, 1.0, "a share of the NIC's line rate"),
    FreeParameter("tuner_latency_scale_nvlink", 0.5, 3.0, "NCCL's latency within a factor of 2-3 either way"),
    FreeParameter("tuner_latency_scale_shm", 0.5, 4.0, "as NVLink; host memory is slower than a PCI hop"),
    FreeParameter("tuner_latency_scale_net", 0.5, 3.0, "as NVLink"),
    FreeParameter("tuner_latency_scale_roce", 0.5, 3.0, "as NVLink"),
    FreeParameter("nvls_pipeline_fill_chunks", 0.0, 16.0, "at most a few NVLS stages in flight"),
    FreeParameter("ring_fill_steps_nvlink3", 0.0, 4.0, "a share of a step per step: a few steps in flight at most"),
    FreeParameter("host_launch_per_gpu_s", 1e-6, 10e-6, "a kernel launch and NCCL's enqueue: microseconds"),
    FreeParameter("host_launch_per_channel_s", 0.0, 1e-6, "one host-mapped FIFO slot per channel: well below a launch"),
)
"""The free parameters of the model, fitted jointly (:mod:`gpucomm.model.calibrate`) within these bounds. Everything
else in this module is a constant NCCL uses, a cited figure, derived from these, or an alpha-beta fit
(``alpha_beta`` of the calibration file) that only the algorithms NCCL does not run use."""


def _slots():
    """(container, key) of every :class:`Parameter` of this module: module globals and per-key dicts' entries."""
    g = globals()
    for key, obj in list(g.items()):
        if isinstance(obj, Parameter):
            yield g, key
        elif isinstance(obj, dict) and obj and all(isinstance(v, Parameter) for v in obj.values()):
            for k in obj:
                yield obj, k


def _set(values: dict) -> None:
    for container, key in list(_slots()):
        p = container[key]
        if p.name in values:
            container[key] = replace(p, value=float(values[p.name]))
    # the derived parameters follow the fitted ones they are made of
    g = globals()
    g["DEFAULT_NVLINK_RING_EFFICIENCY"] = replace(
        DEFAULT_NVLINK_RING_EFFICIENCY, value=(RING_EFFICIENCY["nvlink3"].value + RING_EFFICIENCY["nvlink4"].value) / 2)
    g["LL_STEP_LATENCY_HOST_STAGED_S"] = replace(LL_STEP_LATENCY_HOST_STAGED_S, value=1e-6 * TUNER_LATENCY_SCALE["shm"].value)
    g["NET_STEP_LATENCY_S"] = replace(NET_STEP_LATENCY_S, value=2.7e-6 * TUNER_LATENCY_SCALE["net"].value)
    g["TUNER_LATENCY_SCALE_NVLINK"] = TUNER_LATENCY_SCALE["nvlink"]
    from gpucomm.model import cost, nccl_fabric  # the memoized communicators hold delivered rates: rebuild them

    cost._nccl_plan.cache_clear()
    nccl_fabric.comm_and_table.cache_clear()


def free_values() -> dict[str, float]:
    """The current value of every free parameter.

    Returns
    -------
    dict
        Name (:data:`FREE_PARAMETERS`) -> value.
    """
    by_name = {p.name: p.value for p in all_parameters()}
    return {f.name: by_name[f.name] for f in FREE_PARAMETERS}


@contextmanager
def using(values: dict):
    """Run the model with some free parameters set to other values (the fit and its leave-one-out refits).

    Parameters
    ----------
    values : dict
        Free parameter name -> value; names not given keep theirs.

    Yields
    ------
    None
        Inside the block :mod:`gpucomm.model.cost` prices with these values; on leaving, the previous ones return.
        Not thread-safe: it rebinds this module's parameters.

    Raises
    ------
    KeyError
        For a name that is not a free parameter.
    """
    names = {f.name for f in FREE_PARAMETERS}
    unknown = set(values) - names
    if unknown:
        raise KeyError(f"not free parameters: {sorted(unknown)}")
    before = free_values()
    _set(values)
    try:
        yield
    finally:
        _set(before)


@contextmanager
def keeping(*names: str):
    """Restore these parameters' values on leaving the block (for a fit that sets parameters which are not free, such
    as :data:`NET_PLUGIN_LATENCY_S`, with :func:`_set`).

    Parameters
    ----------
    *names : str
        Parameter names (:attr:`Parameter.name`).

    Yields
    ------
    None
    """
    by_name = {p.name: p.value for p in all_parameters()}
    before = {n: by_name[n] for n in names}
    try:
        yield
    finally:
        _set(before)


def leave_one_out_folds() -> dict[str, dict]:
    """The leave-one-out refits of the loaded calibration.

    Returns
    -------
    dict
        Unit (a sweep id, or a case row of :mod:`gpucomm.model.validation`) -> {free parameter: value refitted without
        it} for the values that differ from the joint fit.
    """
    return _CALIBRATION.get("folds", {})


TRANSPORTS = ("nvlink", "pcie", "network")
"""The transport classes of the prediction band: NVLink/NVSwitch inside a node, PCIe (P2P or through host memory),
and across nodes."""

SIZE_BANDS = (("< 1 MiB", 0, 2**20), ("1-64 MiB", 2**20, 64 * 2**20), (">= 64 MiB", 64 * 2**20, math.inf))
"""(name, lowest bytes, bytes above the band) of the band's size classes and of the validation report."""


def size_band(msg_bytes: float) -> str:
    """The name of the size band of :data:`SIZE_BANDS` that holds ``msg_bytes``.

    Parameters
    ----------
    msg_bytes : float
        Message size, bytes, >= 0.

    Returns
    -------
    str
        ``"< 1 MiB"``, ``"1-64 MiB"`` or ``">= 64 MiB"``.

    Examples
    --------
    >>> size_band(2**20), size_band(64 * 2**20 - 1)
    ('1-64 MiB', '1-64 MiB')
    """
    return next(name for name, low, high in SIZE_BANDS if low <= msg_bytes < high)


def prediction_band(transport: str, msg_bytes: float) -> tuple[float, float]:
    """The 10-90 % prediction band of the model's time, as factors of it.

    The quantiles of log(measured / predicted) time of the leave-one-out predictions (every bundled sweep point and
    case predicted with the parameters refitted without its sweep or case) in this transport and size band, as the
    calibration file holds them (a cell with too few points takes its transport's, or every point's, quantiles).

    Parameters
    ----------
    transport : {"nvlink", "pcie", "network"}
        :data:`TRANSPORTS`.
    msg_bytes : float
        Message size, bytes.

    Returns
    -------
    (float, float)
        ``(low, high)``: a time between ``low x t`` and ``high x t`` holds 80 % of the cross-validated points;
        ``(1.0, 1.0)`` while the calibration file has no band.

    Raises
    ------
    KeyError
        For an unknown transport.

    Examples
    --------
    >>> low, high = prediction_band("nvlink", 2**30)
    >>> low <= 1.0 <= high
    True
    """
    if transport not in TRANSPORTS:
        raise KeyError(f"transport {transport!r}: expected one of {', '.join(TRANSPORTS)}")
    cells = _CALIBRATION.get("band", {}).get("cells", {})
    q = cells.get(f"{transport} {size_band(msg_bytes)}")
    if q is None:
        return 1.0, 1.0
    return math.exp(q[0]), math.exp(q[1])
