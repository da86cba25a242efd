"""Unit tests of the model: units, catalog, busbw factors, alpha-beta cost, TP sizes, the published Llama-3-70B TP=4 numbers."""

import math

import pytest

from gpucomm import GpucommError
from gpucomm.model.collectives import busbw_bytes_per_s, busbw_factor
from gpucomm.model.cost import collective_cost, effective_bw_bytes_per_s, ring_steps
from gpucomm.model.fabric import make_fabric
from gpucomm.model.hardware import LINKS, get_link
from gpucomm.model.hardware.calibration import all_parameters
from gpucomm.model.tp import tp_all_reduce_bytes, tp_forward_comm
from gpucomm.model.units import MiB, format_size, parse_size

# Baobao Algorithm Notes' article on NVLink and Llama-3-70B inference (English translation "Why NVLink Supercharges
# Llama 3 70B Inference: A Deep Performance Breakdown", besthub.dev; undated, vLLM v0.6.6): nccl-tests all_reduce of
# one Llama-3-70B TP=4 activation (4096 tokens x 8192 x fp16) on 4x A100, NVLink vs PCIe 4.0 with P2P disabled.
MEASURED_NVLINK3_US = 603
MEASURED_PCIE4_NO_P2P_US = 11369


@pytest.mark.parametrize("text,expected", [
    ("8", 8), ("64MiB", 64 * MiB), ("64MIB", 64 * MiB), ("1GB", 10**9), ("1.5KiB", 1536), ("128M", 128 * MiB),
    ("2 GiB", 2 * 1024**3), ("1e3", 1000), (4096, 4096),
])
def test_parse_size_accepts_binary_and_decimal_units(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["", "-5MiB", "0", "abc", "5XB", "1..2MB", "nan", "inf", -3, 0, True, "0.1B", "64Mb", "8b", "64mib", "1.5B", 2.5, "1e400"])  # noqa: E501
def test_parse_size_refuses_bad_input_naming_the_value(bad):
    with pytest.raises(GpucommError) as err:
        parse_size(bad)
    assert repr(bad) in str(err.value) or str(bad) in str(err.value)
    assert "\n" not in str(err.value)


def test_format_size_uses_binary_units():
    assert format_size(64 * MiB) == "64 MiB"
    assert format_size(10**9) == "954 MiB"


def test_catalog_is_per_direction_with_sources():
    for link in LINKS.values():
        assert link.source.startswith("https://"), link.key
        if link.kind == "nvlink":  # NVIDIA adds both directions of the per-direction rate
            assert link.bidir_marketing_bytes_per_s == pytest.approx(2 * link.bw_bytes_per_s), link.key
    # PCI-SIG counts PCIe 3.0+ at the raw bit rate: 32, 64, 128 GB/s for x16, not 2 x 15.75, 31.5, 63
    assert [get_link(f"pcie{g}").bidir_marketing_bytes_per_s / 1e9 for g in (3, 4, 5, 6)] == [32, 64, 128, 256]
    assert get_link("nvlink3").bw_bytes_per_s == 300e9      # NVIDIA's "600 GB/s" is both directions
    assert get_link("nvlink4").bw_bytes_per_s == 450e9
    assert get_link("pcie4").bw_bytes_per_s == pytest.approx(31.5e9, rel=1e-3)
    assert get_link("pcie5").bw_bytes_per_s == pytest.approx(63.0e9, rel=1e-3)


def test_every_calibration_parameter_has_a_source():
    for param in all_parameters():
        assert param.source.startswith("https://") and param.notes and param.unit, param.name


@pytest.mark.parametrize("collective,n,factor", [
    ("all_reduce", 4, 1.5), ("all_reduce", 8, 1.75), ("all_reduce", 1, 0.0), ("all_gather", 8, 0.875),
    ("reduce_scatter", 2, 0.5), ("broadcast", 8, 1.0), ("reduce", 8, 1.0), ("all_to_all", 4, 0.75), ("send_recv", 2, 1.0),
])
def test_busbw_factors_match_nccl_tests(collective, n, factor):
    assert busbw_factor(collective, n) == factor


