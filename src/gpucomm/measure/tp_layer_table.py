"""The TP layer's results as a table: one row per layer and variant (blocking, chunked), printed like the sweep's.

:func:`gpucomm.measure.tp_layer.run_tp_layer` returns plain dicts; :func:`tp_layer_rows` turns them into
rows (compute, all_reduces alone, the layer, the communication the layer waited for) and
:func:`format_tp_layer_table` prints them with the results' table printer (:mod:`gpucomm.measure.results`,
:data:`TP_LAYER_TABLE`). No torch here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gpucomm.measure.results import Column, Table, format_time_us

__all__ = ["TP_LAYER_TABLE", "tp_layer_rows", "format_tp_layer_table"]


def _labelled(results: dict | Iterable[dict] | Mapping[str, dict]) -> list[tuple[str, dict]]:
    """``(label, result)`` pairs: the mapping's labels, or the layer's blocks (``"attention + mlp"``)."""
    if isinstance(results, Mapping) and "serial_layer_s" not in results:
        return list(results.items())
    items = [results] if isinstance(results, Mapping) else list(results)
    return [(" + ".join(r.get("blocks_in_layer") or ["mlp"]), r) for r in items]


def tp_layer_rows(results: dict | Iterable[dict] | Mapping[str, dict]) -> list[dict]:
    """One table row per measured variant: the blocking layer, and the chunked one with ``overlap``.

    Parameters
    ----------
    results : dict, iterable of dict, or mapping of str to dict
        Results of :func:`gpucomm.measure.tp_layer.run_tp_layer`: one, several, or by label (``{"MLP": r, ...}``, the
        label names the rows; otherwise the layer's blocks do, ``"attention + mlp"``).

    Returns
    -------
    list of dict
        ``layer``, ``variant`` (``"blocking"`` or ``"4 chunks"``), ``compute_s``, ``comm_s``,
        ``layer_s``, ``waited_s = max(0, layer_s - compute_s)`` (the communication the layer
        waited for), ``rel_error``; the chunked row also ``overlap_gain`` and
        ``hidden_comm_fraction``; every row ``check_ok`` and ``tolerance``.

    Examples
    --------
    >>> r = {"serial_compute_s": 0.040, "serial_comm_s": 0.004, "serial_layer_s": 0.046, "overlap": False,
    ...      "rel_error": 2e-7, "check_ok": True, "tolerance": 1e-4}
    >>> [(row["variant"], round(row["waited_s"], 3)) for row in tp_layer_rows(r)]
    [('blocking', 0.006)]
    """
    return _rows(_labelled(results))


def _rows(labelled: list[tuple[str, dict]]) -> list[dict]:
    rows = []
    for label, r in labelled:
        common = {"layer": label, "check_ok": r.get("check_ok"), "tolerance": r.get("tolerance")}
        rows.append({**common, "variant": "blocking", "compute_s": r["serial_compute_s"],
                     "comm_s": r["serial_comm_s"], "layer_s": r["serial_layer_s"],
                     "waited_s": max(0.0, r["serial_layer_s"] - r["serial_compute_s"]),
                     "rel_error": r.get("rel_error")})
        if r.get("overlap"):
            rows.append({**common, "variant": f"{r['chunks']} chunks", "compute_s": r["compute_s"],
                         "comm_s": r["comm_s"], "layer_s": r["layer_s"], "waited_s": r["exposed_comm_s"],
                         "rel_error": r.get("rel_error_overlap"), "overlap_gain": r["overlap_gain"],
                         "hidden_comm_fraction": r["hidden_comm_fraction"]})
    return rows


def _tp_comments(meta: dict) -> list[str]:
    m = meta.get
    cfg = m("config") or {}
    shape = f"hidden {cfg.get('hidden', '?')}, ffn {cfg.get('ffn', '?')}, tokens {cfg.get('tokens', '?')}"
    lines = [f"# gpucomm tp_layer: {m('num_ranks', '?')} ranks, backend {m('backend', '?')}, {m('dtype', '?')}, "
             f"{shape}; iters {m('iters', '?')} x {m('blocks', '?')} blocks (median block), "
             f"warm-up {m('warmup_iters', '?')}"]
    if m("backend_note"):
        lines.append(f"# {m('backend_note')}")
    hosts = m("rank_hosts") or [None] * len(m("devices") or [])
    for rank, (host, device) in enumerate(zip(hosts, m("devices") or [])):
        lines.append(f"#  rank {rank:3d}{f' on {host}' if host else ''}: {device}")
    lines.append("# time: one layer forward, the maximum over ranks; all_reduce: the layer's all_reduces alone; "
                 "waited = layer - compute")
    return lines


def _tp_summary(rows: list[dict]) -> list[str]:
    lines = [f"# {row['layer']}: overlap gain {row['overlap_gain']:+.0%}, hidden: "
             f"{row['hidden_comm_fraction']:.0%} of the chunked all_reduces"
             for row in rows if row.get("overlap_gain") is not None]
    checked = [row for row in rows if row.get("check_ok") is not None]
    if not checked:
        status = "N/A (check off)"
    elif all(row["check_ok"] for row in checked):
        status = f"OK (relative error <= {checked[0]['tolerance']:g})"
    else:
        status = "FAILED"
    lines.append(f"# Check              : {status}")
    return lines


def _us_cell(key: str):
    return lambda row: format_time_us(row[key])


#: The TP layer's table: per layer and variant, compute, all_reduces alone, the layer, the wait.
TP_LAYER_TABLE = Table(
    columns=(
        Column("layer", "", 17, lambda row: row["layer"]),
        Column("variant", "", 11, lambda row: row["variant"]),
        Column("compute", "(us)", 11, _us_cell("compute_s")),
        Column("all_reduce", "(us)", 11, _us_cell("comm_s")),
        Column("layer", "(us)", 11, _us_cell("layer_s")),
        Column("waited", "(us)", 11, _us_cell("waited_s")),
        Column("error", "(rel)", 9, lambda row: "N/A" if row["rel_error"] is None else f"{row['rel_error']:.1e}"),
    ),
    comments=_tp_comments,
    summary=_tp_summary,
)


def format_tp_layer_table(results: dict | Iterable[dict] | Mapping[str, dict], meta: dict | None = None) -> str:
    """The TP layer's results as a table (:data:`TP_LAYER_TABLE`), one row per layer and variant.

    Parameters
    ----------
    results : dict, iterable of dict, or mapping of str to dict
        Results of :func:`gpucomm.measure.tp_layer.run_tp_layer` (see :func:`tp_layer_rows`).
    meta : dict or None
        The metadata record for the header (from the results file); None: the first result,
        which carries the same fields (ranks, backend, dtype, devices, config).
    """
    labelled = _labelled(results)
    if meta is None:
        meta = labelled[0][1] if labelled else {}
    return TP_LAYER_TABLE.format(_rows(labelled), meta)
