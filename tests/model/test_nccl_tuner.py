"""NCCL's own tuner (``gpucomm.model.nccl_tuner``): its constants as read at v2.30.7-1, values computed by hand
from ``src/graph/tuning.cc``, the graphs NCCL prints, the choices NCCL is seen to make, and how far its times are
from the bundled measurements (it ranks alternatives; it is not built to predict wall-clock time).
"""

from __future__ import annotations

import csv
import inspect
import re
import statistics
from importlib import resources

import pytest

from gpucomm import GpucommError
from gpucomm.model import nccl_tuner as nt
from gpucomm.model.hardware import calibration as cal

H100_LINK = nt.nvlink_bw_bytes_per_s(90, 18)   # 18 NVLinks x 20.6 GB/s (topo.h:22) = 370.8 GB/s
A100_LINK = nt.nvlink_bw_bytes_per_s(80, 12)   # 12 x 20 GB/s (topo.h:21) = 240 GB/s
B200_LINK = nt.nvlink_bw_bytes_per_s(100, 18)  # 18 x 40.1 GB/s (topo.h:24)
MiB = 1 << 20


@pytest.fixture(scope="module")
def h100():
    comm = nt.build_comm(90, 8, H100_LINK)
    return comm, nt.tuner_table(comm)


# ----------------------------------------------------------------------------------------------- constants
def test_constants_are_those_of_tuning_cc_at_the_tag():
    # Read off src/graph/tuning.cc at v2.30.7-1, lines 139-212 and 620-627.
    assert nt.NCCL_TAG == "v2.30.7-1"
    assert nt.BASE_LATENCY_US["tree"] == (6.8, 14.0, 8.4) and nt.BASE_LATENCY_US["ring"] == (6.6, 14.0, 8.4)
    assert nt.BASE_LATENCY_US["pat"] == (8.0, 8.0, 8.0) and nt.BASE_LATENCY_US["nvls"] == (0.0, 0.0, 0.0)
    assert nt.HW_LATENCY_US["nvlink"]["ring"] == (0.6, 1.9, 3.4) and nt.HW_LATENCY_US["nvlink"]["tree"] == (0.6, 1.25, 4.0)
    assert nt.HW_LATENCY_US["pci"]["ring"] == (1.0, 2.5, 5.7) and nt.HW_LATENCY_US["net"]["ring"] == (2.7, 4.0, 14.0)
    assert nt.HW_LATENCY_US["net"]["tree"] == (5.0, 8.5, 14.0)
    assert nt.HW_LATENCY_US["nvlink"]["nvls"][2] == 25.0 and nt.HW_LATENCY_US["net"]["nvls_tree"][2] == 20.9
    assert nt.LL_MAX_BW_GBPS[1] == (87.7, 22.5, 19.0) and nt.LL_MAX_BW_GBPS[3] == (282.0, 90.0, 70.0)
    assert nt.PER_CH_MAX_RING_LL128_BW_GBPS[2] == (36.7, 36.7, 36.7)
    assert nt.PER_CH_MAX_TREE_BW_GBPS[3] == (70.0, 42.8, 24.0)
    assert nt.PER_CH_MAX_NVLS_TREE_BW_GBPS[2] == (0.0, 57.7, 45.5)
    assert nt.NVLS_EFFICIENCY == (0.0, 0.0, 0.85, 0.74)
    assert all(len(row) == 24 for row in nt.TREE_CORRECTION_FACTOR.values())
    assert min(nt.TREE_CORRECTION_FACTOR["Simple"]) == 0.5 and nt.TREE_CORRECTION_FACTOR["LL"][12] == 0.4
    assert (nt.RING_LL_BW_FACTOR, nt.LL128_BW_FACTOR, nt.PAT_BW_FACTOR) == (0.5, 0.92, 0.75)
    assert nt.NVLINK_BW_GBPS[90] == 20.6 and nt.NVLINK_BW_GBPS[86] == 12.0 and nt.PCI_BW_GBPS[3] == 12.0
    assert nt.SPEED_ARRAY_INTRA_GBPS["hopper"][:3] == (60.0, 50.0, 40.0)


