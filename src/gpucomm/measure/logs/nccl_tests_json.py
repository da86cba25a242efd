"""Read the JSON file nccl-tests writes with ``-J FILE.json`` into the same :class:`ParsedLog` as its text output.

nccl-tests 2.18 and later (``-J,--output_file``) write one JSON object per run, beside the text on
standard output (``src/util.cu``, ``JSON_FILE_VERSION`` 1 in v2.18-v2.19.2, 2 from v2.19.3, 3 in
v2.19.6)::

    {"version": 3, "start_time": "2025-06-01 10:00:00", "args": ["./build/all_reduce_perf", "-b", "8", ...],
     "env": ["NCCL_DEBUG=INFO", ...], "nccl_version": 22703,
     "config": {"nthreads": 1, "ngpus": 8, "minimum_bytes": 8, "maximum_bytes": 134217728, "step_factor": 2,
                "warmup_iters": 1, "iterations": 20, "aggregated_iterations": 1, "validation": 1, "graph": 0, ...,
                "devices": [{"rank": 0, "group": 0, "pid": 123, "hostname": "node1", "device": 0,
                             "device_hex": "0000:18:00", "device_info": "NVIDIA H100 80GB HBM3"}, ...]},
     "results": [{"size": 8, "count": 2, "type": "float", "redop": "sum", "root": "    -1",
                  "out_of_place": {"time": 10.5, "alg_bw": 0.0, "bus_bw": 0.0, "nwrong": 0.0},
                  "in_place": {"time": 10.2, "alg_bw": 0.0, "bus_bw": 0.0, "nwrong": 0.0},
                  "actual_iterations": 20, "experiment_name": ""}, ...],
     "out_of_bounds": {"count": 0, "okay": true},
     "average_bus_bandwidth": {"bandwidth": 123.4, "okay": "unchecked"},
     "errors": [], "end_time": "2025-06-01 10:01:00"}

Keys as written by ``jsonOutputInit``, ``writeDeviceReport``, ``writeBenchmarkLinePreamble``,
``writeBenchmarkLineBody`` (``"cpu_time"`` instead of ``"time"`` with ``-C 1``; ``"nwrong"`` null when
not checked; ``"out_of_place"`` null in trace replay) and ``writeResultFooter`` of nccl-tests
``src/util.cu`` (v2.19.6: https://github.com/NVIDIA/nccl-tests/blob/v2.19.6/src/util.cu). The device list
holds one entry per process (its first GPU), so the rank count is processes x ``nthreads`` x
``ngpus`` (nccl-tests' README). A file cut short (the run crashed before ``jsonOutputFinalize``) is
read up to its last complete result, with a ``json_cut`` warning.

The records then go through :func:`gpucomm.measure.logs.nccl_tests.finish_log`, the checks of the text
parser (wrong elements, one rank, dips, stopped early...). Standard library only.
"""

from __future__ import annotations

import json
import re

from gpucomm import GpucommError
from gpucomm.measure.logs.nccl_tests import PERF_BINARY_TO_COLLECTIVE, LogWarning, ParsedLog, Record, check_overrides, finish_log

__all__ = ["looks_like_json", "parse_nccl_tests_json", "parse_nccl_tests_json_runs"]

_EXPECTED = ("the JSON file nccl-tests writes with -J FILE.json (an object with 'results': a list of "
             "{'size', 'count', 'type', 'out_of_place', 'in_place'...})")
_PERF_RE = re.compile(r"([a-z_]+)_perf(?:\.exe)?$")
_CONFIG_KEYS = (("nthreads", "nThread"), ("ngpus", "nGpus"), ("minimum_bytes", "minBytes"), ("maximum_bytes", "maxBytes"),
                ("step_factor", "step_factor"), ("step_bytes", "step_bytes"), ("warmup_iters", "warmup_iters"),
                ("iterations", "iters"), ("aggregated_iterations", "agg_iters"), ("validation", "validation"),
                ("graph", "graph"))


def looks_like_json(text: str) -> bool:
    """Whether ``text`` is JSON rather than nccl-tests' text table: its first non-blank character is ``{``.

    Examples
    --------
    >>> looks_like_json('  {"version": 3}'), looks_like_json("# nThread 1 nGpus 8")
    (True, False)
    """
    return text.lstrip()[:1] == "{"


