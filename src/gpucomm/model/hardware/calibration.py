"""Effective-vs-nominal factors and protocol latencies, each a named parameter with its source.

Nominal link rates (:mod:`gpucomm.model.hardware.links`) are upper bounds. What NCCL reaches
is lower (packet headers, flow control, synchronisation) and depends on message size.
The model uses the parameters below; each one says where it comes from. Values
"fitted" here are recomputed from the bundled measurements by the test suite
(``tests/model/test_calibration.py``), so they cannot drift from their data.
"""

from __future__ import annotations

from dataclasses import dataclass


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
        "ring_efficiency_nvlink3", 0.78, "fraction of nominal per-direction bandwidth",
        "https://github.com/eugenesiow/LLM-Insights/blob/5aa5513ac34d0da5d0214e6939d06f77de00ab48/infrastructure/hardware/README.md",
        "Large-message all_reduce busbw on DGX A100, 4 GPUs, 8 GiB: 234.72 GB/s / 300 GB/s = 0.782 (case C04, "
        "in-sample). Out of sample: Azure ND A100 v4, 8 GPUs: 231.58 / 300 = 0.772 (case C17)."),
    "nvlink4": Parameter(
        "ring_efficiency_nvlink4", 0.82, "fraction of nominal per-direction bandwidth",
        "https://github.com/NVIDIA/nccl-tests/issues/212",
        "NCCL maintainer: 450 GB/s line rate, ~370 GB/s effective with ~20% protocol overhead. "
        "DGX H100, 4 GPUs, 8 GiB: 370.7 / 450 = 0.824 (case C06); 8x H200 with NVLS off: 367.6 / 450 = 0.817 (case C13)."),
}
"""Large-message ring busbw / nominal link bandwidth, per link with published measurements."""

DEFAULT_NVLINK_RING_EFFICIENCY = Parameter(
    "ring_efficiency_nvlink_default", 0.80, "fraction of nominal per-direction bandwidth",
    "https://github.com/NVIDIA/nccl-tests/issues/212",
    "For NVLink generations without a bundled measurement: the mean of the NVLink 3.0 (0.78) and 4.0 (0.82) values; "
    "the NCCL maintainer's '~20% protocol overhead' gives the same.")

PCIE_P2P_EFFICIENCY = Parameter(
    "pcie_p2p_efficiency", 0.65, "fraction of nominal per-direction bandwidth",
    "https://github.com/voipmonitor/rtx6kpro/blob/070506ff96a20039f71a067adcb250e8fe3414f8/hardware/pcie-bandwidth.md",
    "Large-message all_reduce busbw with P2P over PCIe: 8x RTX PRO 6000 behind three PCIe 5.0 switches on one CPU, "
    "41.1 GB/s / 63.0 GB/s = 0.652 (case P06), with NCCL_MIN_NCHANNELS=8 (the same page shows a dual-Turin host at "
    "22.2 GB/s with NCCL's default channels at 32 MiB against 37.6 GB/s tuned). It combines PCIe packet overhead (a host-to-device copy over PCIe 5.0 "  # noqa: E501
    "x16 reaches 55.4 GB/s = 88 %, https://github.com/stas00/ml-engineering/blob/master/network/README.md) with NCCL's "
    "ring protocol cost, as RING_EFFICIENCY does for NVLink.")

HOST_STAGED_EFFICIENCY = Parameter(
    "host_staged_efficiency", 0.33, "fraction of nominal PCIe per-direction bandwidth",
    "https://github.com/eugenesiow/LLM-Insights/blob/5aa5513ac34d0da5d0214e6939d06f77de00ab48/infrastructure/hardware/README.md",
    "With P2P disabled or unsupported, NCCL stages every transfer through host memory (SHM transport): the sender copies "
    "into a host buffer, the receiver copies out. DGX H100, 4 GPUs, NCCL_P2P_DISABLE=1, PCIe 5.0 x16 (63 GB/s): busbw "
    "24.0 GB/s at 1 GiB falling to 20.0 GB/s at 8 GiB = 0.38-0.32 (case C07); we take 0.33. Not fitted to the PCIe 4.0 "
    "measurement of Baobao Algorithm Notes' Llama-3-70B article, which is used to validate it.")

