"""A parsed nccl-tests log as the results records of ``gpucomm bench``, and the table ``gpucomm parse`` prints.

:func:`log_to_results` turns a :class:`~gpucomm.measure.logs.nccl_tests.ParsedLog` into a metadata
record and one result record per message size, built by :func:`gpucomm.measure.results.sweep_record`
as ``gpucomm bench`` builds its own, so :func:`gpucomm.measure.results.read_results`,
:func:`gpucomm.model.fit.fit_sweep` and :func:`gpucomm.viz.figures.measured.measured_vs_model_figure`
take a published log exactly as they take a sweep of one's own. :func:`format_log_table` is the
text ``gpucomm parse`` prints; :func:`read_nccl_tests_output` reads every run of a text or JSON output.

nccl-tests prints an out-of-place and an in-place measurement for every size; both are kept (the
``out_of_place`` and ``in_place`` fields of each record) and shown. The record's top level (what a
fit reads) is the in-place one by default, as ``gpucomm bench`` measures torch's in-place
``all_reduce`` (``placement``; ``in_place=False`` for the other). Values are taken as printed:
nccl-tests averages the time over ranks by default (``-a 1``) where ``gpucomm bench`` reports the
slowest rank; the metadata's ``timing`` and ``time_over_ranks`` say which (from the command's ``-a`` or
gpucomm bench's header). A ``gpucomm bench`` table keeps its backend (``gloo`` on CPU) and is
recorded with ``source_tool`` ``gpucomm.bench``.

Standard library and :mod:`gpucomm.model` only (no torch).
"""

from __future__ import annotations

import datetime as _dt

import gpucomm
from gpucomm.measure.config import PLACEMENTS
from gpucomm.measure.logs.nccl_tests import SOURCE_WORDS, ParsedLog, Record, legacy_error_bound, parse_nccl_tests_runs
from gpucomm.measure.logs.nccl_tests_json import looks_like_json, parse_nccl_tests_json_runs
from gpucomm.measure.results import SCHEMA_VERSION, format_footer, sweep_record
from gpucomm.model.collectives import COLLECTIVES, REGISTRY, busbw_factor
from gpucomm.model.dtypes import ELEMENT_TYPES

__all__ = ["DTYPE_NAMES", "KEPT_AS_PRINTED", "record_dtype", "read_nccl_tests_output", "primary_records",
           "log_to_results", "format_log_table"]

KEPT_AS_PRINTED = frozenset({"float8_e4m3fn", "float8_e5m2"})
"""Element types whose nccl-tests name is recorded as printed (``f8e4m3``), not as the torch name.

Results files written before :data:`DTYPE_NAMES` was derived from :mod:`gpucomm.model.dtypes`
record FP8 runs as ``f8e4m3`` / ``f8e5m2``; keeping that name keeps new files comparable with them
(``gpucomm bench`` measures no FP8 type, so no torch name has to match)."""

DTYPE_NAMES = {spelling: t.name for t in ELEMENT_TYPES if t.name not in KEPT_AS_PRINTED for spelling in t.spellings}
"""Every spelling of an element type nccl-tests prints (``float``, ``half``, ``char``...) -> the torch dtype name
(as ``gpucomm bench`` records it), from :data:`gpucomm.model.dtypes.ELEMENT_TYPES`; names not in it (FP8,
:data:`KEPT_AS_PRINTED`, and unknown types) are kept as printed, in lower case."""


def record_dtype(type_name: str) -> str:
    """The dtype name recorded for nccl-tests' ``type`` column: :data:`DTYPE_NAMES`, else as printed (lower case).

    Examples
    --------
    >>> record_dtype("float"), record_dtype("half"), record_dtype("f8e4m3")
    ('float32', 'float16', 'f8e4m3')
    """
    return DTYPE_NAMES.get(type_name.lower(), type_name.lower())