def _salvage(text: str) -> tuple[dict, int]:
    """The top-level keys and the complete results of a JSON document cut short; and how many results were read."""
    decoder = json.JSONDecoder()
    doc: dict = {}
    for key in ("version", "start_time", "args", "env", "nccl_version", "config"):
        at = text.find(f'"{key}":')
        if at >= 0:
            try:
                doc[key], _ = decoder.raw_decode(text, at + len(key) + 3)
            except json.JSONDecodeError:
                pass
    results: list = []
    at = text.find('"results":')
    if at >= 0:
        pos = text.find("[", at) + 1
        while 0 < pos < len(text):
            while pos < len(text) and text[pos] in " \t\r\n,":
                pos += 1
            if pos >= len(text) or text[pos] == "]":
                break
            try:
                item, pos = decoder.raw_decode(text, pos)
            except json.JSONDecodeError:
                break  # the result being written when the run stopped
            results.append(item)
        doc["results"] = results
    return doc, len(results)


def _number(value: object) -> float | None:
    """A finite JSON number, None for null and nccl-tests' ``"nan"``; ValueError for anything else."""
    if value is None or value == "nan":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or abs(value) == float("inf"):
        raise ValueError(value)
    return float(value)


def _record(item: object, position: int, in_place: bool) -> Record | None:
    """One half of one result object, None when that half is null (trace replay prints in-place only)."""
    if not isinstance(item, dict):
        raise ValueError(item)
    size, count = item["size"], item["count"]
    if isinstance(size, bool) or not isinstance(size, int) or size < 0 or isinstance(count, bool) \
            or not isinstance(count, int) or count < 0:
        raise ValueError(size)
    type_name, redop = item.get("type", "?"), item.get("redop")
    if not isinstance(type_name, str) or not (redop is None or isinstance(redop, str)):
        raise ValueError(type_name)
    half = item.get("in_place" if in_place else "out_of_place")
    if half is None:
        return None
    if not isinstance(half, dict):
        raise ValueError(half)
    time_us = _number(half.get("time", half.get("cpu_time")))
    algbw, busbw = _number(half.get("alg_bw")), _number(half.get("bus_bw"))
    if algbw is None or busbw is None or algbw < 0 or busbw < 0 or (time_us is not None and time_us < 0):
        raise ValueError(half)
    wrong = _number(half.get("nwrong"))
    root = str(item.get("root", "")).strip()
    return Record(size, count, type_name, redop,
                  int(root) if re.fullmatch(r"-?\d{1,9}", root) else None, in_place, time_us, algbw, busbw,
                  None if wrong is None else int(wrong), None, size, position,
                  **_iteration_stats(item.get("in_place_per_iter" if in_place else "out_of_place_per_iter")))


_PER_ITER_KEYS = (("min_us", "iter_min_us"), ("p50_us", "iter_p50_us"), ("p99_us", "iter_p99_us"), ("max_us", "iter_max_us"),
                  ("avg_us", "iter_mean_us"), ("stdev_us", "iter_stdev_us"), ("cv_pct", "iter_cv_pct"))
"""``-I 1``'s per-iteration statistics in the JSON (``writePerIterReport``, ``src/util.cu`` v2.19.6) -> :class:`Record` fields."""


def _iteration_stats(stats: object) -> dict:
    """The :class:`Record` fields of a ``*_per_iter`` object (nothing where there is none; ValueError if not numbers)."""
    if stats is None:
        return {}
    if not isinstance(stats, dict):
        raise ValueError(stats)
    values = {field: _number(stats.get(key)) for key, field in _PER_ITER_KEYS}
    if any(v is not None and v < 0 for v in values.values()):
        raise ValueError(stats)
    return values


