"""The shared timing harness and table printer: timed blocks, counts, the metadata record, the tables.

No process group here (the gloo sweeps, copies and TP layers in the other files run through the
same functions); everything below takes well under a second.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from gpucomm import GpucommError  # noqa: E402
from gpucomm.measure.copy_bandwidth import format_copy_table  # noqa: E402
from gpucomm.measure.harness import (  # noqa: E402
    call_argv,
    device_name,
    metadata_record,
    time_block_s,
    timed_blocks_s,
)
from gpucomm.measure.results import SWEEP_TABLE, Column, SweepResults, Table, format_table  # noqa: E402
from gpucomm.measure.tp_layer import format_tp_layer_table, tp_layer_rows  # noqa: E402

CPU = torch.device("cpu")

#: The fields every tool's metadata record begins and ends with (:func:`metadata_record`).
COMMON_META = ["record", "schema", "tool", "gpucomm_version", "date", "host", "devices", "torch_version",
               "cuda_version", "nccl_version", "python_version", "platform", "env", "argv"]


def test_importing_the_harness_loads_no_torch():
    out = subprocess.run([sys.executable, "-c", "import sys, gpucomm.measure.harness, gpucomm.measure.tp_layer\n"
                          "print(sorted(m for m in ('torch', 'numpy', 'plotly') if m in sys.modules))"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_timed_blocks_warm_up_then_interleave_blocks():
    calls: list[str] = []
    fns = {"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}
    times = timed_blocks_s(fns, iters=2, warmup_iters=1, blocks=2, device=CPU)
    assert calls == ["a", "b"] + ["a", "a", "b", "b"] * 2  # warm-up of each, then block 1 of each, then block 2
    assert set(times) == {"a", "b"} and all(t > 0 for t in times.values())


def test_time_block_is_block_time_over_iters():
    import time

    per_call_s = time_block_s(lambda: time.sleep(0.002), 3, device=CPU)
    assert 0.002 <= per_call_s < 0.05
    with pytest.raises(GpucommError, match="clock 'wall' is not valid: expected one of host, cuda_events"):
        time_block_s(lambda: None, 1, device=CPU, clock="wall")


def test_time_block_also_times_each_call_without_changing_the_block():
    import time

    sleeps_s = [0.001, 0.02, 0.002]
    calls = iter(sleeps_s)
    per_call: list[float] = []
    per_call_s = time_block_s(lambda: time.sleep(next(calls)), 3, device=CPU, iteration_s=per_call)
    assert len(per_call) == 3 and all(t >= s for t, s in zip(per_call, sleeps_s))  # each call in its own sample
    assert sum(per_call) == pytest.approx(3 * per_call_s, abs=1e-3)  # together they fill the block


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "3"])
def test_counts_are_checked_by_the_models_one_integer_check(value):
    from gpucomm.model.units import check_int as check_count

    with pytest.raises(GpucommError, match=r"^iterations -n .* is not valid: expected an integer >= 1$"):
        check_count(value, "iterations -n", 1)
    assert check_count(0, "warm-up iterations -w", 0) == 0


def test_metadata_record_order_hosts_env_and_argv(monkeypatch):
    monkeypatch.setenv("NCCL_DEBUG", "INFO")
    monkeypatch.setenv("GPUCOMM_UNRELATED", "x")
    meta = metadata_record("gpucomm.bench.test", rank_hosts=["n2", "n1", "n2"], devices=["cpu A", "cpu B", "cpu C"],
                           argv=call_argv("f", n=2, name="x"), backend="gloo", iters=5)
    keys = list(meta)
    assert keys[:6] == COMMON_META[:6] and keys[-7:] == COMMON_META[-7:]
    assert keys[6:11] == ["hosts", "rank_hosts", "devices", "backend", "iters"]
    assert meta["record"] == "meta" and meta["schema"] == 1 and meta["tool"] == "gpucomm.bench.test"
    assert meta["hosts"] == ["n1", "n2"] and meta["rank_hosts"] == ["n2", "n1", "n2"]
    assert meta["env"]["NCCL_DEBUG"] == "INFO" and "GPUCOMM_UNRELATED" not in meta["env"]
    assert meta["nccl_version"] is None  # only a NCCL backend records it
    assert meta["argv"] == ["f", "n=2", "name='x'"]
    single = metadata_record("gpucomm.bench.copy", devices=["cpu A"])
    assert "hosts" not in single and "rank_hosts" not in single and list(single) == COMMON_META


def test_cpu_device_name_counts_threads():
    threads = torch.get_num_threads()
    name = device_name(CPU, threads_label="torch thread")
    assert name.startswith("cpu ") and name.endswith(f"({threads} torch thread{'s' if threads != 1 else ''})")


# --- one table printer: each tool's table exactly as it prints (the sweep's in nccl-tests' layout) ----------

SWEEP_META = {"collective": "all_reduce", "num_ranks": 2, "backend": "gloo", "dtype": "float32", "op": "sum",
              "min_bytes": 8, "max_bytes": 1024, "step_factor": 8, "iters": 20, "blocks": 3, "warmup_iters": 5,
              "check": True, "backend_note": "backend auto: no CUDA GPU with NCCL here; using gloo on CPU",
              "rank_hosts": ["a", "b"], "devices": ["cpu X (1 thread)", "cpu X (1 thread)"], "busbw_factor": 1.0}
# Records as written before the out-of-place and in-place columns: all_reduce's one measurement is in place.
SWEEP_RECORDS = [{"msg_bytes": 8, "count": 2, "dtype": "float32", "op": "sum", "time_s": 88.5e-6,
                  "algbw_bytes_per_s": 8 / 88.5e-6, "busbw_bytes_per_s": 8 / 88.5e-6, "num_wrong": 0},
                 {"msg_bytes": 1024, "count": 256, "dtype": "float32", "op": "sum", "time_s": 0.0123456,
                  "algbw_bytes_per_s": 1024 / 0.0123456, "busbw_bytes_per_s": 1024 / 0.0123456, "num_wrong": 3}]
SWEEP_TEXT = """\
# gpucomm.measure all_reduce: 2 ranks, backend gloo, float32 sum, 8 B to 1 KiB step x8, iters 20 x 3 blocks, warm-up 5, check 1
# backend auto: no CUDA GPU with NCCL here; using gloo on CPU
#  rank   0 on a: cpu X (1 thread)
#  rank   1 on b: cpu X (1 thread)
# time: one operation, the maximum over ranks (-a 3; nccl-tests' default -a 1 is the mean), median of blocks; GB/s = 1e9 B/s; busbw = algbw * 1.0 (nccl-tests doc/PERFORMANCE.md)
#                                                             out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)        
           8             2   float32     sum      -1                                     88.50    0.00    0.00       0
        1024           256   float32     sum      -1                                   12345.6    0.00    0.00       3  WRONG