LL_BASE_LATENCY_S = Parameter(
    "ll_base_latency_s", 5.57e-6, "s",
    "https://github.com/NVIDIA/nccl-tests/issues/123",
    "Intercept of a least-squares line through DGX A100 ring all_reduce latency at 8 B vs number of ring steps "
    "2(n-1), NCCL_ALGO=Ring, one channel (n = 2..8: 10 to 33.7 us). Covers launch and the fixed part of the protocol.")

LL_STEP_LATENCY_S = Parameter(
    "ll_step_latency_s", 1.98e-6, "s per ring step",
    "https://github.com/NVIDIA/nccl-tests/issues/123",
    "Slope of the same line: ~2 us per ring step of an all_reduce. That run drove every GPU from one thread (-g), so "
    "most of the slope is the host's launches (HOST_LAUNCH_PER_GPU_S, fitted on the same data); the poster's rerun with "
    "one thread per GPU gives ~0.75 us per LL step ((21 - 12) / 12), near the 0.6 us NCCL's tuner assumes per NVLink "
    "step for LL (src/graph/tuning.cc). Kept for the alpha-beta algorithms outside NCCL (one_shot, two_shot, rhd, "
    "the hierarchical schedule), where it overstates a run with one process per GPU.")

LL_BW_FRACTION = Parameter(
    "ll_bw_fraction", 0.5, "fraction of the Simple-protocol bandwidth",
    "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc",
    "NCCL's LL protocol stores 4 bytes of data and a 4-byte flag in each 8-byte word (data1, flag1, data2, flag2 of "
    "union ncclLLFifoLine, src/include/device.h), "
    "so its tuner caps ring LL bandwidth at 0.5 x busBw (tuning.cc line 327).")

SIMPLE_LATENCY_S = Parameter(
    "simple_latency_s", 183e-6, "s",
    "https://github.com/Azure/AI-benchmarking-guide/blob/3bb66cacc25632d8ece36bc1d5128c5ea886a60b/Azure_Results/ND_A100_v4_results.md",
    "Intercept of the alpha-beta fit for the Simple protocol (not a start-up latency: it stands for the channel ramp "
    "and pipeline fill that a line through mid sizes absorbs), used only by the algorithms NCCL does not run (one_shot, "
    "two_shot, rhd), the explicit hierarchical schedule and all_to_all/send_recv across nodes: the median of "
    "t - S_bus/B_peak over 16 MiB..1 GiB of the Azure ND A100 v4 8-GPU busbw sweep (case C17), with B_peak its 8 GiB "
    "busbw. In Hockney's terms alpha = n_1/2 / B: "
    "the message size at which half the peak busbw is reached is alpha x B (~40 MB on A100). NCCL's tuner assumes "
    "far less (8.4 us base, src/graph/tuning.cc), because channel ramp-up and pipelining are not in its latency term.")


LL_STEP_LATENCY_HOST_STAGED_S = Parameter(
    "ll_step_latency_host_staged_s", 2.64e-6, "s per step",
    "https://github.com/NVIDIA/nccl/issues/1530",
    "Without P2P each step goes through host memory (SHM transport): 8x RTX 4090 on PCIe, 8 B all_reduce with "
    "NCCL_ALGO=TREE takes 42.56 us (case C26). Inside one node NCCL's tree is a chain, 2(n-1) = 14 steps for 8 GPUs: "
    "(42.56 - 5.57) / 14 = 2.64 us per step.")

