"""NCCL_DEBUG=INFO logs: what is read from each bundled log, what is flagged, and each line format (NCCL 2.4-2.30)."""

from __future__ import annotations

import json

import pytest

from gpucomm import GpucommError
from gpucomm.measure.logs.nccl_info import (
    SEVERITIES,
    TuningChoice,
    bundled_info_log_names,
    bundled_info_log_text,
    parse_nccl_info_log,
    read_bundled_info_log,
)

# What each bundled log holds (see src/gpucomm/model/data/nccl_info_logs/README.md for the situations):
# versions, ranks (and whether NCCL printed the total, else a lower bound), nodes, hosts in the prefixes,
# transports (connection lines per label), collective and NVLS
# channels, rings and trees printed, NCCL_* variables, networks, WARN lines, tuning choices (function, algorithm,
# protocol, smallest and largest size, calls), and the findings (code, severity, lines).
EXPECTED = {
    "aws_ofi_nccl_715": dict(
        versions=[], ranks=(8, False), nodes=None, hosts=1, transports={"P2P/CUMEM": 4}, channels=None, nvls=None, rings=0,
        trees=0, env={}, networks=[], warns=2, tuning=[], findings=[("warn_address_family", "error", (8, 11))]),
    "nccl_1358": dict(
        versions=[], ranks=(None, False), nodes=None, hosts=1, transports={}, channels=None, nvls=None, rings=0, trees=0, env={},
        networks=[], warns=0, tuning=[], findings=[("cross_socket", "warning", (14, 15, 17))]),
    "nccl_1412": dict(
        versions=[], ranks=(16, True), nodes=None, hosts=1, transports={"NET/IB": 4, "P2P/direct": 10}, channels=None,
        nvls=None, rings=0, trees=0, env={}, networks=[], warns=0, tuning=[],
        findings=[("no_gdrdma", "warning", (18, 19, 21, 22))]),
    "nccl_1453": dict(
        versions=[], ranks=(16, False), nodes=None, hosts=1, transports={"NET/IB/GDRDMA": 2, "P2P/CUMEM": 10}, channels=None,
        nvls=None, rings=0, trees=0, env={"NCCL_IB_QPS_PER_CONNECTION": "2", "NCCL_IB_GID_INDEX": "3"}, networks=[],
        warns=0, tuning=[], findings=[]),
    "nccl_1595": dict(
        versions=[], ranks=(None, False), nodes=None, hosts=0, transports={}, channels=None, nvls=None, rings=0, trees=0, env={},
        networks=[], warns=0, tuning=[(None, "Ring", "Simple", 805306368, 805306368, 6)], findings=[]),
    "nccl_1814": dict(
        versions=[], ranks=(64, True), nodes=None, hosts=1, transports={"NET/IB": 13, "P2P/CUMEM": 6}, channels=16, nvls=16,
        rings=0, trees=0, env={"NCCL_SOCKET_IFNAME": "bond0", "NCCL_IB_GID_INDEX": "3"}, networks=[], warns=0,
        tuning=[], findings=[("no_gdrdma", "warning", tuple(range(16, 29)))]),
    "nccl_1817": dict(
        versions=[], ranks=(8, True), nodes=None, hosts=1, transports={"SHM": 11}, channels=None, nvls=None, rings=0, trees=0,
        env={}, networks=[], warns=0, tuning=[], findings=[("p2p_not_used", "warning", tuple(range(3, 14)))]),
    "nccl_226": dict(
        versions=[], ranks=(64, True), nodes=None, hosts=29, transports={"NET/Socket": 11}, channels=None, nvls=None, rings=0,
        trees=4, env={}, networks=[], warns=0, tuning=[],
        findings=[("socket_network", "warning",
                   (3, 5, 8, 10, 11, 13, 14, 16, 20, 21, 22, 23, 24, 26, 29, 32, 33, 34, 35))]),
    "nccl_302": dict(
        versions=[], ranks=(158, False), nodes=None, hosts=1, transports={"NET/IB": 1, "P2P/IPC": 6}, channels=None, nvls=None,
        rings=0, trees=2, env={}, networks=[], warns=1, tuning=[],
        findings=[("warn_ib_setup", "error", (19,)), ("no_gdrdma", "warning", (16,))]),
    "nccl_892": dict(
        versions=[], ranks=(8, False), nodes=None, hosts=1, transports={"P2P/direct": 2}, channels=16, nvls=0, rings=0,
        trees=0, env={"NCCL_ALGO": "Tree,Ring,,CollnetDirect,CollnetChain,NVLS"}, networks=[], warns=0, tuning=[],
        findings=[("nvls_unavailable", "warning", (26, 28)), ("forced_algorithm", "warning", (21,))]),
    "nccl_928": dict(
        versions=[], ranks=(None, False), nodes=None, hosts=3, transports={}, channels=None, nvls=None, rings=0, trees=0, env={},
        networks=[], warns=3, tuning=[], findings=[("warn_ib_completion", "error", (3, 8, 13))]),
    "nccl_952": dict(
        versions=[], ranks=(16, True), nodes=None, hosts=1, transports={"NET/Socket": 2, "P2P/IPC": 14}, channels=None,
        nvls=None, rings=0, trees=0, env={}, networks=[], warns=0, tuning=[],
        findings=[("socket_network", "warning", (39, 40)), ("nvls_unavailable", "info", (26, 28, 31))]),
    "nccl_tests_166": dict(
        versions=[], ranks=(None, False), nodes=None, hosts=1, transports={}, channels=None, nvls=None, rings=0, trees=0, env={},
        networks=[], warns=6, tuning=[],
        findings=[("warn_shared_memory", "error", (3, 14, 22, 24, 32, 34)), ("nccl_error_system", "error", (12,))]),
    "nccl_tests_185": dict(
        versions=["2.19.3"], ranks=(2, True), nodes=None, hosts=2, transports={}, channels=4, nvls=None, rings=4, trees=1,
        env={}, networks=["IB"], warns=0, tuning=[], findings=[]),
    "nccl_tests_188": dict(
        versions=[], ranks=(16, False), nodes=None, hosts=1, transports={"NET/Socket": 1, "P2P/IPC": 9}, channels=2, nvls=0,
        rings=0, trees=0, env={}, networks=["Socket", "IB"], warns=1, tuning=[],
        findings=[("mixed_networks", "error", (4, 7, 9, 11, 13, 15)), ("warn_socket", "error", (30,)),
                  ("socket_network", "warning", (5, 16))]),
    "nccl_tests_307": dict(
        versions=["2.21.5"], ranks=(8, False), nodes=None, hosts=1, transports={"SHM": 9}, channels=None, nvls=None, rings=0,
        trees=2, env={}, networks=["IB"], warns=0, tuning=[],
        findings=[("p2p_not_used", "warning", tuple(range(29, 38)))]),
    "ray_lightning_24": dict(
        versions=[], ranks=(2, True), nodes=None, hosts=1, transports={"P2P/IPC": 1}, channels=2, nvls=None, rings=2, trees=1,
        env={}, networks=[], warns=1, tuning=[], findings=[("warn_cuda_ipc", "error", (9,))]),
}
NAMES = bundled_info_log_names()


