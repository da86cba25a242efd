"""Issue 24's diagnose findings: NCCL's own totals, per-node communicators, warnings only where they can apply, and
PyTorch's lines around NCCL's. Each test here failed on the reader before these changes (a71e2e1)."""

from __future__ import annotations

import pytest

from gpucomm.measure.logs.nccl_info import parse_nccl_info_log
from gpucomm.measure.logs.nccl_info_reader import RING_LINE_MAX_RANKS


def info(host: str, dev: int, message: str, pid: int = 100) -> str:
    return f"{host}:{pid}:{pid + 1} [{dev}] NCCL INFO {message}\n"


def codes(log) -> list[str]:
    return [f.code for f in log.findings]


# ----------------------------------------------------------------------------------------- NCCL's totals

def test_a_ring_line_cut_at_20_ranks_is_a_lower_bound_and_connections_raise_it():
    ring = " ".join(f"{r:3d}" for r in range(RING_LINE_MAX_RANKS))  # NCCL 2.7-2.18 print at most 20 ranks
    text = (info("a", 0, f"Channel 00/02 : {ring}")
            + "".join(info("a", 0, f"Channel 00/0 : {r}[{r % 8}] -> {r + 1}[{(r + 1) % 8}] via P2P/IPC") for r in range(20, 23))
            + info("c", 7, "Channel 00/0 : 23[7] -> 0[0] [send] via NET/IB/0/GDRDMA"))
    log = parse_nccl_info_log(text)
    assert (log.num_ranks, log.num_ranks_exact, log.max_rank_seen) == (24, False, 23)  # was 20, as if exact


def test_nranks_printed_by_nccl_is_the_total():
    text = info("a", 0, "Channel 00/02 :    0   1   2") + info("a", 0, "comm 0x1 rank 0 nRanks 24 nNodes 3 localRanks 8 "
                                                                      "localRank 0 MNNVL 0")
    log = parse_nccl_info_log(text)
    assert (log.num_ranks, log.num_ranks_exact, log.num_nodes, log.local_ranks) == (24, True, 3, 8)


def test_a_short_ring_printed_whole_is_exact():
    log = parse_nccl_info_log(info("a", 0, "Channel 00/02 :    0   1   2   3"))
    assert (log.num_ranks, log.num_ranks_exact) == (4, True)


@pytest.mark.parametrize("total, printed", [(16, 9), (32, 15)])
def test_channels_are_ncclS_count_not_the_lines_seen(total, printed):
    text = "".join(info("a", 0, f"Channel {c:02d}/{total} :    0   1   2   3") for c in range(printed))
    log = parse_nccl_info_log(text)
    assert (log.coll_channels, log.ring_channel_total, len(log.rings)) == (total, total, printed)  # was `printed`


# ----------------------------------------------------------------------------------- per-node communicators

def test_two_hosts_each_with_their_own_8_rank_communicator_are_flagged():
    text = "".join(info(host, r, f"comm 0x5{r} rank {r} nranks 8 cudaDev {r} nvmlDev {r} busId 1000 commId {cid} - Init COMPLETE")
                   for host, cid in (("node1", "0xaaa"), ("node2", "0xbbb")) for r in range(8))
    log = parse_nccl_info_log(text)
    assert [(c.comm_id, c.nranks, c.rank0_hosts) for c in log.communicators] == [("0xaaa", 8, ("node1",)),
                                                                                ("0xbbb", 8, ("node2",))]
    finding = log.findings[0]
    assert finding.code == "per_node_communicators" and finding.severity == "error"
    assert "node1, node2" in finding.evidence and "MPI=1" in finding.fix


def test_nccl_tests_without_mpi_prints_its_header_and_device_list_once_per_process():
    header = "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
    devices = "".join(f"#  Rank {r:2d} Group  0 Pid {pid} on {host} device {r:2d} [0x0f] NVIDIA H800\n"
                      for host, pid in (("hw14", 798), ("hw15", 801)) for r in range(8))
    text = header + header + devices + info("hw14", 0, "Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read", 798)
    log = parse_nccl_info_log(text)
    assert codes(log) == ["per_node_communicators"]
    assert "2 nccl-tests headers" in log.findings[0].evidence and "2 device lists" in log.findings[0].evidence


def test_one_run_over_two_nodes_and_per_node_sub_communicators_are_not_flagged():
    devices = "".join(f"#  Rank {r:2d} Group  0 Pid {100 + r} on {'ab'[r // 8]} device {r % 8} [0x0f] NVIDIA H100 80GB HBM3\n"
                      for r in range(16))
    world = "".join(info(h, 0, f"comm 0x1 rank {r} nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0") for h, r in (("a", 0), ("b", 8)))
    tp = "".join(info(h, 0, "comm 0x2 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 1000 commId 0x" + h * 3 + " - Init COMPLETE")
                 for h in "ab")
    runs = ("# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
            "# Avg bus bandwidth    : 1.5\n") * 2  # two runs one after the other
    assert codes(parse_nccl_info_log(runs + devices + world + tp)) == []