def parse_nccl_tests_json(text: str, *, collective: str | None = None, num_ranks: int | None = None) -> ParsedLog:
    """Parse the JSON output of an nccl-tests binary (``-J FILE.json``) as one sweep.

    Parameters
    ----------
    text : str
        The file's text: one JSON object per run, or several written one after another (``cat a.json b.json``).
    collective, num_ranks : optional
        As for :func:`gpucomm.measure.logs.nccl_tests.parse_nccl_tests`: override what the file says.

    Returns
    -------
    ParsedLog
        As the text parser's, with ``layout`` ``"json"`` and ``json_version``; each record's ``line``
        is its position in ``results`` (1-based, counted on across the objects). ``date`` is the file's
        ``start_time``; ``env`` holds the ``NCCL_*`` variables of the run. Several sweeps in one file (``-d all``,
        ``-o all``: the sizes start again; or several objects) are read as one, with a ``several_runs`` warning:
        see :func:`parse_nccl_tests_json_runs`.

    Raises
    ------
    GpucommError
        Text that is not JSON, JSON without a ``results`` list, or no result at all.

    Examples
    --------
    >>> log = parse_nccl_tests_json('''{"version": 3, "args": ["./build/all_gather_perf", "-g", "2"],
    ...   "config": {"nthreads": 1, "ngpus": 2, "devices": [{"rank": 0, "hostname": "n1", "device": 0}]},
    ...   "results": [{"size": 33554432, "count": 8388608, "type": "bfloat16", "redop": "none", "root": "    -1",
    ...                "out_of_place": {"time": 183.0, "alg_bw": 183.36, "bus_bw": 91.68, "nwrong": 0.0},
    ...                "in_place": {"time": 156.1, "alg_bw": 214.96, "bus_bw": 107.48, "nwrong": 0.0}}],
    ...   "average_bus_bandwidth": {"bandwidth": 99.6, "okay": "unchecked"}}''')
    >>> log.metadata["collective"], log.metadata["num_ranks"], log.in_place()[0].busbw_gbps
    ('all_gather', 2, 107.48)
    """
    runs = _read(text, collective, num_ranks)
    records = [r for run in runs for r in run[0]]
    meta, warnings = runs[0][1], [w for run in runs for w in run[2]]
    sweeps = [sweep for run in runs for sweep in run[3]]
    if len(sweeps) > 1:
        warnings.append(LogWarning("several_runs", f"{len(sweeps)} sweeps in one file (the sizes start again at result "
                                                   f"{', '.join(str(first) for first, _ in sweeps[1:4])}), read here as "
                                                   "one: parse_nccl_tests_json_runs keeps them apart"))
    return finish_log(records, meta, warnings, collective=collective, num_ranks=num_ranks)


def parse_nccl_tests_json_runs(text: str, *, collective: str | None = None,
                               num_ranks: int | None = None) -> tuple[ParsedLog, ...]:
    """:func:`parse_nccl_tests_json`, one :class:`ParsedLog` per sweep (``-d all`` and ``-o all`` sweep each type or
    operation in turn, in one object; several objects written one after another are one run each at least): each
    ``metadata`` has ``run``, ``runs`` and ``lines`` (first and last result).

    Raises
    ------
    GpucommError
        As :func:`parse_nccl_tests_json`.
    """
    parts = [(records, meta, warnings, sweep) for records, meta, warnings, sweeps in _read(text, collective, num_ranks)
             for sweep in sweeps]
    runs = []
    for k, (records, meta, warnings, (first, last)) in enumerate(parts, start=1):
        mine = [r for r in records if first <= r.line <= last]
        runs.append(finish_log(mine, dict(meta, run=k, runs=len(parts), lines=(first, last)), list(warnings),
                               collective=collective, num_ranks=num_ranks))
    return tuple(runs)


Part = tuple[list[Record], dict, list[LogWarning], list[tuple[int, int]]]


def _documents(text: str) -> tuple[list[dict], LogWarning | None]:
    """The JSON objects of a file, one after another; the last one salvaged (with a ``json_cut`` warning) if cut short."""
    decoder = json.JSONDecoder()
    docs: list = []
    pos = 0
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos >= len(text):
            return docs, None
        try:
            doc, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            rest = text[pos:]
            salvaged, read = _salvage(rest)
            if not salvaged.get("results"):
                if docs and not rest.lstrip().startswith("{"):
                    raise GpucommError(f"not nccl-tests JSON output after its object {len(docs)} ({exc.msg} at line "
                                       f"{exc.lineno}): expected {_EXPECTED}") from None
                raise GpucommError(f"not nccl-tests JSON output ({exc.msg} at line {exc.lineno}): expected {_EXPECTED}") from None
            docs.append(salvaged)
            return docs, LogWarning("json_cut", f"the JSON output ends at line {exc.lineno} before its closing brace "
                                                f"(the run stopped, or the file was cut): {read} complete result(s) read")
        docs.append(doc)


def _read(text: str, collective: str | None, num_ranks: int | None) -> list[Part]:
    """Per JSON object of the file: its records, metadata, warnings and the (first, last) result positions of each sweep."""
    check_overrides(text, collective, num_ranks)
    docs, cut = _documents(text)
    parts: list[Part] = []
    offset = 0
    for k, doc in enumerate(docs):
        part = _read_document(doc, offset)
        if cut is not None and k == len(docs) - 1:
            part[2].insert(0, cut)
        parts.append(part)
        offset += len(doc["results"]) if isinstance(doc, dict) and isinstance(doc.get("results"), list) else 0
    return parts