def test_busbw_is_not_the_articles_631_gbps():
    # The article divides 384 MB (traffic summed over 4 GPUs) by 603 us and calls it 631 GB/s.
    # Per link and direction, nccl-tests' busbw is 167 GB/s, within NVLink 3.0's 300 GB/s.
    assert busbw_bytes_per_s("all_reduce", 64 * MiB, MEASURED_NVLINK3_US * 1e-6, 4) / 1e9 == pytest.approx(166.9, abs=0.1)


def test_ring_all_reduce_on_4xa100_nvlink_is_15_percent_fast_of_the_article_and_says_why():
    cost = collective_cost("all_reduce", 64 * MiB, num_ranks=4, fabric="nvlink3")
    terms = dict(cost.terms)
    # The article measured 603 us. The jointly calibrated model is about 15 % fast there (no parameter is fitted to this
    # point; the ring pipeline fill once fitted on it alone was removed by the joint fit; the ring's Simple fill over
    # NVLink 3 that the joint fit now keeps, calibration.RING_FILL_STEPS_NVLINK3, comes from the A100 sweeps)
    assert -0.20 < cost.time_s * 1e6 / MEASURED_NVLINK3_US - 1 < -0.10
    assert terms["pipeline_fill"] > 0
    # the article's 603 us is slower than the 10-90 % band of the model's NVLink 1-64 MiB errors: this one
    # measurement is further off than nine in ten of the points the model is cross-validated on
    assert cost.time_low_s < cost.time_s < cost.time_high_s < MEASURED_NVLINK3_US * 1e-6
    assert cost.time_s == pytest.approx(sum(terms.values()))
    assert cost.time_s == pytest.approx(cost.latency_s + cost.transfer_s + cost.launch_s)
    assert cost.busbw_bytes_per_s == pytest.approx(cost.algbw_bytes_per_s * 1.5)


def test_host_staged_pcie4_matches_4_gpu_measurement_within_25_percent():
    cost = collective_cost("all_reduce", 64 * MiB, num_ranks=4, fabric=make_fabric("pcie4", p2p=False))
    assert cost.time_s * 1e6 == pytest.approx(MEASURED_PCIE4_NO_P2P_US, rel=0.25)


def test_large_messages_approach_effective_bandwidth_and_small_ones_latency():
    big = collective_cost("all_reduce", 16 * 1024**3, num_ranks=8, fabric="nvlink4", algorithm="ring")
    # NCCL's search on 8x H100: 12 ring channels x 30 GB/s = 360 GB/s (issue #1197), measured ~370 GB/s (C06)
    assert big.busbw_bytes_per_s == pytest.approx(effective_bw_bytes_per_s("nvlink4"), rel=0.05)
    small = collective_cost("all_reduce", 8, num_ranks=8, fabric="nvlink3", algorithm="ring")
    assert small.protocol == "LL" and small.transfer_s < 1e-8
    # nccl-tests #123: 8 B ring all_reduce on 8 A100s, LL, one thread per GPU: ~21 us; one thread driving all 8: 33.7
    assert small.time_s * 1e6 == pytest.approx(21, rel=0.1)
    driven = collective_cost("all_reduce", 8, num_ranks=8, fabric="nvlink3", algorithm="ring", gpus_per_thread=8)
    # the host thread's floor sets it: 8 x the floor per GPU, one value fitted jointly over every single-process run
    # (this host's is below it: 33.7 us measured)
    from gpucomm.model.hardware import calibration as cal

    assert driven.time_s == pytest.approx(8 * cal.HOST_LAUNCH_PER_GPU_S.value)
    assert driven.time_s * 1e6 == pytest.approx(33.7, rel=0.25)


