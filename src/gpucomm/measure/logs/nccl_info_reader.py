"""Reading an ``NCCL_DEBUG=INFO`` log line by line into the records of
:mod:`gpucomm.measure.logs.nccl_info_records` (the facts; the checks come after).

This module uses the standard library only (no torch).
"""

from __future__ import annotations

from gpucomm.measure.logs.nccl_info_lines import (
    ALGORITHM_NAMES,
    ALGORITHMS,
    CHANNEL_COUNTS_RE,
    COMM_ID_RE,
    COMM_NODES_RE,
    COMM_POINTER_RE,
    COMM_RE,
    CONNECTION_RE,
    ENV_RE,
    GDR_DISABLED_RE,
    GPU_PATH_RE,
    GPU_PATHS_RE,
    IB_DEVICE_RE,
    IB_NONE_RE,
    IB_USING_RE,
    IBVERBS_MISSING_RE,
    NCCL_LINE_RE,
    NVLS_SUPPORT_RE,
    P2P_PAIR_DISABLED_RE,
    PATTERN_RE,
    PLUGIN_RE,
    PROTOCOLS,
    RESULT_NAMES,
    RESULT_RE,
    RING_NEIGHBOURS_RE,
    RING_ORDER_RE,
    SOCKET_IFACE_RE,
    SOCKET_USING_RE,
    TEST_DEVICE_RE,
    TEST_END_RE,
    TEST_HEADER_RE,
    TREE_ENTRY_RE,
    TREE_RANK_RE,
    TREES_RE,
    TUNING_NAMED_RE,
    TUNING_NUMERIC_RE,
    TUNING_SYMMETRIC_RE,
    USING_NETWORK_RE,
    VERSION_RE,
    transport_of,
)
from gpucomm.measure.logs.nccl_info_records import (
    ChannelCounts,
    Communicator,
    Connection,
    GraphPattern,
    NcclInfoLog,
    TestDevice,
    TuningChoice,
    WarnLine,
)
from gpucomm.measure.logs.nccl_info_torch import TorchLineReader

__all__ = ["InfoLineReader", "RING_LINE_MAX_RANKS"]

RING_LINE_MAX_RANKS = 20
"""A ring order line (``Channel 00/16 :    0   1 ...``) shows at most this many ranks: ``dumpLine`` in
``src/graph/rings.cc`` stops at ``MAXWIDTH 20`` (NCCL 2.7-2.18) and fills a 128-character buffer (about 28 ranks) in
later releases. A ring line this long or longer may be cut short, so its length is only a lower bound on the ranks."""