NVLS_EFFICIENCY = Parameter(
    "nvls_efficiency", 0.6875, "fraction of nominal per-direction NVLink bandwidth",
    "https://github.com/NVIDIA/nccl-tests/issues/212",
    "NVLS all_reduce on 8x H100: the NCCL maintainer's peak algbw of about 275 GB/s (busbw ~480) at large sizes "
    "(case C10, in-sample). With in-switch reduction each GPU's link carries S (1 + 1/n) per direction (its share of "
    "every slice up to the switch, the reduced slices back by multicast), so the efficiency is 275 x (1 + 1/8) / 450 = "
    "0.6875. Out of sample it gives the 8x H200 sweep's 275.6 GB/s at 16 GiB (case C13) and NCCL issue #1455's busbw "
    "for 5..7 GPUs (420/440/460 GB/s). NCCL's tuner uses nvlsEfficiency 0.85 for Hopper and 0.74 for Blackwell "
    "(src/graph/tuning.cc:139-144 at v2.30.7-1, a table of the tuner since 2.28) on a different bandwidth base. For "
    "Blackwell the model borrows NCCL's ratio between the two as a proxy for what NVLS delivers there, whatever the "
    "release: this value x 0.74 / 0.85 (not fitted; checked out of sample on an 8x B200 sweep of NCCL 2.27.7, S17, "
    "whose tuner had no such table).")

NET_EFFICIENCY = Parameter(
    "net_efficiency", 0.9, "fraction of nominal per-direction NIC bandwidth",
    "https://github.com/lessizzmore/create-a3mega-ztan-fork/blob/02dd8f455c43ced1cf442ef29334bda97149264b/ztan-NCCL-test-result",
    "2 nodes x 8 H100 (GCP A3-Mega, 8 x 200 Gb/s NICs per node): all_reduce algbw 180.7 GB/s at 8 GiB against the "
    "hierarchical bound of 8 NICs x 25 GB/s = 200 GB/s: 0.90 (case C08). Fitted on that one case, so C08 is in-sample.")


NET_STEP_LATENCY_S = Parameter(
    "net_step_latency_s", 14.8e-6, "s per step between nodes",
    "https://github.com/NVIDIA/dgx-spark-playbooks/pull/103",
    "2x DGX Spark joined by one 200 Gb/s RoCE link: 8 KiB all_reduce takes 35.15 us (case C29); a ring of 2 nodes has "
    "2 steps: (35.15 - 5.57) / 2 = 14.8 us per network step. NCCL's tuner assumes 2.7 us (LL) to 14 us (Simple) "
    "hardware latency per network step (src/graph/tuning.cc). GPUDirect-TCPXO (case C08) is much slower (~120 us floor).")