def test_time_grows_with_size_and_busbw_never_exceeds_effective_bandwidth():
    from gpucomm.model.fabric import as_fabric
    from gpucomm.model.nccl_fabric import comm_and_table

    sizes = [2**k for k in range(3, 35)]
    for link in ("nvlink3", "pcie5"):
        ring = comm_and_table(as_fabric(link), 8)[0].graphs["ring"]  # what NCCL's search gives the ring
        times = [collective_cost("all_reduce", s, num_ranks=8, fabric=link).time_s for s in sizes]
        # non-decreasing: below the channel threshold NCCL adds channels as the message doubles (topoGetAlgoInfo),
        # so the time per channel, and the total, stays flat there
        assert all(a <= b * (1 + 1e-12) for a, b in zip(times, times[1:]))
        for s in sizes:
            c = collective_cost("all_reduce", s, num_ranks=8, fabric=link)
            assert c.busbw_bytes_per_s <= ring.num_channels * ring.bw_intra_bytes_per_s * (1 + 1e-12)


def test_ring_steps():
    assert ring_steps("all_reduce", 8) == 14
    assert ring_steps("all_gather", 8) == 7
    assert ring_steps("send_recv", 2) == 1


@pytest.mark.parametrize("kwargs,needle", [
    (dict(collective="all_reduce", msg_bytes=0, num_ranks=4, fabric="nvlink3"), "message size 0"),
    (dict(collective="all_reduce", msg_bytes=-8, num_ranks=4, fabric="nvlink3"), "message size -8"),
    (dict(collective="all_reduce", msg_bytes=8, num_ranks=0, fabric="nvlink3"), "GPUs/ranks 0"),
    (dict(collective="all_reduce", msg_bytes=8, num_ranks=4, fabric="nvlink9"), "unknown link 'nvlink9'"),
    (dict(collective="allreduce", msg_bytes=8, num_ranks=4, fabric="nvlink3"), "unknown collective 'allreduce'"),
    (dict(collective="all_reduce", msg_bytes=8, num_ranks=4, fabric="nvlink3", algorithm="magic"), "unknown algorithm"),
])
def test_cost_refuses_bad_input(kwargs, needle):
    collective = kwargs.pop("collective")
    msg = kwargs.pop("msg_bytes")
    with pytest.raises(GpucommError, match=needle.replace("(", r"\(")):
        collective_cost(collective, msg, **kwargs)


def test_no_p2p_is_refused_on_nvlink():
    with pytest.raises(GpucommError, match="no P2P"):
        make_fabric("nvlink3", p2p=False)


def test_llama70b_tp4_example_message_size_and_count():
    assert tp_all_reduce_bytes(4096, 8192, dtype="fp16") == 64 * MiB
    nv = tp_forward_comm("llama-3-70b", tp_size=4, num_tokens=4096, fabric="nvlink3")
    pc = tp_forward_comm("llama-3-70b", tp_size=4, num_tokens=4096, fabric=make_fabric("pcie4", p2p=False))
    assert nv.all_reduces_per_pass == 160
    # the article: 603 us x 160 = 96.48 ms and 11369 us x 160 = 1819.04 ms; the NVLink model is about 15 % fast of it
    # (see test_ring_all_reduce_on_4xa100_nvlink_is_15_percent_fast_of_the_article_and_says_why)
    assert -0.20 < nv.comm_per_pass_s * 1e3 / 96.48 - 1 < -0.10
    assert pc.comm_per_pass_s * 1e3 == pytest.approx(1819.04, rel=0.25)
    assert math.isclose(nv.comm_per_pass_s, 160 * nv.per_all_reduce.time_s)


@pytest.mark.parametrize("bad", [dict(num_tokens=0), dict(num_tokens=-1), dict(dtype="int3"), dict(model="gpt-5")])
def test_tp_refuses_bad_input(bad):
    kwargs = dict(model="llama-3-70b", tp_size=4, num_tokens=4096, fabric="nvlink3") | bad
    with pytest.raises(GpucommError):
        tp_forward_comm(kwargs.pop("model"), **kwargs)


