"""``gpucomm doctor``'s report: its figures and one self-contained, offline HTML page.

Everything here reads the plain data of ``report.json`` (:meth:`gpucomm.measure.doctor.DoctorReport.as_dict`),
so a saved report can be drawn again without torch or a GPU. The page inlines plotly.js once (in its
``<head>``) and every figure after it refers to it: opened from disk it makes no network request.

Figures reuse the book's builders where one exists: the topology heatmap
(:func:`gpucomm.viz.figures.topology.topo_matrix_figure`), copy bandwidth by kind
(:func:`gpucomm.viz.figures.bench.copy_bandwidth_figure`) and measured busbw against a model
(:func:`gpucomm.viz.figures.measured.measured_vs_model_figure`, with the model's band added here).
"""

from __future__ import annotations

import html
import json

import plotly.graph_objects as go
import plotly.io as pio

from gpucomm import GpucommError
from gpucomm.measure.topology import parse_topo_matrix
from gpucomm.viz.figures.bench import copy_bandwidth_figure
from gpucomm.viz.figures.measured import measured_vs_model_figure
from gpucomm.viz.figures.render import book_div_id
from gpucomm.viz.figures.topology import topo_matrix_figure

__all__ = ["STATUS_COLORS", "STATUS_LABELS", "p2p_matrix_figure", "sweep_band_figure", "doctor_figures",
           "doctor_report_html"]

STATUS_COLORS = {"ok": "#2ca02c", "below": "#ff7f0e", "pathology": "#d62728", "skipped": "#7f7f7f"}
"""Badge colour of each check status (green, orange, red, grey)."""

STATUS_LABELS = {"ok": "ok", "below": "below expected", "pathology": "pathology", "skipped": "skipped"}
"""How the page names each status."""

_PLOT_CONFIG = {"displaylogo": False, "responsive": True}
"""plotly.js options of every figure: no plotly logo link, and figures follow the page's width."""


def p2p_matrix_figure(matrix: list[list[bool]], gpus: list[str] | None = None) -> go.Figure:
    """Heatmap of the P2P access matrix: green where GPU *i* (row) can access GPU *j* (column), red where not.

    Parameters
    ----------
    matrix : list of list of bool
        ``matrix[i][j]``: ``torch.cuda.can_device_access_peer(i, j)`` (the diagonal is True).
    gpus : list of str, optional
        GPU names, for the hover text.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    GpucommError
        If the matrix is empty or not square.

    Examples
    --------
    >>> fig = p2p_matrix_figure([[True, False], [False, True]])
    >>> [list(row) for row in fig.data[0].text]
    [['self', 'no'], ['no', 'self']]
    """
    n = len(matrix)
    if n == 0 or any(len(row) != n for row in matrix):
        raise GpucommError(f"P2P matrix of {n} rows is not square: expected one row of {n} booleans per GPU")
    labels = [f"GPU{i}" for i in range(n)]
    names = gpus or labels
    text = [["self" if i == j else ("yes" if matrix[i][j] else "no") for j in range(n)] for i in range(n)]
    hover = [[f"{labels[i]} ({names[i]}) -> {labels[j]}: {'P2P access' if matrix[i][j] else 'no P2P access'}"
              for j in range(n)] for i in range(n)]
    z = [[0.5 if i == j else (1 if matrix[i][j] else 0) for j in range(n)] for i in range(n)]
    fig = go.Figure(go.Heatmap(z=z, x=labels, y=labels, text=text, texttemplate="%{text}", customdata=hover,
                               hovertemplate="%{customdata}<extra></extra>", zmin=0, zmax=1, showscale=False,
                               colorscale=[[0, STATUS_COLORS["pathology"]], [0.4, STATUS_COLORS["pathology"]],
                                           [0.4, "#eeeeee"], [0.6, "#eeeeee"], [0.6, STATUS_COLORS["ok"]],
                                           [1, STATUS_COLORS["ok"]]], xgap=2, ygap=2))
    fig.update_layout(title=dict(text="P2P access: row GPU can read/write column GPU", x=0, xanchor="left"),
                      template="plotly_white", height=max(300, 110 + 50 * n), margin=dict(t=80, l=60, r=20, b=30),
                      xaxis=dict(side="top"), yaxis=dict(autorange="reversed"))
    return fig