def read_nccl_tests_output(text: str, *, collective: str | None = None,
                           num_ranks: int | None = None) -> tuple[ParsedLog, ...]:
    """Every run in nccl-tests output, text (the table on standard output) or JSON (``-J FILE.json``).

    Parameters
    ----------
    text : str
        The output. JSON is recognised by its first character (``{``).
    collective, num_ranks : optional
        Override what the output says (see :func:`gpucomm.measure.logs.nccl_tests.parse_nccl_tests`).

    Returns
    -------
    tuple of ParsedLog
        One per run (:func:`gpucomm.measure.logs.nccl_tests.parse_nccl_tests_runs`,
        :func:`gpucomm.measure.logs.nccl_tests_json.parse_nccl_tests_json_runs`), in order.

    Raises
    ------
    GpucommError
        No result in the text, JSON that is not nccl-tests', or bad overrides.
    """
    if looks_like_json(text):
        return parse_nccl_tests_json_runs(text, collective=collective, num_ranks=num_ranks)
    return parse_nccl_tests_runs(text, collective=collective, num_ranks=num_ranks)


def primary_records(meta: dict, records: list[dict]) -> list[dict]:
    """The result records a fit of a results file uses: one per size, its placement at the top level.

    Records of ``gpucomm bench`` and ``gpucomm parse`` hold one size each, one placement at their
    top level (``placement``). Those whose placement is not the file's (``meta["placement"]``, set
    by ``gpucomm parse``: a size the log measured the other way only) are left out; a bench file
    (no ``meta["placement"]``) and a file written before the placements (no ``placement``) pass
    unchanged. A file that ``gpucomm parse`` wrote with one record per size and placement (an
    ``in_place`` field true or false, ``meta["placement"]`` spelt ``in-place``) gives the records of
    ``meta["placement"]`` (in-place when absent).

    Examples
    --------
    >>> rows = [{"msg_bytes": 8, "placement": "in_place"}, {"msg_bytes": 16, "placement": "out_of_place"}]
    >>> primary_records({"placement": "in_place"}, rows), len(primary_records({}, rows))
    ([{'msg_bytes': 8, 'placement': 'in_place'}], 2)
    >>> primary_records({"placement": "in-place"}, [{"msg_bytes": 8, "in_place": False}, {"msg_bytes": 8, "in_place": True}])
    [{'msg_bytes': 8, 'in_place': True}]
    """
    wanted = meta.get("placement")
    wanted = wanted.replace("-", "_") if isinstance(wanted, str) else None
    rows = []
    for r in records:
        flag = r.get("in_place")
        if isinstance(flag, bool):  # one record per size and placement: keep the file's placement
            if flag == (wanted != "out_of_place"):
                rows.append(r)
        elif wanted is None or r.get("placement", wanted) == wanted:
            rows.append(r)
    return rows


def _chunked(collective: str | None, num_ranks: int | None) -> bool:
    """True where nccl-tests prints the count per rank (all_gather, reduce_scatter, all_to_all) and the ranks are known."""
    return collective in REGISTRY and REGISTRY[collective].chunked and bool(num_ranks)


def _measurement(row: Record | None, iters: int | None) -> dict | None:
    """One half of a printed row as a placement's measurement (:data:`gpucomm.measure.results.MEASUREMENT_KEYS`).

    The per-iteration statistics of nccl-tests ``-I 1`` go to the ``iter_*_s`` fields, in seconds (the text prints
    minimum, maximum and 99th percentile; the JSON also the median, mean and standard deviation).
    """
    if row is None:
        return None
    per_iter = {f"iter_{name}_s": None if getattr(row, f"iter_{name}_us") is None else getattr(row, f"iter_{name}_us") * 1e-6
                for name in ("min", "p50", "p99", "max", "mean", "stdev")}
    return {"time_s": row.time_us * 1e-6, "algbw_bytes_per_s": row.algbw_gbps * 1e9,
            "busbw_bytes_per_s": row.busbw_gbps * 1e9, "num_wrong": row.wrong, "iters": iters, **per_iter}