TUNER_LATENCY_SCALE = {
    "nvlink3": Parameter(
        "tuner_latency_scale_nvlink3", 1.06, "multiple of NCCL's tuner latency",
        "https://github.com/NVIDIA/nccl-tests/issues/123",
        "A fit, on the only A100 times that measure NCCL rather than a host thread: nccl-tests issue #123's rerun "
        "with one thread per GPU on a DGX A100 (8 GPUs, ring, one channel, 8 B: LL ~21 us, LL128 ~32 us, Simple ~84 "
        "us; cases C22t, in-sample), the least-squares value of log(predicted / measured) over the three (0.92x, "
        "1.45x and 0.75x of them). The single-process A100 sweeps (Azure ND A100 v4, S08-S10) cannot give it: below "
        "1 MiB their times are the host thread's. From 4 to 32 MiB the model with this value is 16-56 % short of the "
        "8x A100 sweeps; a scale of 2.0 fitted on the Azure sweep used to cover that, and overstated the "
        "one-thread-per-GPU times up to 2.65x."),
    "nvlink4": Parameter(
        "tuner_latency_scale_nvlink4", 1.08, "multiple of NCCL's tuner latency",
        "https://github.com/Azure/AI-benchmarking-guide/blob/7f20e5fa/Azure_Results/ND_H200_v5_results.md",
        "A fit: the median predicted/measured time is 1.0 over the sizes below 1 MiB of the Azure ND H200 v5 8-GPU "
        "nccl-tests sweep (NCCL 2.20.5, NVLS forced by the guide's NCCL_ALGO=NVLS, so NCCL's 25 us NVLS latency is "
        "what is scaled; sweep S04, in-sample below 1 MiB, out of sample from 1 MiB). Checked out of sample on the 8x "
        "H200 torch.distributed sweep (ml-engineering), the 4x H100 sweeps S11-S13 and the H100 cases."),
    "nvlink5": Parameter(
        "tuner_latency_scale_nvlink5", 1.32, "multiple of NCCL's tuner latency",
        "https://github.com/Azure/AI-benchmarking-guide/blob/2a370be6/Azure_Results/ND_GB200_v6_results.md",
        "A fit: the median predicted/measured time is 1.0 over the sizes below 1 MiB of the Azure ND GB200 v6 "
        "4-GPU ring sweep (NCCL 2.25.1; sweep S05, in-sample below 1 MiB, out of sample from 1 MiB), every time taken "
        "as the GPUs' although the guide's script drives the 4 GPUs from one process (-g 4), whose launches on that "
        "Grace host take about 3.9 us per GPU: where they set the time, this scale overstates NCCL's latency."),
    "nvlink": Parameter(
        "tuner_latency_scale_nvlink", 1.06, "multiple of NCCL's tuner latency",
        "https://github.com/NVIDIA/nccl-tests/issues/123",
        "Not fitted: NVLink links without data of their own (NVLink 1-2, the bridges of A40, RTX and H100 PCIe "
        "cards) take the NVLink 3.0 value, the oldest fitted generation."),
    "pci": Parameter(
        "tuner_latency_scale_pci", 1.0, "multiple of NCCL's tuner latency",
        "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc",
        "Not a fit: NCCL's own PCI row (1 us per LL step). Out of sample, 4x V100 behind a PCIe switch at 4 KiB in a "
        "CUDA graph took 19.4 us (case C41): NCCL's estimate plus the graph launch gives 18.1 us, and the model, which "
        "overlaps LL's transfer with its steps' latency (cost.CUT_THROUGH_PROTOCOLS), is 17 % fast. The 8x RTX 5090 at 8 B "
        "(case P01s) ran from one process, so its 25.5 us cannot separate NCCL's latency from the host thread's."),
    "shm": Parameter(
        "tuner_latency_scale_shm", 2.0, "multiple of NCCL's tuner latency",
        "https://github.com/NVIDIA/nccl/issues/1530",
        "A fit. Without P2P every step goes through host memory (SHM transport), which NCCL's tuner prices as a PCI "
        "step: 8x RTX 4090 at 8 B takes 42.56 us (case C26, in-sample) against 3.5 us launch + 20.6 us tuner "
        "latency; 2.0 (the NVLink value) gives 44.7 us, so one value serves both."),
    "net": Parameter(
        "tuner_latency_scale_net", 0.90, "multiple of NCCL's tuner latency",
        "https://github.com/NVIDIA/nccl-tests/issues/309",
        "A fit: the median predicted/measured time is 1.0 over the sizes below 1 MiB of a 2-node x 8 H100 "
        "InfiniBand NDR all_reduce sweep (NCCL 2.26.2; sweep S01, in-sample below 1 MiB). Across nodes NCCL's "
        "tuner slightly overestimates small-message time; checked out of sample on 4 nodes (sweep S02) and on 2x DGX "
        "Spark over one RoCE link (case C29, which has its own RoCE scale). "
        "GPUDirect-TCPXO (case C08) has a ~120 us floor of its own that NCCL's network rows do not describe."),
    "roce": Parameter(
        "tuner_latency_scale_roce", 1.40, "multiple of NCCL's tuner latency",
        "https://github.com/oracle-quickstart/oci-hpc-oke/blob/1402938d8c77b586e20ec9d40849e2177feef411/README.md",
        "A fit: the median predicted/measured time is 1.0 over the sizes below 1 MiB of a 2-node x 8 A100 all_reduce "
        "sweep over RoCE (OCI BM.GPU4.8; sweep S14, in-sample below 1 MiB, out of sample from 1 MiB). NCCL's tuner "
        "gives RoCE the InfiniBand network row; measured small messages over RoCE take longer than the InfiniBand fit "
        "gives. Out of sample: 2x DGX Spark over one 200 Gb/s RoCE link (case C29) takes 1.25x what this scale gives."),
}
"""A fit per transport of the collective's hops (NVLink, PCIe P2P, host memory, network): the multiple of NCCL's
tuner latency that measured small-message times show. The scale applies to the latency term only; NCCL's choice
is made on its unscaled estimate, as NCCL does. NVLink 3 is fitted on one-thread-per-GPU times (C22t). The NVLink 4
and 5 and host-memory fits were made on runs in which one process drove every GPU, with every time taken as the
GPUs' (the host floor, :data:`HOST_LAUNCH_PER_GPU_S`, left out of the fit): where that floor was what those runs
measured, the scale overstates NCCL's latency, which the out-of-sample runs with one process per GPU (the 8x H200
torch.distributed sweeps, the multi-node sweeps) check."""