def sweep_band_figure(sweep: dict) -> go.Figure:
    """The doctor's all_reduce sweep: measured busbw, and the model with its expected band where there is one.

    Parameters
    ----------
    sweep : dict
        ``report.json``'s ``sweep``: ``records`` (result records), ``band`` (per size ``msg_bytes``,
        ``busbw_bytes_per_s``, ``low``, ``high``; empty without a model), ``model_label``,
        ``model_reason``, ``backend``.

    Returns
    -------
    plotly.graph_objects.Figure
        :func:`~gpucomm.viz.figures.measured.measured_vs_model_figure` of the records (no fit), the
        model's curve, and the band as a shaded area between its edges.

    Raises
    ------
    GpucommError
        If the sweep has no records.

    Examples
    --------
    >>> rec = {"collective": "all_reduce", "num_ranks": 2, "msg_bytes": 8, "time_s": 1e-4, "busbw_bytes_per_s": 8e4}
    >>> fig = sweep_band_figure({"records": [rec], "band": [], "model_reason": "no model for gloo on CPU"})
    >>> [t.name for t in fig.data]
    ['measured']
    """
    records = sweep.get("records") or []
    if not records:
        raise GpucommError("the sweep has no records to plot")
    band = sorted(sweep.get("band") or [], key=lambda b: b["msg_bytes"])
    label = sweep.get("model_label") or "model"
    curves = {f"model: {label}": ([b["msg_bytes"] for b in band], [b["busbw_bytes_per_s"] for b in band])} if band else None
    ranks = records[0].get("num_ranks", "?")
    backend = sweep.get("backend") or (sweep.get("meta") or {}).get("backend") or ""
    title = (f"all_reduce on {ranks} ranks ({backend}): measured busbw and the model's band" if band else
             f"all_reduce on {ranks} ranks ({backend}): {sweep.get('model_reason') or 'no model'}")
    fig = measured_vs_model_figure(records, curves, fit=None, title=title)
    if band:
        xs = [b["msg_bytes"] for b in band]
        fig.add_trace(go.Scatter(x=xs, y=[b["high"] / 1e9 for b in band], mode="lines", line=dict(width=0),
                                 showlegend=False, hoverinfo="skip", name="band high"))
        fig.add_trace(go.Scatter(x=xs, y=[b["low"] / 1e9 for b in band], mode="lines", line=dict(width=0),
                                 fill="tonexty", fillcolor="rgba(44,160,44,0.15)", name="expected band",
                                 hovertemplate="%{y:.3g} GB/s<extra>band low edge</extra>"))
    fig.update_layout(title=dict(x=0, xanchor="left", font=dict(size=14)), margin=dict(t=60, l=60, r=20, b=120))
    return fig