def test_nvls_busbw_exceeds_the_link_rate_as_measured_on_h200():
    # stas00 8x H200: busbw 482.26 GB/s at 16 GiB, above NVLink 4's 450 GB/s per direction
    cost = collective_cost("all_reduce", 16 * 2**30, num_ranks=8, fabric="nvlink4")
    assert cost.algorithm == "nvls"
    assert cost.busbw_bytes_per_s / 1e9 == pytest.approx(482.26, rel=0.05)
    assert cost.busbw_bytes_per_s > 450e9


@pytest.mark.parametrize("n,busbw_gbps", [(5, 420), (6, 440), (7, 460), (8, 480)])
def test_nvls_busbw_vs_gpu_count_matches_nccl_issue_1455(n, busbw_gbps):
    # NCCL's tuner under 2.27 (min(bwIntra, bwInter) x 5/6): within 15 % of the issue's busbw (-5 % .. -13 %); the 2.28+
    # formula (bwIntra x 0.85 x (nCh-1)/nCh) gives 299 GB/s at 5 GPUs, far below what was measured
    cost = collective_cost("all_reduce", 4 * 2**30, num_ranks=n, fabric="nvlink4", algorithm="nvls", nccl_version="2.27.7")
    assert cost.busbw_bytes_per_s / 1e9 == pytest.approx(busbw_gbps, rel=0.15)


def test_nvls_only_behind_nvlink4_switches():
    with pytest.raises(GpucommError, match="nvls"):
        collective_cost("all_reduce", 2**20, num_ranks=8, fabric="nvlink3", algorithm="nvls")
    assert collective_cost("all_reduce", 2**30, num_ranks=8, fabric="nvlink3").algorithm == "ring"


def test_mesh_splits_bandwidth_like_nvidias_table():
    # NVIDIA's blog (NVLink and NVSwitch supercharge LLM inference, Aug 2024): on an 8-GPU point-to-point mesh
    # of H200 (900 GB/s both ways = 450 per direction), a pair gets 1/7
    from gpucomm.model.cost import pair_bw_bytes_per_s, per_gpu_bw_bytes_per_s
    from gpucomm.model.fabric import make_fabric

    mesh = make_fabric("nvlink4", topology="mesh", mesh_size=8)
    switch = make_fabric("nvlink4")
    assert 2 * pair_bw_bytes_per_s(mesh) / 1e9 == pytest.approx(900 / 7)  # NVIDIA's "128 GB/s" (both ways)
    for n, share in [(2, 1 / 7), (4, 3 / 7), (8, 1.0)]:
        assert per_gpu_bw_bytes_per_s(mesh, n) == pytest.approx(share * per_gpu_bw_bytes_per_s(switch, n))
    t_mesh = collective_cost("all_reduce", 2**30, num_ranks=2, fabric=make_fabric("nvlink4", topology="mesh")).time_s
    t_switch = collective_cost("all_reduce", 2**30, num_ranks=2, fabric="nvlink4").time_s
    assert t_mesh > 5 * t_switch


@pytest.mark.parametrize("algorithm", ["ring", "tree", "rhd", "one_shot", "two_shot"])
def test_every_all_reduce_algorithm_gives_a_positive_consistent_cost(algorithm):
    c = collective_cost("all_reduce", 2**20, num_ranks=8, fabric="nvlink3", algorithm=algorithm)
    assert c.time_s > 0 and c.algorithm == algorithm
    assert c.busbw_bytes_per_s == pytest.approx(c.algbw_bytes_per_s * 1.75)


def test_one_shot_beats_ring_for_small_messages_and_loses_for_large():
    small = {a: collective_cost("all_reduce", 16 * 2**10, num_ranks=8, fabric="nvlink4", algorithm=a).time_s
             for a in ("ring", "one_shot")}
    large = {a: collective_cost("all_reduce", 2**30, num_ranks=8, fabric="nvlink4", algorithm=a).time_s
             for a in ("ring", "one_shot")}
    assert small["one_shot"] < small["ring"] and large["one_shot"] > large["ring"]


def test_rhd_needs_a_power_of_two():
    with pytest.raises(GpucommError, match="power of two"):
        collective_cost("all_reduce", 2**20, num_ranks=6, fabric="nvlink3", algorithm="rhd")