OVER_RANKS_TEXT = {"rank0": "rank 0's time (-a 0)", "avg": "the mean over ranks (-a 1)",
                   "min": "the minimum over ranks (-a 2)", "max": "the maximum over ranks (-a 3)"}
"""How the printed time was reduced over ranks, by ``time_over_ranks`` (nccl-tests ``-a``; ``Allreduce`` in
``src/common.cu`` v2.19.6; ``gpucomm bench -a`` takes the same values, its default being 3)."""


def _timing(m: dict) -> str:
    """The ``timing`` text of the metadata: how the log's times were reduced over ranks, and how that is known."""
    over = m.get("time_over_ranks")
    if over in OVER_RANKS_TEXT:
        where = {"command": "the command's -a", "gpucomm_header": "gpucomm bench's header"}.get(
            m.get("time_over_ranks_source"), "the log")
        return f"as printed: {OVER_RANKS_TEXT[over]}, from {where}"
    if m.get("gpucomm_table"):
        return "as printed: gpucomm bench's table without its timing line (its default is the maximum over ranks, -a 3)"
    return "as printed by nccl-tests (average over ranks by default, -a 1)"


def log_to_results(log: ParsedLog, *, in_place: bool = True, input_name: str | None = None) -> tuple[dict, list[dict]]:
    """The metadata record and result records (``gpucomm bench``'s schema) of a parsed log, both placements.

    Parameters
    ----------
    log : ParsedLog
        From :func:`gpucomm.measure.logs.nccl_tests.parse_nccl_tests` (or one run of
        :func:`read_nccl_tests_output`).
    in_place : bool
        The placement at the top level of the records, which a fit reads (``placement``, and
        ``meta["placement"]``): in-place (default, what ``gpucomm bench`` measures of all_reduce)
        or out-of-place. When it has no time at any size, the other one is (said in the
        metadata's ``placement_note``); a size that lacks it alone has the other one at its top
        level (said there too; ``gpucomm fit`` leaves it out, :func:`primary_records`).
    input_name : str or None
        Where the text came from, recorded in the metadata.

    Returns
    -------
    (dict, list of dict)
        The ``"record": "meta"`` object and one ``"record": "result"`` per printed row with a
        time, in size order, from :func:`gpucomm.measure.results.sweep_record`: the top-level
        fields of the chosen placement, ``num_wrong`` summed over both, and each half in
        ``out_of_place`` and ``in_place`` (None where the row prints no time). ``count`` is the
        elements of the whole buffer, as ``gpucomm bench`` records it (nccl-tests prints it per
        rank for all_gather, reduce_scatter and all_to_all: here multiplied by the ranks when they
        are known); ``root`` as printed (None in layouts without the column); per-iteration
        fields None. ``collective`` and ``num_ranks`` are None when nothing says or implies them
        (then ``busbw_factor`` is None too); ``run`` and ``runs`` number the run in its log.

    Examples
    --------
    >>> from gpucomm.measure.logs.nccl_tests import read_bundled_log
    >>> meta, rows = log_to_results(read_bundled_log("C04"))
    >>> meta["num_ranks"], meta["collective"], meta["placement"], len(rows)
    (4, 'all_reduce', 'in_place', 4)
    >>> last = rows[-1]
    >>> last["msg_bytes"], last["placement"], last["busbw_bytes_per_s"] / 1e9, last["out_of_place"]["busbw_bytes_per_s"] / 1e9
    (8589934592, 'in_place', 234.74, 234.72)
    """
    m = log.metadata
    collective, n = m.get("collective"), m.get("num_ranks")
    timed = [r for r in log.records if r.time_us is not None and r.time_us > 0]
    present = [p for p in PLACEMENTS if any(r.in_place == (p == "in_place") for r in timed)]
    primary = "in_place" if in_place else "out_of_place"
    notes = []
    if present and primary not in present:
        notes.append(f"no {primary.replace('_', '-')} times in the log: the {present[0].replace('_', '-')} column "
                     "is used")
        primary = present[0]
    # Both halves of a printed row share its line (the JSON output: its position), so rows of a size
    # printed twice (interleaved runs, duplicate_size) stay apart, as the log prints them.
    halves: dict[tuple[int, int], dict[str, Record]] = {}
    for r in timed:
        halves.setdefault((r.size_bytes, r.line), {})["in_place" if r.in_place else "out_of_place"] = r
    chunked = _chunked(collective, n)
    records = []
    for (size, _), row in sorted(halves.items()):
        first = row.get("out_of_place") or row["in_place"]
        records.append(sweep_record(
            collective=collective, msg_bytes=size, count=first.count * n if chunked else first.count,
            dtype=record_dtype(first.type), op=first.redop, num_ranks=n, blocks=1,
            warmup_iters=m.get("warmup_iters"), root=first.root, primary=primary,
            measured={p: _measurement(row.get(p), m.get("iters")) for p in PLACEMENTS}))
    lacking = [r["msg_bytes"] for r in records if r["placement"] != primary]
    if lacking:
        notes.append(f"{len(lacking)} size(s) without an {primary.replace('_', '-')} time (first {lacking[0]} B) "
                     "hold the other placement at their top level; gpucomm fit leaves them out")
    meta = _results_meta(log, records, primary=primary, present=present, notes=notes, input_name=input_name)
    return meta, records