def facts(name: str) -> dict:
    log = read_bundled_info_log(name)
    return dict(versions=list(log.nccl_versions), ranks=(log.num_ranks, log.num_ranks_exact), nodes=log.num_nodes, hosts=len(log.hosts),
                transports=log.transports, channels=log.coll_channels, nvls=log.nvls_channels, rings=len(log.rings),
                trees=len(log.trees), env=log.env, networks=list(log.networks), warns=len(log.warnings),
                tuning=[(g["function"], g["algorithm"], g["protocol"], g["min_bytes"], g["max_bytes"], g["calls"])
                        for g in log.tuning_summary()],
                findings=[(f.code, f.severity, f.lines) for f in log.findings])


def test_at_least_ten_logs_each_with_its_source_and_situation():
    assert set(NAMES) == set(EXPECTED) and len(NAMES) >= 10
    for name in NAMES:
        first, second = bundled_info_log_text(name).splitlines()[:2]
        assert first.startswith("# source: https://github.com/"), name
        assert second.startswith("# situation: ") and len(second) > 40, name


@pytest.mark.parametrize("name", NAMES)
def test_each_bundled_log_reads_and_flags_exactly(name):
    assert facts(name) == EXPECTED[name]


@pytest.mark.parametrize("name", NAMES)
def test_findings_point_at_log_lines_and_carry_a_fix_and_a_source(name):
    log = read_bundled_info_log(name)
    lines = bundled_info_log_text(name).splitlines()
    for f in log.findings:
        assert f.severity in SEVERITIES
        assert f.source.startswith("https://") and f.fix and f.evidence and f.title
        assert f.lines and all(3 <= n <= len(lines) for n in f.lines), (f.code, f.lines)  # never the header lines
        assert all(not lines[n - 1].lstrip().startswith("#") for n in f.lines)
    assert [SEVERITIES.index(f.severity) for f in log.findings] == sorted(SEVERITIES.index(f.severity) for f in log.findings)
    json.dumps(log.as_dict())  # the --json output