def test_every_constant_docstring_cites_a_file_and_line():
    source = inspect.getsource(nt)
    for name in ("BASE_LATENCY_US", "HW_LATENCY_US", "LL_MAX_BW_GBPS", "PER_CH_MAX_TREE_BW_GBPS", "NVLS_EFFICIENCY",
                 "TREE_CORRECTION_FACTOR", "RING_PLATEAU_FACTOR", "THREAD_THRESHOLD", "NVLINK_BW_GBPS",
                 "SPEED_ARRAY_INTRA_GBPS", "NET_OVERHEAD_US", "PAT_LATENCY_PER_RANK_US"):
        block = source.split(f"\n{name} = ", 1)[1].split('"""', 2)[1]
        assert re.search(r"\.(cc|h):\d+", block), f"{name}: no file:line in its docstring"


# ----------------------------------------------------------------------------------------------- graphs
def test_search_reproduces_the_graphs_nccl_prints_for_8x_h100():
    # NVIDIA/nccl#1197 (NCCL 2.19.4, H100 NVSwitch): "Pattern 4 ... nChannels 12, bw 30.000000/30.000000",
    # "Pattern 1 ... nChannels 12, bw 30/30", "Pattern 5 ... nChannels 8, bw 40.000000/60.000000".
    comm = nt.build_comm(90, 8, H100_LINK)
    ring, tree, nvls = comm.graphs["ring"], comm.graphs["tree"], comm.graphs["nvls"]
    assert (ring.num_channels, ring.bw_intra_gbps, ring.bw_inter_gbps) == (12, 30.0, 30.0)
    assert (tree.num_channels, tree.bw_intra_gbps) == (12, 30.0)
    assert (nvls.num_channels, nvls.bw_intra_gbps, nvls.bw_inter_gbps) == (8, 40.0, 60.0)
    assert comm.num_channels == 24 and comm.nvls_channels == 16   # connect.cc:460 doubles; nvls.cc:155


def test_search_on_a100_finds_12_channels_of_20_gbps():
    # 6 channels of 40 fill the 240 GB/s links, then ncclTopoDupChannels makes them 12 of 20 (search.cc:1036-1049).
    comm = nt.build_comm(80, 8, A100_LINK)
    assert (comm.graphs["ring"].num_channels, comm.graphs["ring"].bw_intra_gbps) == (12, 20.0)
    assert "nvls" not in comm.graphs and comm.num_channels == 24


# ----------------------------------------------------------------------------------------------- the table, by hand
def test_h100_all_reduce_table_by_hand(h100):
    _, table = h100
    lat = {k[1:]: v * 1e6 for k, v in table.latency_s.items() if k[0] == "all_reduce"}
    bw = {k[1:]: v / 1e9 for k, v in table.bw_bytes_per_s.items() if k[0] == "all_reduce"}
    n, steps = 8, 14
    # Ring: base + 2(n-1) NVLink steps; bandwidth 12 channels x 30 GB/s, per protocol, x n/nsteps (tuning.cc:327-379).
    assert lat[("ring", "Simple")] == pytest.approx(8.4 + steps * 3.4)
    assert lat[("ring", "LL")] == pytest.approx(6.6 + steps * 0.6)
    assert lat[("ring", "LL128")] == pytest.approx(14.0 + steps * 1.9)
    assert bw[("ring", "Simple")] == pytest.approx(360 * n / steps)
    assert bw[("ring", "LL")] == pytest.approx(min(141.0, 360 * 0.5) * n / steps)
    assert bw[("ring", "LL128")] == pytest.approx(min(360 * 0.92, 12 * 36.7) * n / steps)
    # Tree on one node: a chain, 2 (ppn-1) steps; bandwidth x0.92 capped by 12 x 38.7, then x0.5 (up and down).
    assert lat[("tree", "Simple")] == pytest.approx(8.4 + 2 * 7 * 4.0)
    assert bw[("tree", "Simple")] == pytest.approx(min(360 * 0.92, 12 * 38.7) * 0.5)
    assert bw[("tree", "LL")] == pytest.approx(min(360 * 0.92 / 3.8, 141.0) * 0.5)
    # NVLS: no base, one NVLink latency; 8 channels x min(40 x 0.85 x 7/8 x 2, bwInter 60) x n/nsteps.
    assert lat[("nvls", "Simple")] == pytest.approx(25.0)
    assert bw[("nvls", "Simple")] == pytest.approx(8 * min(40 * 0.85 * 7 / 8 * 2, 60) * n / steps)
    # Hopper with NVLink: LL128 on; NVLS Tree off on one node; no CollNet without a plugin.
    assert bw[("ring", "LL128")] > 0 and bw[("nvls_tree", "Simple")] == 0 and bw[("collnet_direct", "Simple")] == 0


