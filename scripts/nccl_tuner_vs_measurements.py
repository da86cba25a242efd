"""NCCL's own tuner (``gpucomm.model.nccl_tuner``) against the bundled measurements, per size band.

Usage: ``python scripts/nccl_tuner_vs_measurements.py [--points]``. For every bundled sweep or data
point it builds the communicator NCCL would see (graphs from :func:`~gpucomm.model.nccl_tuner.search_graph`
with NCCL's own link rates, the NCCL release the source states), asks the tuner what it would run, and
prints predicted / measured time per size band (< 1 MiB, 1-64 MiB, >= 64 MiB): median, min and max of
the ratio, and the (algorithm, protocol) pairs it chose. ``--points`` prints every point.

NCCL's tuner ranks alternatives; it is not built to predict wall-clock time. It has no kernel launch
term, assumes every channel at full speed from the first byte, and takes nominal link rates from the
topology. A ratio below 1 at small sizes is the launch and per-step overhead it leaves out; a ratio far
from 1 at large sizes is a bandwidth input that does not match the machine (host-staged copies without
P2P, a slower bridge). The model layer does not read measurements; this script joins the two (it uses
``gpucomm.measure.logs.nccl_tests`` for the logs).
"""

from __future__ import annotations

import argparse
import csv
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

from gpucomm.measure.logs.nccl_tests import read_bundled_log
from gpucomm.model import nccl_tuner as nt

MiB = 1 << 20
BANDS = (("< 1 MiB", 0, MiB), ("1-64 MiB", MiB, 64 * MiB), (">= 64 MiB", 64 * MiB, float("inf")))


@dataclass(frozen=True)
class Case:
    """One bundled measurement set and the communicator NCCL would build for it."""

    name: str
    system: str
    collective: str
    comm: Callable[[], nt.Comm]
    points: Callable[[], list[tuple[int, float]]]  # (NCCL byte count, measured seconds)
    algorithms: tuple | None = None  # NCCL_ALGO restriction stated by the source


def _csv_rows(name: str) -> list[dict]:
    text = resources.files("gpucomm.model").joinpath("data", name).read_text()
    return list(csv.DictReader(line for line in text.splitlines() if line and not line.startswith("#")))


def _azure_a100() -> list[tuple[int, float]]:
    # busbw = algbw x 2(n-1)/n for all_reduce (nccl-tests PERFORMANCE.md); time = bytes / algbw.
    return [(int(r["bytes"]), int(r["bytes"]) / (float(r["busbw_GBps"]) * 1e9 / (2 * 7 / 8)))
            for r in _csv_rows("azure_a100_allreduce_busbw.csv")]


def _mleng_h200() -> list[tuple[int, float]]:
    return [(int(r["bytes"]), float(r["time_us_derived"]) * 1e-6) for r in _csv_rows("mleng_8xH200_torch_allreduce.csv")]


def _log(name: str) -> Callable[[], list[tuple[int, float]]]:
    def points() -> list[tuple[int, float]]:
        return [(r.size_bytes, r.time_s) for r in read_bundled_log(name).out_of_place() if r.time_s]
    return points


def _case_point(case_id: str) -> Callable[[], list[tuple[int, float]]]:
    def points() -> list[tuple[int, float]]:
        row = next(r for r in _csv_rows("cases.csv") if r["id"] == case_id)
        return [(int(row["bytes"]), float(row["time_us"]) * 1e-6)]
    return points


def _dgxa100_latency(num_gpus: int) -> Callable[[], list[tuple[int, float]]]:
    def points() -> list[tuple[int, float]]:
        row = next(r for r in _csv_rows("dgxa100_ring_small_msg_latency_vs_gpus.csv") if int(r["n_gpus"]) == num_gpus)
        return [(8, float(row["measured_us"]) * 1e-6)]
    return points


NVL3, NVL4 = nt.nvlink_bw_bytes_per_s(80, 12), nt.nvlink_bw_bytes_per_s(90, 18)   # DGX A100, DGX H100 per GPU
PCIE4, PCIE5 = nt.PCI_BW_GBPS[4] * 1e9, nt.PCI_BW_GBPS[5] * 1e9


def _one_channel(comm: nt.Comm) -> nt.Comm:
    """NCCL_MAX_NCHANNELS=1: one search channel, one compute channel (a stated restriction of the source)."""
    ring = comm.graphs["ring"]
    one = nt.Graph(1, ring.bw_intra_bytes_per_s, ring.bw_inter_bytes_per_s, ring.type_intra, ring.type_inter)
    return nt.Comm(comm.compute_capability, comm.num_ranks, comm.num_nodes, {"ring": one, "tree": one}, 1,
                   nccl_version=comm.nccl_version)