@pytest.mark.parametrize("link,n,expected", [("nvlink4", 4, "ring"), ("nvlink4", 5, "nvls"), ("nvlink5", 5, "ring"),
                                             ("nvlink5", 6, "nvls")])
def test_auto_picks_nvls_only_from_the_gpu_count_nccl_does(link, n, expected):
    # case C14 (ml-engineering, NCCL 2.27.7 on that node): NVLS from 5 H200s, from 6 B200s; NCCL 2.30.7's tuner moves
    # both later (its NVLS formula changed in 2.28)
    # (NCCL's own pick: nccl_algorithm; the reported algorithm is the fastest by the model, which may differ)
    assert collective_cost("all_reduce", 2**30, num_ranks=n, fabric=link, nccl_version="2.27.7").nccl_algorithm == expected
    assert collective_cost("all_reduce", 2**30, num_ranks=5, fabric="nvlink4", nccl_version="2.30.7").nccl_algorithm == "ring"


def test_bridged_pairs_collapse_to_pcie_when_the_ring_leaves_the_pair():
    from gpucomm.model.hardware.gpus import bridge_link

    bridge = bridge_link("a40")
    two = collective_cost("all_reduce", 2**30, num_ranks=2, fabric=make_fabric(bridge, topology="pairs"))
    four = collective_cost("all_reduce", 2**30, num_ranks=4, fabric=make_fabric(bridge, topology="pairs", pcie_link="pcie4"))
    # what the links deliver (NCCL plans the pair with 4 NVLinks x 12 GB/s on sm86, topo.h, but the transfer runs at
    # the bridge's rate): 56.25 GB/s x the NVLink ring efficiency 0.80 = 45 GB/s for the pair (case C01 measured
    # 47.5), the PCIe 4.0 P2P rate between pairs (31.5 GB/s x 0.65)
    from gpucomm.model.hardware import calibration as cal

    assert two.busbw_bytes_per_s / 1e9 == pytest.approx(56.25 * cal.DEFAULT_NVLINK_RING_EFFICIENCY.value, rel=0.02)
    assert four.busbw_bytes_per_s == pytest.approx(effective_bw_bytes_per_s("pcie4"), rel=0.02)
    with pytest.raises(GpucommError, match="pcie link"):
        collective_cost("all_reduce", 2**20, num_ranks=4, fabric=make_fabric(bridge, topology="pairs", pcie_link="nvlink3"))


# --- the inter-socket hop ------------------------------------------------------------------------

def test_inter_socket_link_bounds_a_pcie_ring_and_only_when_slower():
    base = collective_cost("all_reduce", 2**30, num_ranks=4, fabric=make_fabric("pcie4", p2p=False))
    qpi = collective_cost("all_reduce", 2**30, num_ranks=4, fabric=make_fabric("pcie4", p2p=False, inter_socket="qpi_broadwell"))
    zen2 = collective_cost("all_reduce", 2**30, num_ranks=4, fabric=make_fabric("pcie4", p2p=False, inter_socket="xgmi_zen2"))
    # NCCL topo.h: BDW_QPI_BW 6 GB/s is below the staged PCIe 4.0 rate (~10 GB/s); AMD_BW 16 is above it
    assert qpi.busbw_bytes_per_s == pytest.approx(6e9, rel=0.02)
    assert zen2.time_s == base.time_s
    p2p = collective_cost("all_reduce", 2**30, num_ranks=8, fabric=make_fabric("pcie5", inter_socket="upi_skylake"))
    assert p2p.busbw_bytes_per_s < 10e9