class InfoLineReader:
    """Accumulates the facts of one text line by line: :meth:`read` each line, then :meth:`facts`."""

    def __init__(self) -> None:
        self.versions: dict[str, list[int]] = {}
        self.cuda: list[str] = []
        self.comm_sizes: dict[int, int] = {}  # nranks -> first line
        self.nodes: list[tuple[int, int, int]] = []  # (nranks, nnodes, local ranks)
        self.hosts: list[str] = []
        self.gpus: list[str] = []
        self.connections: list[Connection] = []
        self.rings: dict[int, tuple[int, ...]] = {}
        self.trees: dict[int, tuple[str, ...]] = {}
        self.channel_counts: list[ChannelCounts] = []
        self.graphs: list[GraphPattern] = []
        self.sys_gpu_paths: list[int] = []
        self.nvls: list[tuple[int, bool, int]] = []
        self.env: dict[str, str] = {}
        self.env_lines: dict[str, int] = {}
        self.networks: dict[str, list[int]] = {}
        self.ib_devices: list[str] = []
        self.ib_missing: list[int] = []
        self.ibverbs_missing: list[int] = []
        self.socket_ifaces: list[str] = []
        self.plugins: list[str] = []
        self.p2p_pairs: list[int] = []
        self.tuning: list[TuningChoice] = []
        self.warnings: list[WarnLine] = []
        self.results: list[tuple[str, int]] = []
        self.nccl_lines = 0
        self.ranks_seen: set[int] = set()
        self.ring_total: int | None = None
        self.comm_lines: list[dict] = []  # every comm line: its process's key, commId, rank, size, nodes, line
        self.test_devices: list[TestDevice] = []
        self.test_headers: list[int] = []
        self.test_ends: list[int] = []
        self.gdr_disabled: list[int] = []
        self.torch = TorchLineReader()
        self.where: tuple[str, str] = ("", "")  # (host, pid) of the line being read

    @staticmethod
    def _add(items: list, value) -> None:
        if value not in items:
            items.append(value)

    def read(self, number: int, line: str) -> None:
        """Read one line of the log (1-based ``number``)."""
        if line.lstrip().startswith("#"):  # nccl-tests' own lines and comments: its device list, headers and run ends
            self._read_test_line(number, line)
            return
        if self.torch.read(number, line):
            return
        # the substring test first: the regular expression would scan long foreign lines (base64, JSON) slowly
        m = NCCL_LINE_RE.search(line) if "NCCL " in line else None
        version = VERSION_RE.search(line) if "NCCL version" in line else None
        if version:
            self.versions.setdefault(version["version"], []).append(number)
            if version["cuda"]:
                self._add(self.cuda, version["cuda"])
        if "NCCL" in line or "nccl" in line:
            result = RESULT_RE.search(line)
            if result and not m:  # the application's message, not NCCL's own lines
                self.results.append((RESULT_NAMES.get(result["result"], result["result"]), number))
        if not m:
            if version:
                self.nccl_lines += 1
            return
        self.nccl_lines += 1
        if m["host"]:
            self._add(self.hosts, m["host"])
        self.where = (m["host"] or "", m["pid"] or "")
        msg = m["msg"].strip()
        if IBVERBS_MISSING_RE.search(msg):
            self.ibverbs_missing.append(number)
        if m["level"] == "WARN":
            self.warnings.append(WarnLine(msg, m["where"], m["host"] or None, number))
            if P2P_PAIR_DISABLED_RE.search(msg):  # a WARN when the GPUs share NVLink
                self.p2p_pairs.append(number)
            return
        self._read_info(number, msg)

    def _read_test_line(self, number: int, line: str) -> None:
        if (device := TEST_DEVICE_RE.match(line)):
            self.gpus.append(device["name"])
            self.test_devices.append(TestDevice(int(device["rank"]), int(device["pid"]), device["host"], device["name"], number))
            self.ranks_seen.add(int(device["rank"]))
        elif TEST_HEADER_RE.match(line):
            self.test_headers.append(number)
        elif TEST_END_RE.match(line):
            self.test_ends.append(number)

    def _read_comm(self, number: int, msg: str, rank: int, nranks: int, nodes: tuple[int, int] | None) -> None:
        """A ``comm 0x.. rank r nranks n`` line, kept with its process's key (host, pid, comm pointer)."""
        self.comm_sizes.setdefault(nranks, number)
        self.ranks_seen.add(rank)
        pointer = COMM_POINTER_RE.search(msg)
        comm_id = COMM_ID_RE.search(msg)
        self.comm_lines.append(dict(local=(*self.where, pointer["comm"] if pointer else ""), host=self.where[0],
                                    comm_id=comm_id["comm_id"] if comm_id else None, rank=rank, nranks=nranks,
                                    nodes=nodes, line=number))

    def _read_info(self, number: int, msg: str) -> None:
        if (c := CONNECTION_RE.match(msg)):
            transport, gdr = transport_of(c["via"])
            self.connections.append(Connection(int(c["channel"]), int(c["src"]), None if c["dst"] is None else int(c["dst"]),
                                               c["direction"], transport, gdr, c["via"], number))
            self.ranks_seen.update(r for r in (self.connections[-1].src_rank, self.connections[-1].dst_rank) if r is not None)
        elif (r := RING_ORDER_RE.match(msg)):
            ring = tuple(int(x) for x in r["ranks"].split())
            self.rings.setdefault(int(r["channel"]), ring)
            self.ranks_seen.update(ring)
            self.ring_total = max(self.ring_total or 0, int(r["count"])) or None  # "/00" before 2.7-era formats: none
        elif (rn := RING_NEIGHBOURS_RE.match(msg)):
            self.ranks_seen.update(int(rn[k]) for k in ("prev", "rank", "next"))
        elif (t := TREES_RE.match(msg)):
            entries = TREE_ENTRY_RE.findall(t["trees"])
            rank = TREE_RANK_RE.search(entries[0][1]) if entries else None
            if rank:
                self.trees.setdefault(int(rank.group(1)), tuple(tree for _, tree in entries))
                self.ranks_seen.add(int(rank.group(1)))
        elif (cm := COMM_NODES_RE.search(msg)):
            self.nodes.append((int(cm["nranks"]), int(cm["nnodes"]), int(cm["local_ranks"])))
            self._read_comm(number, msg, int(cm["rank"]), int(cm["nranks"]), (int(cm["nnodes"]), int(cm["local_ranks"])))
        elif (cm := COMM_RE.search(msg)):
            self._read_comm(number, msg, int(cm["rank"]), int(cm["nranks"]), None)
        elif GDR_DISABLED_RE.match(msg):
            self.gdr_disabled.append(number)
        elif (cc := CHANNEL_COUNTS_RE.match(msg)):
            self.channel_counts.append(ChannelCounts(
                int(cc["coll"]), None if cc["collnet"] is None else int(cc["collnet"]),
                None if cc["nvls"] is None else int(cc["nvls"]), int(cc["p2p"]), int(cc["per_peer"]), number))
        elif (p := PATTERN_RE.match(msg)):
            self.graphs.append(GraphPattern(int(p["pattern"]), int(p["nchannels"]), float(p["bw_intra"]),
                                            float(p["bw_inter"]), p["type_intra"], p["type_inter"], number))
        elif (g := GPU_PATHS_RE.match(msg)):
            if any(path["type"] == "SYS" for path in GPU_PATH_RE.finditer(g["paths"])):
                self.sys_gpu_paths.append(number)
        elif (n := NVLS_SUPPORT_RE.match(msg)):
            self.nvls.append((int(n["dev"]), not n["negation"], number))
        elif (e := ENV_RE.match(msg)):
            self.env.setdefault(e["name"], e["value"])
            self.env_lines.setdefault(e["name"], number)
        elif (ib := IB_USING_RE.match(msg)):
            for device in IB_DEVICE_RE.findall(ib["devices"]):
                self._add(self.ib_devices, device)
        elif IB_NONE_RE.match(msg):
            self.ib_missing.append(number)
        elif (s := SOCKET_USING_RE.match(msg)):
            for iface in SOCKET_IFACE_RE.findall(s["ifaces"]):
                self._add(self.socket_ifaces, iface)
        elif (u := USING_NETWORK_RE.match(msg)):
            self.networks.setdefault(u["name"], []).append(number)
        elif (pl := PLUGIN_RE.match(msg)):
            self._add(self.plugins, pl["loaded"] or pl["p2p"])
        elif P2P_PAIR_DISABLED_RE.search(msg):
            self.p2p_pairs.append(number)
        else:
            self._read_tuning(number, msg)

    def _read_tuning(self, number: int, msg: str) -> None:
        if (t := TUNING_NUMERIC_RE.match(msg)):
            algo, proto = int(t["algo"]), int(t["proto"])
            self.tuning.append(TuningChoice(
                t["func"], int(t["bytes"]), ALGORITHMS[algo] if algo < len(ALGORITHMS) else f"algo {algo}",
                PROTOCOLS[proto] if proto < len(PROTOCOLS) else f"proto {proto}", float(t["time"]), None, number))
        elif (t := TUNING_NAMED_RE.match(msg)):
            proto = {"SIMPLE": "Simple"}.get(t["proto"], t["proto"])
            channels = (int(t["lo"]), int(t["hi"])) if t["lo"] is not None else None
            self.tuning.append(TuningChoice(t["func"], int(t["bytes"]), ALGORITHM_NAMES.get(t["algo"], t["algo"]), proto,
                                            None, channels, number))
        elif (t := TUNING_SYMMETRIC_RE.match(msg)):
            self.tuning.append(TuningChoice(t["func"], int(t["bytes"]), f"symmetric kernel {t['kernel']}", "-", None,
                                            (0, int(t["nchannels"]) - 1), number))

    def _num_ranks(self) -> tuple[int | None, bool]:
        """(ranks, exact): NCCL's nranks; else a ring printed whole (it visits every rank once); else a lower bound."""
        if self.comm_sizes:
            return max(self.comm_sizes), True
        ring = max((len(r) for r in self.rings.values()), default=0)
        seen = max(self.ranks_seen) + 1 if self.ranks_seen else 0
        if 0 < ring < RING_LINE_MAX_RANKS and seen <= ring:
            return ring, True
        return (max(ring, seen) or None), False

    def communicators(self) -> tuple[Communicator, ...]:
        """The communicators of the comm lines, in order of first line.

        A process's lines name its communicator by pointer (``comm 0x55..``); its ``Init COMPLETE`` line adds the
        ``commId`` every rank shares. Lines of processes whose ``commId`` is not in the log are grouped by size.
        """
        ids = {c["local"]: c["comm_id"] for c in self.comm_lines if c["comm_id"]}
        comms: dict[str, dict] = {}
        for c in self.comm_lines:
            comm_id = ids.get(c["local"])
            comm = comms.setdefault(comm_id or f"size {c['nranks']}", dict(
                comm_id=comm_id, nranks=c["nranks"], nodes=None, hosts=[], ranks=set(), rank0_hosts=[], line=c["line"]))
            comm["ranks"].add(c["rank"])
            comm["nodes"] = c["nodes"] or comm["nodes"]
            if c["host"]:
                self._add(comm["hosts"], c["host"])
                if c["rank"] == 0:
                    self._add(comm["rank0_hosts"], c["host"])
        return tuple(Communicator(c["comm_id"], c["nranks"], *(c["nodes"] or (None, None)), tuple(c["hosts"]),
                                  tuple(sorted(c["ranks"])), tuple(c["rank0_hosts"]), c["line"])
                     for c in sorted(comms.values(), key=lambda c: c["line"]))

    def facts(self, total_lines: int) -> NcclInfoLog:
        """Everything read, as an :class:`~gpucomm.measure.logs.nccl_info_records.NcclInfoLog` without findings."""
        largest = max(self.nodes, default=None)
        num_ranks, exact = self._num_ranks()
        return NcclInfoLog(
            nccl_versions={v: tuple(lines) for v, lines in self.versions.items()},
            cuda_versions=tuple(self.cuda),
            num_ranks=num_ranks,
            num_nodes=largest[1] if largest else None,
            local_ranks=largest[2] if largest else None,
            communicator_sizes=tuple(sorted(self.comm_sizes)),
            hosts=tuple(self.hosts),
            gpus=tuple(self.gpus),
            connections=tuple(self.connections),
            rings=dict(sorted(self.rings.items())),
            trees=dict(sorted(self.trees.items())),
            channel_counts=tuple(self.channel_counts),
            graphs=tuple(self.graphs),
            sys_gpu_paths=tuple(self.sys_gpu_paths),
            nvls_support=tuple(self.nvls),
            env=dict(self.env),
            env_lines=dict(self.env_lines),
            networks={k: tuple(v) for k, v in self.networks.items()},
            ib_devices=tuple(self.ib_devices),
            ib_missing_lines=tuple(self.ib_missing),
            ibverbs_missing_lines=tuple(self.ibverbs_missing),
            socket_interfaces=tuple(self.socket_ifaces),
            plugins=tuple(self.plugins),
            p2p_disabled_pairs=tuple(self.p2p_pairs),
            tuning=tuple(self.tuning),
            warnings=tuple(self.warnings),
            results=tuple(self.results),
            nccl_lines=self.nccl_lines,
            total_lines=total_lines,
            num_ranks_exact=exact,
            max_rank_seen=max(self.ranks_seen) if self.ranks_seen else None,
            ring_channel_total=self.ring_total,
            communicators=self.communicators(),
            test_devices=tuple(self.test_devices),
            test_headers=tuple(self.test_headers),
            test_ends=tuple(self.test_ends),
            gdr_disabled_lines=tuple(self.gdr_disabled),
            torch=self.torch.facts(),
        )