# ------------------------------------------------------------------------------- where a warning can apply

@pytest.mark.parametrize("layout", [
    "comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0",  # NCCL says one GPU per node
    None,                                                                    # the device list says it
])
def test_no_nvls_warning_with_one_gpu_per_node(layout):
    devices = "".join(f"#   Rank  {r} Pid {100 + r} on  dgxh100-{r} device  0 [0xd1] NVIDIA H100 80GB HBM3\n" for r in range(2))
    text = devices + info("dgxh100-0", 0, "NVLS multicast support is not available on dev 0") + (
        info("dgxh100-0", 0, layout) if layout else "")
    assert codes(parse_nccl_info_log(text)) == []  # was nvls_unavailable (warning)


def test_nvls_warning_stays_with_8_gpus_per_node():
    text = ("#  Rank  0 Group  0 Pid  1 on h device  0 [0x0f] NVIDIA H100 80GB HBM3\n"
            + info("h", 0, "comm 0x1 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0")
            + info("h", 0, "NVLS multicast support is not available on dev 0"))
    assert [(f.code, f.severity) for f in parse_nccl_info_log(text).findings] == [("nvls_unavailable", "warning")]


def test_p2p_disabled_does_not_matter_with_one_gpu_per_node():
    text = (info("a", 0, "comm 0x1 rank 0 nRanks 4 nNodes 4 localRanks 1 localRank 0 MNNVL 0")
            + info("a", 0, "NCCL_P2P_DISABLE set by environment to 1."))
    assert codes(parse_nccl_info_log(text)) == []


# ------------------------------------------------------------------------------------- PyTorch's lines

TIMEOUT = ("[rank{r}]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective operation "
           "timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for "
           "600040 milliseconds before timing out.\n")
PROGRESS = ("[rank{r}]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank {r}] Exception (either an error or "
            "timeout) detected by watchdog at work: 1580, last enqueued NCCL work: {enq}, last completed NCCL work: 1579.\n")


def test_a_watchdog_timeout_is_an_error_with_what_to_do():
    text = (info("a", 0, "comm 0x1 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 1000 commId 0x9 - Init COMPLETE")
            + "".join(TIMEOUT.format(r=r, seq=1580, op="ALLREDUCE") for r in (0, 1, 2))
            + PROGRESS.format(r=0, enq=1582) + PROGRESS.format(r=2, enq=1579))
    log = parse_nccl_info_log(text)
    assert codes(log) == ["torch_watchdog_timeout"]  # was: no finding
    f = log.findings[0]
    assert "ALLREDUCE (SeqNum 1580, 466119168 elements in)" in f.evidence and "600.04 s" in f.evidence
    assert "rank(s) 2 had not even enqueued it" in f.evidence and "no timeout line from rank(s) 3 of the 4" in f.evidence
    assert "torchfrtrace" in f.fix and f.lines == (2, 3, 4, 5, 6)


def test_a_log_of_only_pytorch_lines_is_read():
    log = parse_nccl_info_log(TIMEOUT.format(r=0, seq=5, op="ALLREDUCE"))  # was refused: "no NCCL debug line"
    assert codes(log) == ["torch_watchdog_timeout"] and log.torch.timeouts[0].seq == 5


def test_ranks_in_different_collectives_at_one_sequence_number_are_out_of_step():
    text = TIMEOUT.format(r=0, seq=7, op="ALLREDUCE") + TIMEOUT.format(r=1, seq=7, op="BROADCAST")
    assert codes(parse_nccl_info_log(text)) == ["torch_watchdog_timeout", "torch_collective_mismatch"]


def test_heartbeat_abort_and_flight_recorder_dump():
    text = ("[rank7]:[E626 05:14:36.393067540 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 7] "
            "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.\n"
            "E0927 12:07:22.643702 1012209 ProcessGroupNCCL.cpp:1356] [PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL "
            "preparing to dump debug info.\n"
            "[PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL dumping nccl trace to /tmp/nccl_trace_rank_0\n")
    log = parse_nccl_info_log(text)
    assert [(f.code, f.severity) for f in log.findings] == [("torch_watchdog_stuck", "error"),
                                                           ("torch_flight_recorder_dump", "info")]
    assert log.torch.dump_paths == ("/tmp/nccl_trace_rank_0",) and "/tmp/nccl_trace_rank_0" in log.findings[1].evidence


@pytest.mark.parametrize("name, code", [("ncclRemoteError", "nccl_error_remote"), ("ncclSystemError", "nccl_error_system"),
                                        ("ncclUnhandledCudaError", "nccl_error_cuda")])
def test_process_group_nccl_errors_by_pytorch_name(name, code):
    text = (f"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
            f"remote process exited or there was a network error, NCCL version 2.19.3\n{name}: A call failed.\n")
    assert code in codes(parse_nccl_info_log(text))


def test_gpu_direct_rdma_disabled_lines_are_no_gdrdma():
    text = info("h", 3, "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'")
    assert codes(parse_nccl_info_log(text)) == ["no_gdrdma"]