# Out of bounds values : 1 FAILED
# Avg bus bandwidth    : 0.00008667"""  # noqa: E501, W291 (the output's own lines: long, padded)

COPY_META = {"host": "vm", "devices": ["cpu X (2 torch threads)"], "timing": "host clock", "iters": 20, "blocks": 3,
             "warmup_iters": 5, "peer_access": {"0->1": True, "1->0": False}}
COPY_RECORDS = [
    {"record": "copy", "kind": "host_torch", "bytes": 4096, "time_s": 0.61e-6, "bw_bytes_per_s": 4096 / 0.61e-6},
    {"record": "copy", "kind": "host_torch", "bytes": 67108864, "time_s": 3.1, "bw_bytes_per_s": 67108864 / 3.1},
    {"record": "copy", "kind": "host_numpy", "bytes": 4096, "time_s": 0.32e-6, "bw_bytes_per_s": 4096 / 0.32e-6}]
COPY_TEXT = """\
# gpucomm copybw on vm: cpu X (2 torch threads)
# timing: host clock; iters 20 x 3 blocks (median block), warm-up 5
# peer access GPU 0->1: yes
# peer access GPU 1->0: no (copies staged through host memory)
# bw = bytes copied / time, one direction; GB/s = 1e9 B/s; sizes in bytes
#         kind        size       time       bw
#                      (B)       (us)   (GB/s)
    host_torch        4096       0.61     6.71
    host_torch    67108864    3100000     0.02
    host_numpy        4096       0.32    12.80
# peak host_torch   :     6.71 GB/s at 4 KiB
# peak host_numpy   :    12.80 GB/s at 4 KiB"""