PIPELINE_FILL_FRACTION = Parameter(
    "pipeline_fill_fraction", 0.58, "fraction of one protocol step per ring hop",
    "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/device.h",
    "A fit, on one point. Ring pipeline fill, outside NCCL's tuner (cost_terms.ring_fill_s): while a rank's share of "
    "a channel fits in one step of the protocol's buffer (Simple: 4 MiB / NCCL_STEPS 8 = 512 KiB) there is no "
    "pipeline and the n-1 hops are the bandwidth term; beyond one step, the part of the share past the first step "
    "waits for the first step to cross the n-1 hops, up to one whole step from two steps on: this fraction of that "
    "part's time per hop at the channel's bandwidth. Fitted when the fill was a step (all of a step per hop as soon "
    "as a share exceeded one step) so that the Llama-3-70B article's 64 MiB all_reduce on 4x A100 NVLink took 603 us "
    "(measurements.llama70b_tp4_4xa100); the fill is now continuous in size and that point, a share of 1.33 steps, "
    "gets a third of it: the model gives 511 us there, 15 % fast. Not refitted: one point cannot fit it "
    "(the joint calibration is to come). Checked on every sweep's sizes from 64 MiB (out of sample).")

NVLS_CHUNK_BYTES = Parameter(
    "nvls_chunk_bytes", 128 * 1024, "bytes",
    "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/nvls.cc",
    "NCCL's constant, not a fit: NCCL_PARAM(NvlsChunkSize, \"NVLS_CHUNKSIZE\", 128 * 1024), the slice of a channel's "
    "data that one NVLS step moves through the switch.")

