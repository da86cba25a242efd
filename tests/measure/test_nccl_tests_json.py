"""nccl-tests' JSON output (-J FILE.json, nccl-tests 2.18+): read into the same records as its text output.

The JSON documents here are written from bundled real logs (their numbers, devices and command) in the layout of
nccl-tests v2.19.6 ``src/util.cu`` (keys, ``%lf`` doubles, the root as a padded string, one device entry per
process); the layout is the format's, the numbers the logs'.
"""

from __future__ import annotations

import json

import pytest

from gpucomm import GpucommError
from gpucomm.measure.logs.nccl_tests import bundled_log_text, read_bundled_log
from gpucomm.measure.logs.nccl_tests_json import looks_like_json, parse_nccl_tests_json, parse_nccl_tests_json_runs
from gpucomm.measure.logs.nccl_tests_results import read_nccl_tests_output


def _half(tokens: list[str]) -> str:
    time, algbw, busbw, wrong = tokens
    nwrong = "null" if wrong == "N/A" else f"{float(wrong):f}"
    return f'{{"time":{float(time):f},"alg_bw":{float(algbw):f},"bus_bw":{float(busbw):f},"nwrong":{nwrong}}}'


def json_from_log(name: str, *, processes: int = 16, ngpus: int = 1, cut: int | None = None,
                  rows: list[str] | None = None) -> str:
    """The JSON nccl-tests would have written for a bundled log's run, as util.cu writes it (one line, no spaces)."""
    text = bundled_log_text(name)
    rows = rows if rows is not None else [line for line in text.splitlines() if line.strip()[:1].isdigit()]
    devices = ",".join(f'{{"rank":{p},"group":0,"pid":{6899 + p},"hostname":"node{p // 8}","device":{p % 8},'
                       f'"device_hex":"0000:04:00","device_info":"NVIDIA H100 80GB HBM3"}}' for p in range(processes))
    results = []
    for row in rows:
        t = row.split()
        results.append(f'{{"size":{t[0]},"count":{t[1]},"type":"{t[2]}","redop":"{t[3]}","root":"{int(t[4]):6d}",'
                       f'"out_of_place":{_half(t[5:9])},"in_place":{_half(t[9:13])},"actual_iterations":20,'
                       '"experiment_name":""}')
    head = ('{"version":3,"start_time":"2025-06-01 10:00:00","args":["/opt/src/nccl-tests/build/all_reduce_perf","-b","8",'
            '"-e","8G","-f","2","-g",' + f'"{ngpus}"],"env":["HOME=/root","NCCL_DEBUG=WARN","SECRET=x"],'
            '"nccl_version":22703,"config":{"nthreads":1,' + f'"ngpus":{ngpus},' + '"minimum_bytes":8,'
            '"maximum_bytes":8589934592,"step_factor":2,"warmup_iters":5,"iterations":20,"aggregated_iterations":1,'
            '"validation":1,"graph":0,"blocking_collectives":false,"per_iter_timing":false,"per_iter_skip":0,'
            f'"parallel_init":false,"devices":[{devices}]}},"results":[')
    if cut is not None:
        return head + ",".join(results[:cut]) + "," + results[cut][:40]
    tail = ('],"out_of_bounds":{"count":0,"okay":true},"average_bus_bandwidth":{"bandwidth":70.742000,'
            '"okay":"unchecked"},"errors":[],"end_time":"2025-06-01 10:05:00"}')
    return head + ",".join(results) + tail


def test_the_json_output_reads_like_the_text_output():
    """Before: JSON could not be read at all ('no nccl-tests result rows found')."""
    text_log = read_bundled_log("C08")
    log = parse_nccl_tests_json(json_from_log("C08"))
    assert [(r.size_bytes, r.in_place, r.time_us, r.algbw_gbps, r.busbw_gbps, r.wrong) for r in log.records] == \
        [(r.size_bytes, r.in_place, r.time_us, r.algbw_gbps, r.busbw_gbps, r.wrong) for r in text_log.records]
    m = log.metadata
    assert (m["collective"], m["num_ranks"], m["num_ranks_source"]) == ("all_reduce", 16, "json")
    assert (m["nccl_version"], m["iters"], m["maxBytes"], m["date"]) == ("2.27.3", 20, 8589934592, "2025-06-01 10:00:00")
    assert m["env"] == {"NCCL_DEBUG": "WARN"} and m["avg_busbw_gbps"] == 70.742 and m["out_of_bounds"] == 0
    assert log.warning_codes() == [] and len(m["devices"]) == 16


def test_one_process_with_several_gpus_counts_every_gpu():
    """The device list has one entry per process: ranks = processes x threads x GPUs (C06: -g 4 in one process)."""
    log = parse_nccl_tests_json(json_from_log("C06", processes=1, ngpus=4))
    assert log.metadata["num_ranks"] == 4 and len(log.metadata["devices"]) == 1 and log.warning_codes() == []


def test_a_json_cut_short_keeps_its_complete_results():
    log = parse_nccl_tests_json(json_from_log("C08", cut=20))
    assert len(log.in_place()) == 20 and log.warning_codes()[0] == "json_cut"
    assert "stopped_early" in log.warning_codes()


def test_several_types_in_one_json_are_several_sweeps():
    rows = [line for line in bundled_log_text("C06").splitlines() if line.strip()[:1].isdigit()]
    halves = [r.replace("     float", "      half").replace("268435456", "536870912") for r in rows]
    text = json_from_log("C06", processes=4, rows=rows + halves)
    runs = parse_nccl_tests_json_runs(text)
    assert [{r.type for r in run.records} for run in runs] == [{"float"}, {"half"}]
    assert [run.metadata["lines"] for run in runs] == [(1, 4), (5, 8)]
    assert "several_runs" in parse_nccl_tests_json(text).warning_codes()
    assert len(read_nccl_tests_output(text)) == 2 and looks_like_json(text)


def test_unchecked_and_wrong_results():
    doc = json.loads(json_from_log("C08"))
    doc["results"][30]["in_place"]["nwrong"] = 12.0
    doc["results"][0]["out_of_place"]["nwrong"] = None
    doc["out_of_bounds"] = {"count": 1, "okay": False}
    log = parse_nccl_tests_json(json.dumps(doc))
    assert log.out_of_place()[0].wrong is None
    assert log.warning_codes()[:2] == ["out_of_bounds", "wrong"]


@pytest.mark.parametrize("text, match", [
    ("{", "not nccl-tests JSON output"),
    ('{"version": 3}', "without a 'results' list"),
    ('[1, 2]', "without a 'results' list"),
    ('{"results": [{"size": "big"}]}', "no nccl-tests results in the JSON \\(1 unreadable\\)"),
    ('{"results": []}', "no nccl-tests results"),
    ('{"results": [{"size": 8, "count": 2, "type": 5, "redop": true, '
     '"in_place": {"time": 1.0, "alg_bw": 0.0, "bus_bw": 0.0, "nwrong": 0.0}}]}', "1 unreadable"),
])
def test_json_that_is_not_nccl_tests_output_is_one_clear_error(text, match):
    with pytest.raises(GpucommError, match=match) as info:
        parse_nccl_tests_json(text)
    assert "\n" not in str(info.value)