def test_all_gather_and_broadcast_latencies_by_hand(h100):
    _, table = h100
    assert table.latency_s[("all_gather", "ring", "Simple")] == pytest.approx((8.4 + 7 * 3.4) * 1e-6)
    # Broadcast/reduce: one hop when every channel has the same ring (tuning.cc:395-397).
    assert table.latency_s[("broadcast", "ring", "LL")] == pytest.approx((6.6 + 0.6) * 1e-6)
    # All-gather ring: bus x n/(n-1); NVLS all_gather: bus bandwidth not converted (tuning.cc:377).
    assert table.bw_bytes_per_s[("all_gather", "ring", "Simple")] == pytest.approx(360e9 * 8 / 7)
    assert ("all_gather", "tree", "Simple") not in table.bw_bytes_per_s


def test_algo_time_applies_the_tree_correction_and_the_ring_plateau():
    comm = nt.build_comm(80, 8, A100_LINK)
    table = nt.tuner_table(comm)
    size = 1 * MiB   # log2(2^20 / 64) = 14 -> Simple factor 0.5 (tuning.cc:626)
    lat = table.latency_s[("all_reduce", "tree", "Simple")]
    bw = table.bw_bytes_per_s[("all_reduce", "tree", "Simple")]
    assert nt.algo_time_s(comm, table, "all_reduce", "tree", "Simple", size) == pytest.approx(lat + size / (bw * 0.5))
    two_nodes = nt.build_comm(90, 16, H100_LINK, num_nodes=2, nic_bw_bytes_per_s=50e9)
    t2 = nt.tuner_table(two_nodes)
    lat2 = t2.latency_s[("all_reduce", "ring", "Simple")]
    bw2 = t2.bw_bytes_per_s[("all_reduce", "ring", "Simple")]
    big = 256 * MiB   # every rank's share of a channel >= 64 B: latency x1.4 from sm80 (tuning.cc:647-650)
    assert nt.algo_time_s(two_nodes, t2, "all_reduce", "ring", "Simple", big) == pytest.approx(lat2 * 1.4 + big / bw2)
    assert nt.algo_time_s(two_nodes, t2, "all_reduce", "nvls", "Simple", big) is None   # NVLS across nodes needs CollNet


def test_multi_node_ring_latency_counts_network_steps():
    comm = nt.build_comm(90, 16, H100_LINK, num_nodes=2, nic_bw_bytes_per_s=50e9)
    table = nt.tuner_table(comm)
    # 2(n-1) = 30 steps, 2(nNodes-1) = 2 of them through the network (2.7 us for LL), the rest max(0.6, 1.0 net
    # overhead on Intel) (tuning.cc:404-412).
    assert table.latency_s[("all_reduce", "ring", "LL")] == pytest.approx((6.6 + 28 * 1.0 + 2 * 2.7) * 1e-6)
    # Tree across 2 nodes: chain of 8 inside, log2(2) = 1 network hop, up and down (tuning.cc:414-417).
    assert table.latency_s[("all_reduce", "tree", "LL")] == pytest.approx((6.8 + 2 * (7 * 0.6 + 1 * 5.0)) * 1e-6)


def test_pat_only_with_one_gpu_per_node_from_2_23():
    comm = nt.build_comm(90, 4, 48e9, num_nodes=4, nic_bw_bytes_per_s=50e9, nvswitch=False)
    table = nt.tuner_table(comm)
    # log2(4) x 14 / 3.5 + 2.8 x 4 on the 8 us base (tuning.cc:429-433; the Tree network row at ppn = 1).
    assert table.latency_s[("all_gather", "pat", "Simple")] == pytest.approx((8.0 + 2 * 14 / 3.5 + 4 * 2.8) * 1e-6)
    assert table.bw_bytes_per_s[("all_gather", "pat", "Simple")] > 0
    assert nt.tuner_table(nt.with_version(comm, (2, 22, 3))).bw_bytes_per_s.get(("all_gather", "pat", "Simple"), 0) == 0
    eight = nt.tuner_table(nt.build_comm(90, 16, H100_LINK, num_nodes=2, nic_bw_bytes_per_s=50e9))
    assert ("all_gather", "pat", "Simple") not in eight.bw_bytes_per_s


