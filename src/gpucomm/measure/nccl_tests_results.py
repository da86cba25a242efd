"""A parsed nccl-tests log as the results records of ``gpucomm bench``, and the table ``gpucomm parse`` prints.

:func:`log_to_results` turns a :class:`~gpucomm.measure.nccl_tests_log.ParsedLog` into a metadata
record and one result record per message size, in the schema of :mod:`gpucomm.measure.results`, so
:func:`gpucomm.measure.results.read_results`, :func:`gpucomm.model.fit.fit_sweep` and
:func:`gpucomm.viz.figures.measured.measured_vs_model_figure` take a published log exactly as they
take a sweep of one's own. :func:`format_log_table` is the text ``gpucomm parse`` prints.

nccl-tests prints an out-of-place and an in-place measurement for every size. ``gpucomm bench``
measures torch's in-place ``all_reduce``, so the in-place column is used by default. Values are
taken as printed: nccl-tests averages the time over ranks by default (``-a 1``) where ``gpucomm
bench`` reports the slowest rank.

Standard library and :mod:`gpucomm.model` only (no torch).
"""

from __future__ import annotations

import datetime as _dt

import gpucomm
from gpucomm.measure.nccl_tests_log import ParsedLog
from gpucomm.measure.results import SCHEMA_VERSION, format_footer, format_header, format_row
from gpucomm.model.collectives import COLLECTIVES, busbw_factor
from gpucomm.model.dtypes import ELEMENT_TYPES

__all__ = ["DTYPE_NAMES", "KEPT_AS_PRINTED", "record_dtype", "log_to_results", "format_log_table"]

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


def log_to_results(log: ParsedLog, *, in_place: bool = True, input_name: str | None = None) -> tuple[dict, list[dict]]:
    """The metadata record and result records (``gpucomm bench``'s schema) of a parsed log.

    Parameters
    ----------
    log : ParsedLog
        From :func:`gpucomm.measure.nccl_tests_log.parse_nccl_tests`.
    in_place : bool
        Use the in-place column (default, what ``gpucomm bench`` measures) or the out-of-place
        one. When the chosen column has no time at any size, the other one is used (noted in
        the metadata's ``placement_note``).
    input_name : str or None
        Where the text came from, recorded in the metadata.

    Returns
    -------
    (dict, list of dict)
        The ``"record": "meta"`` object and one ``"record": "result"`` per size, in size
        order. ``collective`` and ``num_ranks`` are None when the log does not say (then
        ``busbw_factor`` is None too).

    Examples
    --------
    >>> from gpucomm.measure.nccl_tests_log import read_bundled_log
    >>> meta, rows = log_to_results(read_bundled_log("C04"))
    >>> meta["num_ranks"], meta["collective"], rows[-1]["msg_bytes"], rows[-1]["busbw_bytes_per_s"] / 1e9
    (4, 'all_reduce', 8589934592, 234.74)
    """
    m = log.metadata
    placement_note = None
    chosen = log.in_place() if in_place else log.out_of_place()
    if not any(r.time_us for r in chosen):
        other = log.out_of_place() if in_place else log.in_place()
        if any(r.time_us for r in other):
            placement_note = (f"no {'in-place' if in_place else 'out-of-place'} times in the log: the "
                              f"{'out-of-place' if in_place else 'in-place'} column is used")
            chosen, in_place = other, not in_place
    chosen = [r for r in chosen if r.time_us is not None and r.time_us > 0]
    collective, n = m.get("collective"), m.get("num_ranks")
    factor = busbw_factor(collective, n) if collective in COLLECTIVES and n else None
    dtypes = sorted({record_dtype(r.type) for r in chosen})
    ops = sorted({r.redop for r in chosen if r.redop})
    records = [{
        "record": "result",
        "collective": collective,
        "msg_bytes": r.size_bytes,
        "count": r.count,
        "dtype": record_dtype(r.type),
        "op": r.redop,
        "num_ranks": n,
        "iters": m.get("iters"),
        "blocks": 1,
        "warmup_iters": m.get("warmup_iters"),
        "time_s": r.time_us * 1e-6,
        "algbw_bytes_per_s": r.algbw_gbps * 1e9,
        "busbw_bytes_per_s": r.busbw_gbps * 1e9,
        "num_wrong": r.wrong,
        "in_place": in_place,
        "line": r.line,
    } for r in chosen]
    devices = m.get("devices") or []
    sizes = [r.size_bytes for r in chosen]
    meta = {
        "record": "meta",
        "schema": SCHEMA_VERSION,
        "tool": "gpucomm.parse",
        "source_tool": "nccl-tests",
        "gpucomm_version": gpucomm.__version__,
        "date": None,  # nccl-tests prints no date
        "parsed_at": _dt.datetime.now(_dt.timezone.utc).astimezone().isoformat(timespec="seconds"),
        "input": input_name,
        "source": m.get("source"),
        "host": devices[0]["host"] if devices else None,
        "hosts": sorted({d["host"] for d in devices}),
        "rank_hosts": [d["host"] for d in devices],
        "devices": [f"{d.get('name') or 'GPU'} (device {d.get('device')}, bus {d.get('bus_id')})" for d in devices],
        "num_ranks": n,
        "num_ranks_source": m.get("num_ranks_source"),
        "backend": "nccl",
        "backend_note": None,
        "launcher": None,
        "collective": collective,
        "collective_source": m.get("collective_source"),
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
        "placement": "in-place" if in_place else "out-of-place",
        "placement_note": placement_note,
        "timing": "as printed by nccl-tests (average over ranks by default, -a 1)",
        "nccl_version": m.get("nccl_version"),
        "nccl_tests_version": m.get("version"),
        "command": m.get("command"),
        "layout": m.get("layout"),
        "avg_busbw_bytes_per_s": m["avg_busbw_gbps"] * 1e9 if m.get("avg_busbw_gbps") is not None else None,
        "warnings": [{"code": w.code, "message": w.message} for w in log.warnings],
        "env": {},
        "argv": [],
    }
    return meta, records