def test_inter_socket_link_is_refused_where_traffic_does_not_cross_it():
    with pytest.raises(GpucommError, match="'xgmi_zen2'.*NVLink traffic does not cross"):
        collective_cost("all_reduce", 2**20, num_ranks=8, fabric=make_fabric("nvlink3", inter_socket="xgmi_zen2"))
    with pytest.raises(GpucommError, match="unknown inter-socket link 'upi'.*upi_skylake"):
        collective_cost("all_reduce", 2**20, num_ranks=4, fabric=make_fabric("pcie4", inter_socket="upi"))
    # a bridged pair talks over its bridge; only a ring over more GPUs leaves it for PCIe and the sockets
    pair = dict(fabric=make_fabric("nvlink3", topology="pairs", inter_socket="upi_skylake", gpu="a40"))
    with pytest.raises(GpucommError, match="2 GPUs of a bridged pair: their traffic stays on the NVLink bridge"):
        collective_cost("all_reduce", 2**30, num_ranks=2, **pair)
    assert collective_cost("all_reduce", 2**30, num_ranks=4, **pair).busbw_bytes_per_s < 10e9
    with pytest.raises(GpucommError, match="topology 'pairs' with link 'pcie5'"):
        collective_cost("all_reduce", 2**30, num_ranks=4, fabric=make_fabric("pcie5", topology="pairs"))
    with pytest.raises(GpucommError, match="topology 'mesh' with link 'pcie4'.*NVLink"):
        collective_cost("all_reduce", 2**30, num_ranks=4, fabric=make_fabric("pcie4", topology="mesh"))


def test_measured_socket_link_is_used_where_published():
    # dual EPYC Turin: NCCL v2.30.7 plans with 16 GB/s, GPUs measure ~47.5 GB/s each way; the PCIe 5.0 P2P ring (~41 GB/s
    # delivered) is then the slower hop, so the socket link does not limit the transfer
    across = collective_cost("all_reduce", 2**30, num_ranks=8, fabric=make_fabric("pcie5", inter_socket="xgmi_zen5"))
    same = collective_cost("all_reduce", 2**30, num_ranks=8, fabric="pcie5")
    assert across.busbw_bytes_per_s == pytest.approx(same.busbw_bytes_per_s, rel=1e-6)
    # a socket link slower than the ring does limit it
    slow = collective_cost("all_reduce", 2**30, num_ranks=8, fabric=make_fabric("pcie5", inter_socket="upi_skylake"))
    assert slow.busbw_bytes_per_s < 0.5 * same.busbw_bytes_per_s


# --- rings across nodes --------------------------------------------------------------------------

NDR = make_fabric("nvlink4", num_nodes=2, network="ib_ndr")  # 2 nodes x 8 H100, one 400 Gb/s NIC per GPU


def test_rings_across_nodes_run_at_the_nodes_total_nic_bandwidth():
    from gpucomm.model.hardware import calibration as cal
    from gpucomm.model.hardware import get_network

    nic = get_network("ib_ndr").bw_bytes_per_s * cal.NET_EFFICIENCY.value  # 50 GB/s x the fitted efficiency
    nvlink = effective_bw_bytes_per_s("nvlink4")  # near 8 NICs' rate: the slower of the two sets the pace
    for collective in ("all_gather", "reduce_scatter", "broadcast", "reduce"):
        cost = collective_cost(collective, 64 * 2**30, num_ranks=16, fabric=NDR)
        # one ring per NIC, each with 1/8 of the data: the 8 NICs together carry one ring's traffic
        # (NCCL's graph quantises the inter-node channel rate, so within 5 % of the NICs' total)
        assert cost.algorithm == "ring" and cost.busbw_bytes_per_s == pytest.approx(8 * nic, rel=0.05), collective
    # 4 NICs per node: half of it; the NVLink inside stays the limit when the NICs are faster
    assert collective_cost("all_gather", 64 * 2**30, num_ranks=16, fabric=NDR.replace(nics_per_node=4)).busbw_bytes_per_s == \
        pytest.approx(4 * nic, rel=0.05)
    xdr = collective_cost("all_gather", 64 * 2**30, num_ranks=16, fabric=make_fabric("nvlink4", num_nodes=2, network="ib_xdr"))
    # with 8 XDR NICs (8 x 100 GB/s) the node's NVLink is the limit: its delivered rate, as NCCL's graph plans it
    # (within 6 %)
    assert xdr.busbw_bytes_per_s == pytest.approx(nvlink, rel=0.06)
    # all_to_all: half of each buffer stays in the node, half crosses the network
    a2a = collective_cost("all_to_all", 8 * 2**30, num_ranks=16, fabric=NDR)
    assert a2a.transfer_s == pytest.approx(8 * 2**30 * 8 / 16 / nic, rel=1e-9)
    # send_recv: one flow on one NIC, whatever the NIC count
    one = collective_cost("send_recv", 2**30, num_ranks=2, fabric=NDR.replace(nics_per_node=1))
    assert one.transfer_s == pytest.approx(2**30 / nic, rel=1e-9)