def test_the_details_of_three_logs():
    log = read_bundled_info_log("ray_lightning_24")  # NCCL 2.7 formats, the README example
    assert log.rings == {0: (0, 1), 1: (0, 1)}
    assert log.trees == {0: ("1/-1/-1->0->-1|-1->0->1/-1/-1", "1/-1/-1->0->-1|-1->0->1/-1/-1")}
    assert log.connections[0].via == "P2P/IPC" and log.connections[0].dst_rank == 1
    assert log.warnings[0].location == "transport/p2p.cc:238" and log.warnings[0].host == "z-pc"

    log = read_bundled_info_log("nccl_1453")
    net = [c for c in log.connections if c.transport == "NET/IB"]
    assert {(c.src_rank, c.dst_rank, c.direction, c.gdr, c.via) for c in net} == {
        (0, 15, "send", True, "NET/IBext_v8/0(7)/GDRDMA")}

    log = read_bundled_info_log("nccl_tests_188")
    assert log.ib_devices == ("mlx5_0:1/IB", "mlx5_2:1/IB", "mlx5_4:1/RoCE")
    assert log.socket_interfaces == ("ibs85f0", "ib0", "ibs102f0", "ib2")
    assert log.channel_counts[0].coll == 2 and log.channel_counts[0].nvls == 0 and log.channel_counts[0].collnet is None


# ---------------------------------------------------------------------------------------- line formats

def one(text: str):
    return parse_nccl_info_log(text)


@pytest.mark.parametrize("line, host", [
    ("[1,0]<stdout>:gpu6:1407:1595 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read", "gpu6"),  # OpenMPI
    ("0: node1:12:34 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read", "node1"),  # srun --label
    ("(pid=909608) z-pc:909608:910337 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read", "z-pc"),  # Ray
    ("  | 2024-11-28T07:42:14.532Z | algo-1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read", "algo-1"),
    ("[0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read", None),  # prefix stripped by the user
])
def test_launcher_prefixes_do_not_matter(line, host):
    log = one(line)
    assert log.transports == {"P2P/IPC": 1}
    assert log.hosts == ((host,) if host else ())


@pytest.mark.parametrize("via, label", [
    ("P2P/IPC/read", "P2P/IPC"), ("P2P/CUMEM/read", "P2P/CUMEM"), ("P2P/CUMEM/CE", "P2P/CUMEM"),
    ("P2P/MNNVL/read", "P2P/MNNVL"), ("P2P/direct pointer/read", "P2P/direct"), ("P2P/common device", "P2P/direct"),
    ("P2P/indirect/3[3]", "P2P/indirect"), ("SHM/direct/direct", "SHM"), ("SHM/CE/direct", "SHM"),
    ("direct shared memory", "SHM"), ("NET/IB/0/GDRDMA", "NET/IB/GDRDMA"), ("NET/IB/0(7)/GDRDMA(PCI)/Shared", "NET/IB/GDRDMA"),
    ("NET/IBext_v8/3", "NET/IB"), ("NET/Socket/0", "NET/Socket"), ("NET/AWS Libfabric/0/GDRDMA", "NET/AWS Libfabric/GDRDMA"),
])
def test_transport_of_each_via(via, label):
    assert one(f"h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via {via}").transports == {label: 1}


def test_collnet_connections_have_no_peer():
    c = one("h:1:2 [0] NCCL INFO CollNet 00/0 : 3 [send] via COLLNET/SHARP/0/GDRDMA").connections[0]
    assert (c.transport, c.gdr, c.src_rank, c.dst_rank, c.direction) == ("CollNet", True, 3, None, "send")


def test_old_ring_lines_and_graph_ring_lines():
    log = one("h:1:2 [0] NCCL INFO Ring 00 : 34 -> 33 [send] via NET/Socket/0\n"   # NCCL 2.4: a connection
              "h:1:2 [0] NCCL INFO Ring 00 : 7 -> 0 -> 1\n")                       # GRAPH: neighbours, not a connection
    assert [(c.src_rank, c.dst_rank, c.transport) for c in log.connections] == [(34, 33, "NET/Socket")]