def doctor_figures(report: dict) -> list[tuple[str, go.Figure]]:
    """The report's figures, each with a heading: topology, P2P matrix, copy bandwidth, the sweep.

    Only those the run has data for (a CPU run has copy bandwidth and the sweep).
    """
    out = []
    topology = report.get("topology") or {}
    if topology.get("text"):
        out.append(("Topology (nvidia-smi topo -m)", topo_matrix_figure(parse_topo_matrix(topology["text"]),
                                                                        title="nvidia-smi topo -m")))
    p2p = report.get("p2p") or {}
    if p2p.get("matrix") and len(p2p["matrix"]) > 1:
        out.append(("P2P access matrix", p2p_matrix_figure(p2p["matrix"], p2p.get("gpus"))))
    copy = report.get("copy") or {}
    if copy.get("records"):
        expected = {k: v for k, v in (copy.get("expected") or {}).items() if v}
        title = "Copy bandwidth by kind" + (" (dashed: catalog)" if expected else ": no catalog value to compare")
        fig = copy_bandwidth_figure(copy["records"], expected, title=title)
        fig.update_layout(title=dict(x=0, xanchor="left", font=dict(size=14)), margin=dict(t=60, l=60, r=20))
        out.append(("Copy bandwidth", fig))
    sweep = report.get("sweep") or {}
    if sweep.get("records"):
        out.append(("all_reduce sweep against the model", sweep_band_figure(sweep)))
    return out


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;background:#fafafa}
main{max-width:1200px;margin:0 auto;padding:16px}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin:1.4em 0 .5em;border-bottom:1px solid #ddd}
.meta{color:#555;margin:.2em 0}.badge{display:inline-block;padding:2px 8px;border-radius:10px;color:#fff;
font-size:.85em;font-weight:600;white-space:nowrap}
table.checks{border-collapse:collapse;width:100%;background:#fff;font-size:.92em}
table.checks th,table.checks td{border-bottom:1px solid #e4e4e4;padding:6px 8px;text-align:left;vertical-align:top}
table.checks th{background:#f0f0f0}td.fix{color:#333}table.checks{table-layout:fixed}table.checks td{overflow-wrap:anywhere}
th.c-status{width:110px}th.c-check{width:17%}th.c-measured{width:28%}th.c-expected{width:20%}
.counts span{margin-right:10px}.figure{background:#fff;margin:10px 0;border:1px solid #e4e4e4}
pre{background:#fff;border:1px solid #e4e4e4;padding:8px;overflow-x:auto;font-size:.8em}
ul.skipped li{margin:.2em 0}.interrupted{background:#fff3cd;border:1px solid #e0c060;padding:8px}
@media (max-width:700px){table.checks,table.checks tbody{display:block}
table.checks thead{display:none}table.checks tr{display:block;border-bottom:2px solid #ddd;
padding:6px 0}table.checks td{display:block;border:none;padding:2px 8px}table.checks td::before{content:attr(data-label);
font-weight:600;color:#666;display:block;font-size:.8em}table.checks td[data-label=status]::before,
table.checks td[data-label=check]::before{content:none}table.checks td:empty{display:none}main{padding:8px}}
"""


def _badge(status: str) -> str:
    return (f'<span class="badge" style="background:{STATUS_COLORS.get(status, "#999")}">'
            f'{html.escape(STATUS_LABELS.get(status, status))}</span>')


def _source(source: str) -> str:
    if not source:
        return ""
    text = html.escape(source)
    if source.startswith("https://"):
        return f'<small>source: <a href="{text}" rel="noreferrer">{text}</a></small>'
    return f"<small>source: {text}</small>"


def _check_row(c: dict) -> str:
    fix = "<br>".join(p for p in (html.escape(c.get("fix") or ""), _source(c.get("source") or "")) if p)
    return ("<tr>"
            f'<td data-label="status">{_badge(c["status"])}</td>'
            f'<td data-label="check"><b>{html.escape(c["title"])}</b><br>'
            f'<small><code>{html.escape(c["name"])}</code></small></td>'
            f'<td data-label="measured">{html.escape(c["measured"])}</td>'
            f'<td data-label="expected">{html.escape(c.get("expected") or "")}</td>'
            f'<td data-label="fix" class="fix">{fix}</td></tr>')


def _figure_html(fig: go.Figure) -> str:
    fig_json = pio.to_json(fig, validate=False)
    return pio.to_html(fig, include_plotlyjs=False, include_mathjax=False, full_html=False, config=_PLOT_CONFIG,
                       div_id=book_div_id(fig_json), default_width="100%", validate=False)


def doctor_report_html(report: dict) -> str:
    """One self-contained HTML page for a doctor report: summary, every check, figures, raw topology.

    Parameters
    ----------
    report : dict
        ``report.json`` (:meth:`gpucomm.measure.doctor.DoctorReport.as_dict`).

    Returns
    -------
    str
        A complete HTML document. plotly.js is inlined once in ``<head>`` (about 4.8 MB); nothing is
        loaded from the network, so the page works offline and from ``file://``.

    Examples
    --------
    >>> page = doctor_report_html({"host": "n1", "mode": "cpu", "status": "ok", "checks": [
    ...     {"name": "iommu", "title": "IOMMU", "status": "ok", "measured": "off", "expected": "off"}]})
    >>> page.startswith("<!DOCTYPE html>") and "IOMMU" in page
    True
    """
    from plotly.offline import get_plotlyjs

    checks = report.get("checks") or []
    counts = report.get("counts") or {s: sum(c["status"] == s for c in checks) for s in STATUS_COLORS}
    host = html.escape(str(report.get("host", "?")))
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>gpucomm doctor: {host}</title><style>{_CSS}</style>",
        f'<script type="text/javascript">{get_plotlyjs()}</script>', "</head><body><main>",
        f"<h1>gpucomm doctor: {host} {_badge(report.get('status', 'ok'))}</h1>",
        f'<p class="meta">{html.escape(str(report.get("started", "")))} · mode: {html.escape(str(report.get("mode", "?")))}'
        f' ({"CUDA GPUs" if report.get("mode") == "gpu" else "no CUDA GPU: CPU parts only"}) · gpucomm '
        f'{html.escape(str(report.get("gpucomm_version", "")))}</p>',
        '<p class="counts">' + "".join(f"<span>{_badge(s)} {counts.get(s, 0)}</span>" for s in STATUS_COLORS) + "</p>",
    ]
    if report.get("interrupted"):
        parts.append(f'<p class="interrupted">Interrupted after {report.get("steps_done", 0)} of '
                     f'{report.get("steps_total", "?")} steps: the checks below are those that finished.</p>')
    parts += ["<h2>Checks that ran</h2>", '<table class="checks"><thead><tr><th class="c-status">status</th>'
              '<th class="c-check">check</th><th class="c-measured">measured</th><th class="c-expected">expected</th>'
              "<th>fix</th></tr></thead><tbody>",
              *(_check_row(c) for c in checks if c["status"] != "skipped"), "</tbody></table>"]
    skipped = [c for c in checks if c["status"] == "skipped"]
    if skipped:
        parts += ["<h2>Not run here</h2>", '<ul class="skipped">',
                  *(f"<li><b>{html.escape(c['title'])}</b>: {html.escape(c['measured'])}</li>" for c in skipped), "</ul>"]
    figures = doctor_figures(report)
    if figures:
        parts.append("<h2>Figures</h2>")
        for heading, fig in figures:
            parts += [f"<h3>{html.escape(heading)}</h3>", f'<div class="figure">{_figure_html(fig)}</div>']
    text = (report.get("topology") or {}).get("text")
    if text:
        parts += ["<h2>nvidia-smi topo -m</h2>", f"<pre>{html.escape(text)}</pre>"]
    inventory = report.get("inventory")
    if inventory:
        parts += ["<h2>Inventory</h2>", f"<pre>{html.escape(json.dumps(inventory, indent=2))}</pre>"]
    parts.append("</main></body></html>")
    return "\n".join(parts)