def test_all_reduce_across_nodes_follows_nccl_and_keeps_hierarchical_as_an_explicit_schedule():
    big = collective_cost("all_reduce", 8 * 2**30, num_ranks=16, fabric=NDR)
    ring = collective_cost("all_reduce", 8 * 2**30, num_ranks=16, algorithm="ring", fabric=NDR)
    hier = collective_cost("all_reduce", 8 * 2**30, num_ranks=16, algorithm="hierarchical", fabric=NDR)
    # H100 NVSwitch nodes: NCCL runs NVLS Tree across nodes; the ring is bounded by the 8 NICs (360 GB/s)
    assert big.algorithm == "nvls_tree" and ring.time_s > big.time_s and big.nccl_version
    assert ring.busbw_bytes_per_s == pytest.approx(8 * 50e9 * 0.9, rel=0.02)
    assert hier.note.startswith("not NCCL's default") and not hier.nccl_version
    assert collective_cost("all_reduce", 2**20, num_ranks=16, algorithm="tree", fabric=NDR).algorithm == "tree"
    with pytest.raises(GpucommError, match="'one_shot' across 2 nodes is not modelled"):
        collective_cost("all_reduce", 2**20, num_ranks=16, algorithm="one_shot", fabric=NDR)
    # so a small all_gather is no slower than a small all_reduce of the same buffer
    assert collective_cost("all_gather", 16 * 8, num_ranks=16, fabric=NDR).time_s <= \
        collective_cost("all_reduce", 16 * 8, num_ranks=16, fabric=NDR).time_s


def test_a_gpu_feeds_its_nic_over_its_own_link():
    # one PCIe 3.0 GPU per node cannot push a 400 Gb/s NIC: never faster across nodes than inside one node
    for collective in ("all_reduce", "all_gather", "broadcast", "send_recv"):
        across = collective_cost(collective, 2**30, num_ranks=2, fabric=make_fabric("pcie3", num_nodes=2, network="ib_ndr"))
        inside = collective_cost(collective, 2**30, num_ranks=2, fabric="pcie3")
        assert across.time_s >= inside.time_s * 0.999, collective
    staged = collective_cost("all_reduce", 2**30, num_ranks=2,
                             fabric=make_fabric("pcie4", p2p=False, num_nodes=2, network="ib_xdr"))
    assert staged.busbw_bytes_per_s <= effective_bw_bytes_per_s("pcie4", p2p=False) * 1.001


def test_busbw_across_nodes_grows_with_the_message():
    sizes = [2**k for k in range(20, 34)]
    for network in ("ib_ndr", "eth_200g"):
        fabric = make_fabric("nvlink4", num_nodes=2, network=network)
        busbw = [collective_cost("all_reduce", s, num_ranks=16, fabric=fabric).busbw_bytes_per_s for s in sizes]
        assert all(b2 >= b1 * 0.999 for b1, b2 in zip(busbw, busbw[1:])), (network, busbw)