NVLS_PIPELINE_FILL_CHUNKS = Parameter(
    "nvls_pipeline_fill_chunks", 4.0, "NVLS chunks per channel",
    "https://github.com/Azure/AI-benchmarking-guide/blob/7f20e5fa/Azure_Results/ND_H200_v5_results.md",
    "A fit. NVLS pipeline fill, outside NCCL's tuner: once a channel's share spans more than one chunk "
    "(NVLS_CHUNK_BYTES), the first chunks go up to the switch, are reduced and come back before every stage of the "
    "kernel is busy; the fill costs this many chunk times at the channel's bandwidth. Fitted: the whole number of "
    "chunks with the least mean |error| over 1-64 MiB of the Azure ND H200 v5 8-GPU sweep (sweep S04, in-sample there); "
    "out of sample on the 8x H200 torch.distributed sweep and, through NVLS Tree, the 2- and 4-node H100 sweeps.")

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
    "host_launch_per_gpu_s", 4.24e-6, "s per GPU per call",
    "https://github.com/NVIDIA/nccl-tests/issues/123",
    "A fit. One host thread that launches a collective on each of g GPUs (nccl-tests -g g in one process) spends "
    "about this much per GPU per call; back-to-back calls then take at least g times it, whatever the GPUs do. "
    "Least-squares line through the origin of nccl-tests issue #123's DGX A100 times against the GPUs one process "
    "drives (2..8 GPUs: 10 to 33.7 us; case C22, in-sample). The NCCL maintainer's answer there: with -g \"all GPUs "
    "are handled by a single thread and that causes extra latency as the CPU is the bottleneck\"; the poster's "
    "rerun with one thread per GPU (-t) took 21 us (LL) on 8 GPUs where -g took 33.7. Also in "
    "single-process sweeps all_reduce, all_gather and reduce_scatter share one small-message floor although their "
    "step counts differ twofold (sweeps S08-S10 on 8x A100, S11-S13 on 4x H100), and an 8x RTX 4090 host has the same "
    "floor staged through host memory and with P2P (S06, S07). It depends on the CPU: single-process floors of "
    "other hosts give 3.2 (EPYC Turin, case P01s) to 5.8 us (sweep S11) per GPU. Not in NCCL's tuner; a CUDA graph "
    "(-G) or one process per GPU removes it.")


HOST_LAUNCH_PER_CHANNEL_S = Parameter(
    "host_launch_per_channel_s", 0.210e-6, "s per channel per GPU per call",
    "https://github.com/NVIDIA/nccl/blob/v2.10.3-1/src/enqueue.cc",
    "A fit, for NCCL releases before 2.13 only (:data:`PER_CHANNEL_ENQUEUE_UNTIL`). Those releases enqueue a "
    "collective one channel at a time: ncclEnqueueCollKernel (enqueue.cc:637-660 at v2.10.3-1) calls getNextOp "
    "(:134-153) once per channel, which waits until that channel's slot of a FIFO in host-mapped memory is free, "
    "clears it and fills it, so the host's time per call grows with the channels NCCL runs at that size (1 channel "
    "at 32 KiB, 24 from 1 MiB on 8x A100). The least-squares slope of a single-process sweep's time per GPU driven "
    "against those channels from 32 KiB to 1 MiB (validation.host_cost_per_channel_s) on sweep S09 (8x A100 "
    "all_gather, -g 8, NCCL of mid-2021; in-sample); the same run's all_reduce (S08) and reduce_scatter (S10) give "
    "the same within 4 %, though they share its host. From 2.13 the host builds each channel's work into a kernel "
    "plan (ncclKernelPlan) and copies it to the FIFO in one pass, without the per-slot wait and clearing: the "
    "single-process sweeps of 2.18-2.29 (Azure A100, S05, S11-S13) rise by a twentieth to a fifth as much per "
    "channel, which the model leaves out.")

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
        (:data:`RING_EFFICIENCY`, :data:`TUNER_LATENCY_SCALE`, :data:`LAUNCH_S`), and
        :data:`HOST_LAUNCH_PER_GPU_S` and :data:`HOST_LAUNCH_PER_CHANNEL_S`.
    """
    return [*RING_EFFICIENCY.values(), DEFAULT_NVLINK_RING_EFFICIENCY, PCIE_P2P_EFFICIENCY, HOST_STAGED_EFFICIENCY,
            LL_BASE_LATENCY_S, LL_STEP_LATENCY_S, LL_STEP_LATENCY_HOST_STAGED_S, LL_BW_FRACTION, SIMPLE_LATENCY_S,
            NVLS_EFFICIENCY, NET_EFFICIENCY, NET_STEP_LATENCY_S,
            *TUNER_LATENCY_SCALE.values(), PIPELINE_FILL_FRACTION, NVLS_CHUNK_BYTES, NVLS_PIPELINE_FILL_CHUNKS,
            *LAUNCH_S.values(), HOST_LAUNCH_PER_GPU_S, HOST_LAUNCH_PER_CHANNEL_S]