def test_sweep_and_copy_tables_are_unchanged_by_the_shared_printer():
    assert format_table(SweepResults(SWEEP_RECORDS, SWEEP_META)) == SWEEP_TEXT
    assert format_copy_table(COPY_RECORDS, COPY_META) == COPY_TEXT


def test_copy_times_between_10_ms_and_1_s_keep_a_decimal_as_the_sweep_does():
    # The one change of the shared printer: copybw printed 12345.6 us as "12346".
    row = {"kind": "host_numpy", "bytes": 2**26, "time_s": 0.0123456, "bw_bytes_per_s": 2**26 / 0.0123456}
    assert format_copy_table([row], COPY_META).splitlines()[7].split()[2] == "12345.6"


def test_a_table_of_new_columns_aligns_like_the_others():
    columns = (Column("name", "", 6, lambda r: r["name"]), Column("x", "(m)", 6, lambda r: f"{r['x']:.1f}"))
    table = Table(columns=columns, comments=lambda meta: [f"# {meta['title']}"],
                  summary=lambda rows: [f"# {len(rows)} rows"], mark=lambda r: "  !" if r["x"] < 0 else "")
    # the "#" takes the place of the first column's first space, as in nccl-tests' header
    assert table.format([{"name": "a", "x": 1.0}, {"name": "b", "x": -2.0}], {"title": "t"}).splitlines() == [
        "# t", "# name     x", "#        (m)", "     a   1.0", "     b  -2.0  !", "# 2 rows"]
    assert SWEEP_TABLE.header({}).splitlines()[-2:] == SWEEP_TEXT.splitlines()[6:8]


TP_RESULT = {"num_ranks": 2, "backend": "gloo", "dtype": "float32", "iters": 3, "blocks": 3, "warmup_iters": 2,
             "devices": ["cpu X (1 thread)", "cpu X (1 thread)"], "config": {"hidden": 1024, "ffn": 4096, "tokens": 512},
             "blocks_in_layer": ["mlp"], "overlap": True, "chunks": 4,
             "serial_compute_s": 0.04556, "serial_comm_s": 0.00262, "serial_layer_s": 0.05202,
             "compute_s": 0.04946, "comm_s": 0.00962, "layer_s": 0.05631, "exposed_comm_s": 0.00685,
             "overlap_gain": -0.08, "hidden_comm_fraction": 0.29, "rel_error": 2.1e-7, "rel_error_overlap": 2.2e-7,
             "tolerance": 1e-4, "check_ok": True}


def test_tp_layer_table_has_a_row_per_variant():
    rows = tp_layer_rows({"MLP": TP_RESULT})
    assert [(r["layer"], r["variant"]) for r in rows] == [("MLP", "blocking"), ("MLP", "4 chunks")]
    assert rows[0]["waited_s"] == pytest.approx(0.05202 - 0.04556) and rows[1]["waited_s"] == 0.00685
    text = format_tp_layer_table(TP_RESULT).splitlines()
    assert text[0] == ("# gpucomm tp_layer: 2 ranks, backend gloo, float32, hidden 1024, ffn 4096, tokens 512; "
                       "iters 3 x 3 blocks (median block), warm-up 2")
    assert text[1] == "#  rank   0: cpu X (1 thread)"
    assert text[6].split() == ["mlp", "blocking", "45560.0", "2620.00", "52020.0", "6460.00", "2.1e-07"]
    assert text[7].split() == ["mlp", "4", "chunks", "49460.0", "9620.00", "56310.0", "6850.00", "2.2e-07"]
    assert text[-2:] == ["# mlp: overlap gain -8%, hidden: 29% of the chunked all_reduces",
                         "# Check              : OK (relative error <= 0.0001)"]
    failed = dict(TP_RESULT, check_ok=False, overlap=False)
    assert format_tp_layer_table([failed]).splitlines()[-1] == "# Check              : FAILED"