def _read_document(doc: object, offset: int) -> Part:
    """One JSON object: records (positions after ``offset``), metadata, warnings, sweeps."""
    warnings: list[LogWarning] = []
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise GpucommError(f"JSON without a 'results' list: expected {_EXPECTED}")
    records: list[Record] = []
    bad: list[int] = []
    for position, item in enumerate(doc["results"], start=offset + 1):
        try:
            halves = [_record(item, position, in_place) for in_place in (False, True)]
        except (ValueError, KeyError, TypeError):
            bad.append(position)
            continue
        if halves == [None, None]:
            bad.append(position)
        records += [r for r in halves if r is not None]
    if not records:
        raise GpucommError(f"no nccl-tests results in the JSON{f' ({len(bad)} unreadable)' if bad else ''}: "
                           f"expected {_EXPECTED}")
    if bad:
        warnings.append(LogWarning("bad_row", f"result(s) {', '.join(map(str, bad[:5]))}"
                                              f"{' and more' if len(bad) > 5 else ''} of the JSON are not numbers as "
                                              "nccl-tests writes them: skipped"))
    meta = _metadata(doc)
    if meta.get("out_of_bounds"):
        warnings.append(LogWarning("out_of_bounds", f"out_of_bounds count {meta['out_of_bounds']}: the data check "
                                                    "failed (values out of bounds); the bandwidth is not trustworthy"))
    if meta.get("errors"):
        warnings.append(LogWarning("nccl_error", f"the run reported NCCL error(s): {'; '.join(meta['errors'])[:300]}"))
    positions = sorted({r.line: r.size_bytes for r in records}.items())
    starts = [positions[0][0]] + [p for (p, size), (_, before) in zip(positions[1:], positions) if size < before]
    ends = [p - 1 for p in starts[1:]] + [positions[-1][0]]
    return records, meta, warnings, list(zip(starts, ends))


def _metadata(doc: dict) -> dict:
    """:attr:`ParsedLog.metadata` from the JSON document's top-level keys."""
    meta: dict = {"layout": "json", "json_version": doc.get("version")}
    args = doc.get("args") if isinstance(doc.get("args"), list) else []
    if args:
        meta["command"] = " ".join(str(a) for a in args)
        perf = _PERF_RE.search(str(args[0]).replace("\\", "/").split("/")[-1])
        if perf:
            meta["collective"] = PERF_BINARY_TO_COLLECTIVE.get(perf.group(1), perf.group(1))
            meta["collective_source"] = "command"
    if isinstance(doc.get("start_time"), str):
        meta["date"] = doc["start_time"]
    code = doc.get("nccl_version")
    if isinstance(code, int) and code >= 20900:  # NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9
        meta["nccl_version"] = f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    env = doc.get("env") if isinstance(doc.get("env"), list) else []
    meta["env"] = dict(str(e).split("=", 1) for e in env if str(e).startswith("NCCL_") and "=" in str(e))
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    for key, name in _CONFIG_KEYS:
        if isinstance(config.get(key), int) and not isinstance(config.get(key), bool):
            meta[name] = config[key]
    devices = config.get("devices") if isinstance(config.get("devices"), list) else []
    devices = [d for d in devices if isinstance(d, dict)]
    if devices:
        meta["devices"] = [{"rank": d.get("rank"), "host": d.get("hostname"), "device": d.get("device"),
                            "bus_id": d.get("device_hex"), "name": d.get("device_info")} for d in devices]
        # one entry per process (its first GPU): ranks = processes x threads x GPUs per thread
        meta["num_ranks"] = len(devices) * meta.get("nThread", 1) * meta.get("nGpus", 1)
        meta["num_ranks_source"] = "json"
    bounds = doc.get("out_of_bounds")
    if isinstance(bounds, dict) and isinstance(bounds.get("count"), int):
        meta["out_of_bounds"] = bounds["count"]
    average = doc.get("average_bus_bandwidth")
    if isinstance(average, dict):
        try:
            value = _number(average.get("bandwidth"))
        except ValueError:
            value = None
        if value is not None:
            meta["avg_busbw_gbps"] = value
    errors = doc.get("errors") if isinstance(doc.get("errors"), list) else []
    if errors:
        meta["errors"] = [str(e) for e in errors]
    return meta