@pytest.mark.parametrize("message, expected", [
    # 2.21-2.22: numbers, no function
    ("1048576 Bytes -> Algo 0 proto 1 time 20.500000", TuningChoice(None, 1048576, "Tree", "LL128", 20.5, None, 1)),
    # 2.23: the function first
    ("AllGather: 8 Bytes -> Algo 1 proto 0 time 10.250000", TuningChoice("AllGather", 8, "Ring", "LL", 10.25, None, 1)),
    # 2.24-2.30: names and the channel range
    ("AllReduce: 67108864 Bytes -> Algo NVLS_TREE proto SIMPLE channel{Lo..Hi}={0..15}",
     TuningChoice("AllReduce", 67108864, "NVLSTree", "Simple", None, (0, 15), 1)),
    ("ReduceScatter: 4096 Bytes -> Algo PAT proto LL channel{Lo..Hi}={0..0}",
     TuningChoice("ReduceScatter", 4096, "PAT", "LL", None, (0, 0), 1)),
    # 2.27-2.30: symmetric kernels
    ("AllReduce [Symmetric]: 4096 Bytes -> Kernel AllReduce_AGxLL_R nchannels 16 nthreads 512 nWorks 1",
     TuningChoice("AllReduce", 4096, "symmetric kernel AllReduce_AGxLL_R", "-", None, (0, 15), 1)),
])
def test_tuning_lines_of_each_release(message, expected):
    assert one(f"h:1:2 [0] NCCL INFO {message}").tuning == (expected,)


def test_versions_communicators_and_nodes():
    log = one("NCCL version 2.7.8+cuda11.0\n"                                  # bare printf line (2.4-2.11)
              "h:1:2 [0] NCCL INFO NCCL version 2.7.8+cuda11.0\n"
              "h:1:2 [0] NCCL INFO comm 0x5 rank 0 nranks 16 cudaDev 0 busId 1a000 - Init COMPLETE\n"
              "h:1:2 [0] NCCL INFO comm 0x6 rank 0 nRanks 8 nNodes 2 localRanks 4 localRank 0 MNNVL 0\n"
              "h:1:2 [0] NCCL INFO 24 coll channels, 24 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p "
              "channels per peer\n")
    assert (log.nccl_version, log.cuda_versions) == ("2.7.8", ("11.0",))
    assert (log.num_ranks, log.num_nodes, log.local_ranks, log.communicator_sizes) == (16, 2, 4, (8, 16))
    assert (log.coll_channels, log.nvls_channels, log.channel_counts[0].collnet) == (24, 0, 24)
    assert log.findings == ()


def test_different_versions_are_an_error():
    log = one("a:1:2 [0] NCCL INFO NCCL version 2.19.3+cuda12.3\nb:3:4 [0] NCCL INFO NCCL version 2.20.5+cuda12.4\n")
    assert log.nccl_version is None and list(log.nccl_versions) == ["2.19.3", "2.20.5"]
    assert [(f.code, f.severity, f.lines) for f in log.findings] == [("version_mismatch", "error", (1, 2))]


@pytest.mark.parametrize("lines, code, severity", [
    (["NCCL_P2P_DISABLE set by environment to 1."], "p2p_not_used", "warning"),
    (["NCCL_P2P_LEVEL set by environment to LOC"], "p2p_not_used", "warning"),
    (["P2P is disabled between connected GPUs 0 and 1. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1."],
     "p2p_not_used", "warning"),
    (["NCCL_MAX_NCHANNELS set by environment to 1."], "few_channels", "warning"),
    (["NCCL_MAX_CTAS set by environment to 2."], "few_channels", "warning"),
    (["NCCL_PROTO set by environment to Simple"], "forced_protocol", "warning"),
    (["NCCL_NVLS_ENABLE set by environment to 0."], "nvls_unavailable", "info"),
    (["NVLS multicast support is not available on dev 0"], "nvls_unavailable", "info"),
    (["comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0", "Using network Socket"],
     "socket_network", "warning"),
    (["Pattern 4, crossNic 0, nChannels 1, speed 6.000000/6.000000, type SYS/PHB, sameChannels 1"], "cross_socket",
     "warning"),
])
def test_each_setting_check(lines, code, severity):
    log = one("".join(f"h:1:2 [0] NCCL INFO {line}\n" for line in lines))
    assert [(f.code, f.severity) for f in log.findings] == [(code, severity)]


def test_nvls_missing_on_nvswitch_gpus_is_a_warning():
    text = ("#  Rank  0 Group  0 Pid  1 on h device  0 [0x0f] NVIDIA H100 80GB HBM3\n"
            "h:1:2 [0] NCCL INFO NVLS multicast support is not available on dev 0\n")
    assert [(f.code, f.severity) for f in one(text).findings] == [("nvls_unavailable", "warning")]
    for card in ("NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H800 PCIe", "NVIDIA A100-SXM4-80GB", "NVIDIA L40S"):
        text_card = text.replace("NVIDIA H100 80GB HBM3", card)
        assert [(f.code, f.severity) for f in one(text_card).findings] == [("nvls_unavailable", "info")], card