# ----------------------------------------------------------------------------------------------- the choice
def test_choice_small_to_large_on_8x_h100(h100):
    comm, table = h100
    small = nt.choose(comm, "all_reduce", 8, table=table)
    assert (small.algorithm, small.protocol, small.num_channels) == ("ring", "LL", 1)
    assert small.time_s == pytest.approx(15.0e-6, rel=1e-3)
    assert min(small.times_s.values()) == small.time_s
    assert nt.choose(comm, "all_reduce", 1 << 30, table=table).algorithm == "nvls"
    # Channels drop while nBytes < nc x 512 threads x 8 x nRanks bytes (enqueue.cc topoGetAlgoInfo).
    assert nt.choose(comm, "all_reduce", 64 << 10, table=table).num_channels == 2
    only_ring = nt.choose(comm, "all_reduce", 1 << 30, table=table, algorithms=("ring",))
    assert (only_ring.algorithm, only_ring.protocol) == ("ring", "Simple")


@pytest.mark.parametrize("version,link,cc,first_nvls", [
    # case C14 (ml-engineering's network README, NCCL 2.27.7): NCCL ran NVLS from 5 H100/H200s and from 6 B200s
    ((2, 27, 7), H100_LINK, 90, 5),
    ((2, 27, 7), B200_LINK, 100, 6),
    ((2, 30, 7), H100_LINK, 90, 6),                                     # nvlsEfficiency (2.28+) moves it
    ((2, 30, 7), B200_LINK, 100, 8),
])
def test_gpu_count_from_which_nccl_picks_nvls(version, link, cc, first_nvls):
    picks = {n: nt.choose(nt.build_comm(cc, n, link, nccl_version=version), "all_reduce", 1 << 30).algorithm
             for n in range(2, 9)}
    assert [n for n, a in picks.items() if a == "nvls"] == list(range(int(first_nvls), 9)), picks


def test_ll128_enablement_follows_the_release_and_the_gpu():
    a100 = nt.build_comm(80, 4, A100_LINK)
    key = ("all_reduce", "ring", "LL128")
    assert nt.tuner_table(a100).bw_bytes_per_s[key] > 0
    assert nt.tuner_table(nt.with_version(a100, (2, 6, 4))).bw_bytes_per_s[key] == 0       # sm70 only before 2.7
    a40 = nt.build_comm(86, 2, nt.nvlink_bw_bytes_per_s(86, 4), nvswitch=False)
    assert nt.tuner_table(a40).bw_bytes_per_s[key] > 0                                     # every sm70+ from 2.27
    assert nt.tuner_table(nt.with_version(a40, (2, 26, 6))).bw_bytes_per_s[key] == 0
    pcie = nt.build_comm(90, 4, 48e9, type_intra="PXB", nvswitch=False)
    assert nt.tuner_table(pcie).bw_bytes_per_s[key] == 0                                   # NVLink only (tuning.cc:531)
    assert nt.tuner_table(nt.with_version(nt.build_comm(90, 8, H100_LINK), (2, 16, 5))).bw_bytes_per_s[
        ("all_reduce", "nvls", "Simple")] == 0                                             # NVLS from 2.17


def test_bad_input_is_refused_by_name():
    comm = nt.build_comm(90, 8, H100_LINK)
    with pytest.raises(GpucommError, match="all_to_all"):
        nt.choose(comm, "all_to_all", 1024)
    with pytest.raises(GpucommError, match="ring2"):
        nt.algo_time_s(comm, nt.tuner_table(comm), "all_reduce", "ring2", "LL", 8)
    with pytest.raises(GpucommError, match="num_nodes"):
        nt.build_comm(90, 6, H100_LINK, num_nodes=4, nic_bw_bytes_per_s=50e9)
    with pytest.raises(GpucommError, match="SYSX"):
        nt.Graph(1, 1e9, 1e9, type_intra="SYSX")
    with pytest.raises(GpucommError, match="no algorithm"):
        nt.choose(comm, "all_reduce", 1024, algorithms=("pat",))