def _results_meta(log: ParsedLog, records: list[dict], *, primary: str, present: list[str], notes: list[str],
                  input_name: str | None) -> dict:
    """The ``"record": "meta"`` object of :func:`log_to_results`: gpucomm bench's fields, as the log gives them."""
    m = log.metadata
    collective, n = m.get("collective"), m.get("num_ranks")
    timed = [r for r in log.records if r.time_us is not None and r.time_us > 0]
    factor = busbw_factor(collective, n) if collective in COLLECTIVES and n else None
    dtypes = sorted({record_dtype(r.type) for r in timed})
    ops = sorted({r.redop for r in timed if r.redop})
    devices = m.get("devices") or []
    sizes = [r["msg_bytes"] for r in records]
    # gpucomm bench's fields, but not built by gpucomm.measure.harness.metadata_record: that one imports
    # torch and describes the machine it runs on (host, date, versions, environment); these describe the log's.
    meta = {
        "record": "meta",
        "schema": SCHEMA_VERSION,
        "tool": "gpucomm.parse",
        "source_tool": "gpucomm.bench" if m.get("gpucomm_table") else "nccl-tests",
        "gpucomm_version": gpucomm.__version__,
        "date": m.get("date"),  # the JSON output's start time; the text output prints no date
        "parsed_at": _dt.datetime.now(_dt.timezone.utc).astimezone().isoformat(timespec="seconds"),
        "input": input_name,
        "run": m.get("run", 1),
        "runs": m.get("runs", 1),
        "lines": list(m["lines"]) if m.get("lines") else None,
        "source": m.get("source"),
        "host": devices[0]["host"] if devices else None,
        "hosts": sorted({str(d["host"]) for d in devices}),
        "rank_hosts": [d["host"] for d in devices],
        "devices": [f"{d.get('name') or 'GPU'} (device {d.get('device')}, bus {d.get('bus_id')})" for d in devices],
        "num_ranks": n,
        "num_ranks_source": m.get("num_ranks_source"),
        "backend": m.get("backend") or "nccl",  # gpucomm bench's table says its backend (gloo on CPU); nccl-tests runs NCCL
        "backend_note": (f"from the gpucomm bench table's header: backend {m['backend']}" if m.get("backend") else None),
        "launcher": None,
        "collective": collective,
        "collective_source": m.get("collective_source"),
        "collective_candidates": m.get("collective_candidates"),
        "dtype": dtypes[0] if len(dtypes) == 1 else ",".join(dtypes),
        "op": ops[0] if len(ops) == 1 else (",".join(ops) if ops else None),
        "min_bytes": m.get("minBytes", min(sizes) if sizes else None),
        "max_bytes": m.get("maxBytes", max(sizes) if sizes else None),
        "step_factor": m.get("step_factor"),
        "step_bytes": m.get("step_bytes"),
        "iters": m.get("iters"),
        "blocks": 1,
        "warmup_iters": m.get("warmup_iters"),
        "check": None if m.get("validation") is None else bool(m.get("validation")),
        "busbw_factor": factor,
        "placement": primary,
        "placements": present,
        "placement_note": "; ".join(notes) or None,
        "timing": _timing(m),
        "time_over_ranks": m.get("time_over_ranks"),
        "buffer_registration": m.get("buffer_registration"),
        "out_of_bounds": m.get("out_of_bounds"),
        "max_error": max((r.max_error for r in log.records if r.max_error is not None), default=None),
        "error_bound": _error_bound(log),
        "nccl_version": m.get("nccl_version"),
        "nccl_tests_version": m.get("version"),
        "command": m.get("command"),
        "layout": m.get("layout"),
        "avg_busbw_bytes_per_s": m["avg_busbw_gbps"] * 1e9 if m.get("avg_busbw_gbps") is not None else None,
        "warnings": [{"code": w.code, "message": w.message} for w in log.warnings],
        "env": dict(m.get("env") or {}),
        "argv": [],
    }
    return meta