def test_gdrdma_counts_only_ib_connections():
    log = one("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n"
              "h:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via NET/IB/1\n"
              "h:1:2 [0] NCCL INFO Channel 02/0 : 0[0] -> 8[0] [send] via NET/Socket/0\n"
              "h:1:2 [0] NCCL INFO NCCL_NET_GDR_LEVEL set by environment to LOC\n")
    gdr = next(f for f in log.findings if f.code == "no_gdrdma")
    assert gdr.lines == (2, 4) and "1 of 2" in gdr.evidence and "NCCL_NET_GDR_LEVEL=LOC" in gdr.evidence


@pytest.mark.parametrize("warn, code", [
    ("transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with status=12 opcode=1 len=0 "
     "vendor err 129 (Send)", "warn_ib_completion"),
    ("misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-x (size 5967872)",
     "warn_shared_memory"),
    ("include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied", "warn_shared_memory"),
    ("misc/strongstream.cc:60 NCCL WARN Cuda failure 'CUDA driver is a stub library'", "warn_cuda_failure"),
    ("misc/socket.cc:538 NCCL WARN socketStartConnect: Connect to 10.0.0.2<4444> failed : Connection refused",
     "warn_socket"),
    ("misc/ibvwrap.cc:160 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out", "warn_ib_setup"),
    ("misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]", "warn_libibverbs"),
    ("init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls", "warn_mismatch"),
    ("proxy.cc:1000 NCCL WARN [Proxy Service] Poll failed with error 1", "warn_other"),
])
def test_warn_kinds(warn, code):
    log = one(f"h:1:2 [0] {warn}\n")
    assert [f.code for f in log.findings] == [code]
    assert log.warnings[0].location == warn.split()[0]


@pytest.mark.parametrize("warn", [
    "NET/IB : Got completion from peer x<1> with error 12, opcode 0",
    "NET/IB : Got completion from peer 10.0.0.2<1> with status=12 opcode=1 len=0 vendor err 129 (Send)",
    # the format of net_ib's WARN from 2.29: the status's name, then its number
    "NET/IB: Got completion from peer 10.0.0.2<1> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) "
    "vendor_err=129 hca mlx5_0",
    # from 2.29.7 a line without the status comes first
    "NET/IB: ncclIbTest: Got CQE with error (devIndex=0, req=0x1, comm=0x2 (send), wr_id=7, qp_num=99)\n"
    "h:1:2 [0] transport/net_ib/p2p.cc:2 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<1> with "
    "status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 hca mlx5_0",
])
def test_ib_completion_status_is_explained(warn):
    log = one(f"h:1:2 [0] transport/net_ib/p2p.cc:1 NCCL WARN {warn}\n")
    assert [f.code for f in log.findings] == ["warn_ib_completion"]
    assert log.findings[0].code == "warn_ib_completion"
    assert "(status 12: transport retry counter exceeded" in log.findings[0].evidence


def test_ib_local_protection_error_points_at_gpudirect_rdma_first():
    # status 4 is the host's GPUDirect RDMA path (ACS, peermem), not the fabric: that fix comes first
    log = one("h:1:2 [0] transport/net_ib/p2p.cc:1 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<1> with "
              "status=IBV_WC_LOC_PROT_ERR(4) opcode=IBV_WC_RECV(128) vendor_err=81 hca mlx5_0\n")
    finding = log.findings[0]
    assert "(status 4: local protection error" in finding.evidence
    assert finding.fix.startswith("a local protection error is usually GPUDirect RDMA")
    assert "ACS" in finding.fix and "test the fabric" in finding.fix
    retry = one("h:1:2 [0] transport/net_ib/p2p.cc:1 NCCL WARN NET/IB : Got completion from peer x<1> with error 12, "
                "opcode 0\n").findings[0]
    assert retry.fix.startswith("test the fabric")


def test_result_strings_in_application_lines():
    log = one("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled cuda error, NCCL version 2.18.1\n")
    assert log.nccl_version == "2.18.1"
    assert [(f.code, f.lines) for f in log.findings] == [("nccl_error_cuda", (1,))]
    assert "no WARN line" in log.findings[0].evidence


@pytest.mark.parametrize("text", ["", "\n\n", "hello\nworld\n", "# nThread 1 nGpus 8\n#  NCCL INFO in a comment\n",
                                  "nccl-tests version 2.13.8 nccl-headers=21803"])
def test_text_without_nccl_lines_is_refused(text):
    with pytest.raises(GpucommError, match="no NCCL debug line"):
        one(text)


def test_unknown_bundled_log_is_refused():
    with pytest.raises(GpucommError, match="unknown bundled NCCL INFO log 'nope': expected one of "):
        bundled_info_log_text("nope")