def test_nccl_bytes_is_the_whole_buffer_for_all_gather_and_reduce_scatter():
    assert nt.nccl_bytes("all_gather", 1024, 8) == 8192
    assert nt.nccl_bytes("reduce_scatter", 1024, 8) == 8192
    assert nt.nccl_bytes("all_reduce", 1024, 8) == 1024


# ----------------------------------------------------------------------------------------------- vs measurements
def _rows(name: str) -> list[dict]:
    text = resources.files("gpucomm.model").joinpath("data", name).read_text()
    return list(csv.DictReader(line for line in text.splitlines() if line and not line.startswith("#")))


def _ratios(comm, points):
    table = nt.tuner_table(comm)
    return {b: nt.choose(comm, "all_reduce", b, table=table).time_s / t for b, t in points}


def test_large_messages_within_a_quarter_small_ones_two_to_three_times_fast():
    """The tuner's times against the two bundled 8-GPU sweeps (full per-band figures: scripts/nccl_tuner_vs_measurements.py).

    >= 64 MiB it is within 25 % (its bandwidth is the search's, 360 GB/s H100 / 240 GB/s A100 bus); below 1 MiB it
    is 2-3x too fast: it has no launch term and counts 0.6 us per NVLink LL step.
    """
    a100 = _ratios(nt.build_comm(80, 8, A100_LINK, nccl_version=(2, 18, 5)),
                   [(int(r["bytes"]), int(r["bytes"]) * 1.75 / (float(r["busbw_GBps"]) * 1e9))
                    for r in _rows("azure_a100_allreduce_busbw.csv")])
    h200 = _ratios(nt.build_comm(90, 8, H100_LINK, nccl_version=(2, 27, 7)),
                   [(int(r["bytes"]), float(r["time_us_derived"]) * 1e-6) for r in _rows("mleng_8xH200_torch_allreduce.csv")])
    for ratios in (a100, h200):
        large = [r for b, r in ratios.items() if b >= 64 * MiB]
        small = [r for b, r in ratios.items() if b < MiB]
        assert 0.75 <= min(large) and max(large) <= 1.05, large
        assert 0.3 <= min(small) and max(small) <= 0.6, small
        assert 0.85 <= statistics.median(large) <= 1.05


def test_ring_ll_step_latency_is_a_third_of_the_measured_one():
    # nccl-tests#123: DGX A100, NCCL_ALGO=Ring, one channel, 8 B: ~2 us per ring step measured (LL_STEP_LATENCY_S),
    # 0.6 us in the tuner. The tuner's whole latency is 6.6 + 2(n-1) x 0.6 us.
    rows = _rows("dgxa100_ring_small_msg_latency_vs_gpus.csv")
    predicted = []
    for r in rows:
        comm = nt.build_comm(80, int(r["n_gpus"]), A100_LINK)
        predicted.append(nt.choose(comm, "all_reduce", 8, algorithms=("ring",)).time_s * 1e6)
    steps = [2 * (int(r["n_gpus"]) - 1) for r in rows]
    slope = (predicted[-1] - predicted[0]) / (steps[-1] - steps[0])
    assert slope == pytest.approx(0.6, abs=0.01)
    assert cal.LL_STEP_LATENCY_S.value * 1e6 / slope == pytest.approx(3.3, abs=0.1)
    assert all(p < float(r["measured_us"]) for p, r in zip(predicted, rows))


# ----------------------------------------------------------------------------------------------- docstrings
def test_public_functions_have_numpydoc_sections():
    for name, obj in vars(nt).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != nt.__name__:
            continue
        members = [(name, obj)] if inspect.isfunction(obj) else \
            [(f"{name}.{m}", f) for m, f in vars(obj).items() if inspect.isfunction(f) and not m.startswith("_")] \
            if inspect.isclass(obj) else []
        for qual, func in members:
            doc = inspect.getdoc(func) or ""
            params = [p for p in inspect.signature(func).parameters if p != "self"]
            assert doc, qual
            if params:
                assert re.search(r"^Parameters\n-+$", doc, re.M), f"{qual}: no Parameters section"
            if inspect.signature(func).return_annotation not in (None, "None", inspect.Signature.empty):
                assert re.search(r"^Returns\n-+$", doc, re.M), f"{qual}: no Returns section"
