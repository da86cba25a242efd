"""Reading an ``NCCL_DEBUG=INFO`` log line by line into the records of
:mod:`gpucomm.measure.logs.nccl_info_records` (the facts; the checks come after).

This module uses the standard library only (no torch).
"""

from __future__ import annotations

from gpucomm.measure.logs.nccl_info_lines import (
    ALGORITHM_NAMES,
    ALGORITHMS,
    CHANNEL_COUNTS_RE,
    COMM_NODES_RE,
    COMM_RE,
    CONNECTION_RE,
    ENV_RE,
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
    RESULT_RE,
    RING_ORDER_RE,
    SOCKET_IFACE_RE,
    SOCKET_USING_RE,
    TEST_DEVICE_RE,
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
    Connection,
    GraphPattern,
    NcclInfoLog,
    TuningChoice,
    WarnLine,
)

__all__ = ["InfoLineReader"]


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

    @staticmethod
    def _add(items: list, value) -> None:
        if value not in items:
            items.append(value)

    def read(self, number: int, line: str) -> None:
        if line.lstrip().startswith("#"):  # nccl-tests' own lines and comments: only its device list is read
            device = TEST_DEVICE_RE.match(line)
            if device:
                self.gpus.append(device["name"])
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
                self.results.append((result["result"], number))
        if not m:
            if version:
                self.nccl_lines += 1
            return
        self.nccl_lines += 1
        if m["host"]:
            self._add(self.hosts, m["host"])
        msg = m["msg"].strip()
        if IBVERBS_MISSING_RE.search(msg):
            self.ibverbs_missing.append(number)
        if m["level"] == "WARN":
            self.warnings.append(WarnLine(msg, m["where"], m["host"] or None, number))
            if P2P_PAIR_DISABLED_RE.search(msg):  # a WARN when the GPUs share NVLink
                self.p2p_pairs.append(number)
            return
        self._read_info(number, msg)

    def _read_info(self, number: int, msg: str) -> None:
        if (c := CONNECTION_RE.match(msg)):
            transport, gdr = transport_of(c["via"])
            self.connections.append(Connection(int(c["channel"]), int(c["src"]), None if c["dst"] is None else int(c["dst"]),
                                               c["direction"], transport, gdr, c["via"], number))
        elif (r := RING_ORDER_RE.match(msg)):
            self.rings.setdefault(int(r["channel"]), tuple(int(x) for x in r["ranks"].split()))
        elif (t := TREES_RE.match(msg)):
            entries = TREE_ENTRY_RE.findall(t["trees"])
            rank = TREE_RANK_RE.search(entries[0][1]) if entries else None
            if rank:
                self.trees.setdefault(int(rank.group(1)), tuple(tree for _, tree in entries))
        elif (cm := COMM_NODES_RE.search(msg)):
            self.nodes.append((int(cm["nranks"]), int(cm["nnodes"]), int(cm["local_ranks"])))
            self.comm_sizes.setdefault(int(cm["nranks"]), number)
        elif (cm := COMM_RE.search(msg)):
            self.comm_sizes.setdefault(int(cm["nranks"]), number)
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

    def facts(self, total_lines: int) -> NcclInfoLog:
        largest = max(self.nodes, default=None)
        return NcclInfoLog(
            nccl_versions={v: tuple(lines) for v, lines in self.versions.items()},
            cuda_versions=tuple(self.cuda),
            # a ring visits every rank of its communicator once: its length is the size where no comm line says it
            num_ranks=max(self.comm_sizes, default=None) or max((len(r) for r in self.rings.values()), default=None),
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
        )