def test_counts_are_named_in_their_errors():
    # up to 576 NICs per node: an NVLink domain (GB200 NVL72: 72 NICs) is one node here
    with pytest.raises(GpucommError, match="NICs per node 577 is not valid"):
        collective_cost("all_reduce", 2**20, num_ranks=16, fabric=NDR.replace(nics_per_node=577))
    with pytest.raises(GpucommError, match="number of nodes 0 is not valid"):
        collective_cost("all_reduce", 2**20, num_ranks=16, fabric=make_fabric("nvlink4", num_nodes=0))
    with pytest.raises(GpucommError, match="^network 'ib_ndr' given for a single node"):
        collective_cost("all_reduce", 2**20, num_ranks=8, fabric=make_fabric("nvlink4", network="ib_ndr"))


def test_blackwell_nvls_delivers_nccls_share_of_the_hopper_fit():
    from gpucomm.model import nccl_tuner as nt
    from gpucomm.model.fabric import system_fabric
    from gpucomm.model.hardware import calibration as cal

    n, size = 8, 16 * 1024**3
    b200 = collective_cost("all_reduce", size, num_ranks=n, fabric=system_fabric("dgx_b200"), algorithm="nvls")
    ratio = nt.NVLS_EFFICIENCY[nt.ARCHS.index("blackwell")] / nt.NVLS_EFFICIENCY[nt.ARCHS.index("hopper")]
    link = system_fabric("dgx_b200").link.bw_bytes_per_s
    expected_bus = link * cal.NVLS_EFFICIENCY.value * ratio / (1 + 1 / n) * 2 * (n - 1) / n
    assert ratio == pytest.approx(0.74 / 0.85)
    assert b200.busbw_bytes_per_s == pytest.approx(expected_bus, rel=0.01)  # at 16 GiB latency and fill are < 1 %
    h100 = collective_cost("all_reduce", size, num_ranks=n, fabric="nvlink4", algorithm="nvls")
    assert h100.busbw_bytes_per_s == pytest.approx(
        get_link("nvlink4").bw_bytes_per_s * cal.NVLS_EFFICIENCY.value / (1 + 1 / n) * 2 * (n - 1) / n, rel=0.01)


def test_sync_launch_charges_the_host_dispatch_and_no_host_floor():
    from gpucomm.model.hardware import calibration as cal

    eager = collective_cost("all_reduce", 64 * 1024, num_ranks=8, fabric="nvlink4")
    sync = collective_cost("all_reduce", 64 * 1024, num_ranks=8, fabric="nvlink4", launch="sync", gpus_per_thread=8)
    assert sync.launch_s == cal.LAUNCH_S["sync"].value and sync.host_floor_s == 0.0
    assert sync.time_s - eager.time_s == pytest.approx(cal.LAUNCH_S["sync"].value - cal.LAUNCH_S["eager"].value)


def test_ll_overlap_is_what_the_h200_nccl_2_30_sweep_chose(monkeypatch):
    # the 8x H200 NCCL 2.30.7 back-to-back sweep below 1 MiB (S16, the sweep this choice of form was made on): without the
    # overlap the model is 45-80 % slow there (cost.CUT_THROUGH_PROTOCOLS says so), with it 20-28 % (leave-one-out:
    # the NVLink latency scale, one for every generation, is fitted above what Hopper alone would take)
    import gpucomm.model.cost as cost_module
    from gpucomm.model.validation import validate

    def errors():
        return [r.error for r in validate() if r.sweep == "S16" and r.msg_bytes < 2**20]

    overlapped = errors()
    assert all(abs(e) < 0.30 for e in overlapped)
    monkeypatch.setattr(cost_module, "CUT_THROUGH_PROTOCOLS", ())
    additive = errors()
    assert all(a > o + 0.1 for a, o in zip(additive, overlapped)) and max(additive) > 0.6


@pytest.mark.parametrize("collective", ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all"])
def test_one_rank_moves_nothing(collective):
    """On one rank nothing crosses a link: the time is the launch alone, for all_to_all too (it divided by zero)."""
    cost = collective_cost(collective, 2**20, num_ranks=1, fabric="nvlink4")
    assert cost.time_s == pytest.approx(collective_cost("all_reduce", 1, num_ranks=1, fabric="nvlink4").time_s)
    assert sum(t for _, t in cost.terms) == pytest.approx(cost.time_s)