def _error_bound(log: ParsedLog) -> float | None:
    """nccl-tests' bound on the old ``error`` column for this log's type and ranks (None in the current layout)."""
    typed = [r for r in log.records if r.max_error is not None]
    if not typed:
        return None
    return legacy_error_bound(typed[0].type, log.metadata.get("num_ranks") or 2)


def _footer(m: dict, records: list[dict]) -> list[str]:
    """The summary lines of ``gpucomm parse``'s table: the log's own verdict where it printed one.

    nccl-tests' ``Out of bounds values`` counts wrong values (``writeResultFooter``, ``src/util.cu``), which the rows
    do not give back (``#wrong`` sums elements over ranks), so the log's own line is reprinted as printed. In the
    old layout the check is the ``error`` column, the largest deviation: its largest value is shown beside
    nccl-tests' bound (:func:`gpucomm.measure.logs.nccl_tests.legacy_error_bound`), never ``N/A (check off)``
    when the header says ``validation: 1``.
    """
    lines = format_footer(records).splitlines()
    first = lines[0].split(":", 1)[0] + ": " if lines else ""
    if m.get("out_of_bounds") is not None:
        count = m["out_of_bounds"]
        lines[0] = f"{first}{count} {'FAILED' if count else 'OK'} (as the log prints it)"
    elif m.get("max_error") is not None:
        verdict = "FAILED" if m["max_error"] > (m.get("error_bound") or 0.0) else "OK"
        lines[0] = (f"{first}N/A: the old 'error' column holds the largest deviation, {m['max_error']:g} "
                    f"(nccl-tests' bound {m['error_bound']:g}): {verdict}")
    return lines


def _source(meta: dict, key: str) -> str:
    source = meta.get(f"{key}_source")
    return f" ({SOURCE_WORDS.get(source, source)})" if source else ""