def format_log_table(meta: dict, records: list[dict], input_name: str) -> str:
    """The text ``gpucomm parse`` prints: a header, ``gpucomm bench``'s columns, the footer, the warnings.

    Parameters
    ----------
    meta, records
        From :func:`log_to_results`.
    input_name : str
        Named in the first line.
    """
    m = meta
    n = m["num_ranks"] if m["num_ranks"] is not None else "?"
    how = f" (from {m['num_ranks_source']})" if m.get("num_ranks_source") else ""
    version = f"nccl-tests {m['nccl_tests_version']}" if m.get("nccl_tests_version") else "nccl-tests"
    nccl = f", NCCL {m['nccl_version']}" if m.get("nccl_version") else ""
    lines = [f"# parsed {input_name}: {version}{nccl}, {m['collective'] or 'collective ?'}, {n} ranks{how}, "
             f"{m['dtype'] or '?'} {m['op'] or ''}, {m['placement']} column".rstrip()]
    if m.get("source"):
        lines.append(f"# source: {m['source']}")
    if m.get("command"):
        lines.append(f"# command: {m['command']}")
    for rank, (host, device) in enumerate(zip(m.get("rank_hosts", []), m.get("devices", []))):
        lines.append(f"#  rank {rank:3d} on {host}: {device}")
    factor = m["busbw_factor"]
    lines.append("# time: as printed (nccl-tests averages over ranks by default); GB/s = 1e9 B/s; busbw as printed"
                 + (f" (= algbw * {factor:g})" if factor is not None else ""))
    # the column titles of gpucomm bench's table: the last two lines of its header
    lines += format_header({}).splitlines()[-2:]
    rows = [dict(r, dtype=r["dtype"] or "?", op=r["op"] or "-") for r in records]
    lines += [format_row(r) for r in rows]
    lines.append(format_footer(rows))
    if m.get("placement_note"):
        lines.append(f"# note: {m['placement_note']}")
    for w in m["warnings"]:
        lines.append(f"# warning [{w['code']}]: {w['message']}")
    if m["collective"] is None or m["num_ranks"] is None:
        lines.append("# warning [unknown_shape]: the log does not say which collective or how many ranks (no command "
                     "line, no device list); pass --collective and --ranks to record them")
    return "\n".join(lines)