CASES = (
    Case("azure_a100", "Azure ND A100 v4, 8x A100 NVSwitch, NCCL 2.18.5", "all_reduce",
         lambda: nt.build_comm(80, 8, NVL3, nccl_version=(2, 18, 5)), _azure_a100),
    Case("mleng_h200", "8x H200 NVSwitch, torch.distributed, NCCL 2.27.7", "all_reduce",
         lambda: nt.build_comm(90, 8, NVL4, nccl_version=(2, 27, 7)), _mleng_h200),
    Case("C08", "2 nodes x 8 H100 (GCP A3-Mega, 8 x 200 Gb/s GPUDirect-TCPXO)", "all_reduce",
         lambda: nt.build_comm(90, 16, NVL4, num_nodes=2, nic_bw_bytes_per_s=25e9, net_device="unpack"), _log("C08")),
    Case("C28", "2x RTX 2080 Ti, NVLink bridge (2 links), NCCL 2.6.4", "all_reduce",
         lambda: nt.build_comm(75, 2, nt.nvlink_bw_bytes_per_s(75, 2), nvswitch=False, nccl_version=(2, 6, 4)),
         _log("C28")),
    Case("C29", "2x DGX Spark (GB10), one 200 Gb/s RoCE link, NCCL 2.31.2", "all_reduce",
         lambda: nt.build_comm(121, 2, PCIE5, num_nodes=2, nic_bw_bytes_per_s=25e9, nvswitch=False), _log("C29")),
    Case("C01", "A40 pair, NVLink bridge NV4, NCCL 2.16.2", "all_reduce",
         lambda: nt.build_comm(86, 2, nt.nvlink_bw_bytes_per_s(86, 4), nvswitch=False, nccl_version=(2, 16, 2)),
         _log("C01")),
    Case("C02", "4x A40 across sockets, P2P disabled (host memory), NCCL 2.16.2", "all_reduce",
         lambda: nt.build_comm(86, 4, PCIE4, type_intra="SYS", nvswitch=False, nccl_version=(2, 16, 2)), _log("C02")),
    Case("C03", "2x A40 one socket, P2P disabled (host memory), NCCL 2.16.2", "all_reduce",
         lambda: nt.build_comm(86, 2, PCIE4, type_intra="PHB", nvswitch=False, nccl_version=(2, 16, 2)), _log("C03")),
    Case("C04", "DGX A100, 4 GPUs NVSwitch, NCCL 2.16.2", "all_reduce",
         lambda: nt.build_comm(80, 4, NVL3, nccl_version=(2, 16, 2)), _log("C04")),
    Case("C05", "DGX A100, 4 GPUs, P2P disabled (host memory), NCCL 2.16.2", "all_reduce",
         lambda: nt.build_comm(80, 4, PCIE4, type_intra="PHB", nvswitch=False, nccl_version=(2, 16, 2)), _log("C05")),
    Case("C06", "DGX H100, 4 GPUs NVSwitch", "all_reduce", lambda: nt.build_comm(90, 4, NVL4), _log("C06")),
    Case("C07", "DGX H100, 4 GPUs, P2P disabled (host memory)", "all_reduce",
         lambda: nt.build_comm(90, 4, PCIE5, type_intra="PHB", nvswitch=False), _log("C07")),
    *(Case(f"C22_n{n}", f"DGX A100, {n} GPUs, NCCL_ALGO=Ring NCCL_MAX_NCHANNELS=1, 8 B", "all_reduce",
           (lambda n=n: _one_channel(nt.build_comm(80, n, NVL3, nvls_support=False))), _dgxa100_latency(n),
           algorithms=("ring",)) for n in range(2, 9)),
)


def compare(case: Case) -> list[dict]:
    """One row per measured point: bytes, measured and predicted seconds, NCCL's pick."""
    comm = case.comm()
    table = nt.tuner_table(comm)
    rows = []
    for nbytes, measured_s in case.points():
        choice = nt.choose(comm, case.collective, nbytes, table=table, algorithms=case.algorithms)
        rows.append({"bytes": nbytes, "measured_s": measured_s, "predicted_s": choice.time_s,
                     "ratio": choice.time_s / measured_s, "pick": f"{choice.algorithm}/{choice.protocol}",
                     "channels": choice.num_channels})
    return rows


def summarize(rows: list[dict]) -> list[dict]:
    """Per size band: points, median/min/max of predicted/measured, NCCL's picks."""
    out = []
    for band, low, high in BANDS:
        inside = [r for r in rows if low <= r["bytes"] < high]
        if not inside:
            continue
        ratios = [r["ratio"] for r in inside]
        picks = sorted({r["pick"] for r in inside}, key=lambda p: [r["pick"] for r in inside].index(p))
        out.append({"band": band, "points": len(inside), "median": statistics.median(ratios), "min": min(ratios),
                    "max": max(ratios), "picks": ", ".join(picks)})
    return out


def main() -> None:
    """Print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", action="store_true", help="print every point, not only the bands")
    args = parser.parse_args()
    print(f"NCCL tuner {nt.NCCL_TAG} vs measurements: predicted / measured time (1 = exact, < 1 = tuner faster)\n")
    print(f"{'case':<10} {'band':<10} {'pts':>3} {'median':>7} {'min':>6} {'max':>6}  NCCL's pick")
    for case in CASES:
        rows = compare(case)
        for s in summarize(rows):
            print(f"{case.name:<10} {s['band']:<10} {s['points']:>3} {s['median']:>7.2f} {s['min']:>6.2f} {s['max']:>6.2f}"
                  f"  {s['picks']}")
        if args.points:
            print(f"  {case.system}")
            for r in rows:
                print(f"    {r['bytes']:>12} B  measured {r['measured_s'] * 1e6:>10.1f} us  predicted "
                      f"{r['predicted_s'] * 1e6:>10.1f} us  x{r['ratio']:.2f}  {r['pick']} ({r['channels']} ch)")


if __name__ == "__main__":
    main()