def _cell(value: float | None, width: int, digits: int = 2) -> str:
    return f"{'N/A':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def format_log_table(meta: dict, records: list[dict], input_name: str) -> str:
    """The text ``gpucomm parse`` prints for one run: a header, both placements side by side, the summary, the warnings.

    Parameters
    ----------
    meta, records
        From :func:`log_to_results` (one record per printed row, both placements in it).
    input_name : str
        Named in the first line.

    Returns
    -------
    str
        Lines without a final newline: ``#`` comment lines, then one row per size with the
        out-of-place and the in-place time (us), algbw, busbw (GB/s = 1e9 B/s) and wrong
        elements, as nccl-tests prints them.
    """
    m = meta
    version = f"nccl-tests {m['nccl_tests_version']}" if m.get("nccl_tests_version") else "nccl-tests"
    nccl = f", NCCL {m['nccl_version']}" if m.get("nccl_version") else ""
    run = f" (run {m['run']} of {m['runs']}, result rows at lines {m['lines'][0]}-{m['lines'][1]})" \
        if m.get("runs", 1) > 1 and m.get("lines") else ""
    if m["collective"] is not None:
        collective = f"{m['collective']}{_source(m, 'collective')}"
    elif m.get("collective_candidates"):
        collective = f"collective ? ({' or '.join(m['collective_candidates'])})"
    else:
        collective = "collective ?"
    ranks = f"{m['num_ranks']} ranks{_source(m, 'num_ranks')}" if m["num_ranks"] is not None else "? ranks"
    lines = [f"# parsed {input_name}{run}: {version}{nccl}, {collective}, {ranks}, {m['dtype'] or '?'} "
             f"{m['op'] or ''}".rstrip()]
    if m.get("source"):
        lines.append(f"# source: {m['source']}")
    if m.get("command"):
        lines.append(f"# command: {m['command']}")
    for rank, (host, device) in enumerate(zip(m.get("rank_hosts", []), m.get("devices", []))):
        lines.append(f"#  rank {rank:3d} on {host}: {device}")
    factor = m["busbw_factor"]
    lines.append(f"# time: {m['timing'].removeprefix('as printed: ')}; GB/s = 1e9 B/s; busbw as printed"
                 + (f" (= algbw * {factor:g})" if factor is not None else ""))
    primary = m["placement"].replace("-", "_")
    lines.append(f"# both placements are kept; gpucomm fit uses the {primary.replace('_', '-')} one (marked *)")
    half = f"{'time':>10}{'algbw':>8}{'busbw':>8}{'#wrong':>7}"
    units = f"{'(us)':>10}{'(GB/s)':>8}{'(GB/s)':>8}{'':>7}"
    lines.append(f"#{'':>11}{'':>13}{'':>10}{'':>7}"
                 + "".join(f"{('*' if p == primary else ' ') + p.replace('_', '-'):>33}" for p in PLACEMENTS))
    lines.append(f"#{'size':>11}{'count':>13}{'type':>10}{'redop':>7}{half}{half}")
    lines.append(f"#{'(B)':>11}{'(elements)':>13}{'':>10}{'':>7}{units}{units}")
    per_rank = _chunked(m["collective"], m["num_ranks"])
    for r in records:
        count = r["count"] // m["num_ranks"] if per_rank else r["count"]  # as nccl-tests prints it
        row = f"{r['msg_bytes']:>12}{count:>13}{r['dtype'] or '?':>10}{r['op'] or '-':>7}"
        for placement in PLACEMENTS:
            h = r[placement]
            if h is None:
                row += f"{'':>33}"
                continue
            wrong = "N/A" if h["num_wrong"] is None else str(h["num_wrong"])
            row += (_cell(h["time_s"] * 1e6, 10) + _cell(h["algbw_bytes_per_s"] / 1e9, 8)
                    + _cell(h["busbw_bytes_per_s"] / 1e9, 8) + f"{wrong:>7}")
        lines.append(row)
    # the same footer as gpucomm bench's, worded as nccl-tests' (writeResultFooter), with the log's own verdict
    lines += _footer(m, records)
    if m.get("placement_note"):
        lines.append(f"# note: {m['placement_note']}")
    for w in m["warnings"]:
        lines.append(f"# warning [{w['code']}]: {w['message']}")
    if m["collective"] is None or m["num_ranks"] is None:
        missing = " and ".join(x for x, v in (("which collective", m["collective"]), ("how many ranks", m["num_ranks"]))
                               if v is None)
        lines.append(f"# warning [unknown_shape]: neither the log nor its numbers say {missing}; pass "
                     + " and ".join(f for f, v in (("--collective", m["collective"]), ("--ranks", m["num_ranks"]))
                                    if v is None) + " to record them")
    return "\n".join(lines)
