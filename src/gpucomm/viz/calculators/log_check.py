"""A reader's own log, read in the book's page: the package's parsers and diagnosis, and the model beside the run.

The book's "check your log" page (``book/check_your_log.md``) takes what a reader pastes or drops: the output of
an nccl-tests binary (``all_reduce_perf`` ...), an ``NCCL_DEBUG=INFO`` log, or both mixed in one file. In the
browser, :func:`check_log_json` runs in Pyodide (in the page's worker, ``book/_ext/live_static/``), so nothing
the reader pastes leaves the page. It calls what the CLI calls, so the page shows what the CLI prints:

* nccl-tests rows: :func:`~gpucomm.measure.logs.nccl_tests_results.read_nccl_tests_output` and
  :func:`~gpucomm.measure.logs.nccl_tests_results.log_to_results` (``gpucomm parse --json``: the metadata record
  with its warnings, one result record per size), then the alpha-beta fit of ``gpucomm fit``
  (:func:`~gpucomm.measure.logs.nccl_tests_results.primary_records`, :func:`gpucomm.model.fit.split_wrong`,
  :func:`gpucomm.model.fit.fit_regions`);
* NCCL lines: :func:`~gpucomm.measure.logs.nccl_info.parse_nccl_info_log` (``gpucomm diagnose --json``: what NCCL
  set up and the findings, most serious first).

The figure is busbw against message size: the run's rows, the fit, and the cost model
(:func:`gpucomm.model.cost.collective_cost`: the fastest pair NCCL enables, priced by NCCL's estimate plus the fitted
terms, which can differ from NCCL's own pick near its crossovers) for a
catalog system: the one the log's device names point to (:func:`guess_system`), or the one the reader picks.
Like the live calculators, everything here is standard library only (the page's Pyodide has no plotly): the
figure is a plain dict that ``Plotly.react`` draws, and :func:`check_log_figure` wraps it for a notebook.
"""

from __future__ import annotations

import json
import re
from typing import Any

from gpucomm import GpucommError
from gpucomm.measure.logs.nccl_info import parse_nccl_info_log
from gpucomm.measure.logs.nccl_tests_results import log_to_results, primary_records, read_nccl_tests_output
from gpucomm.model.fit import fit_regions, split_wrong
from gpucomm.model.units import format_size

__all__ = ["DEVICE_SYSTEMS", "guess_system", "system_options", "check_log", "check_log_json", "systems_json",
           "check_log_figure", "LogCheckPanel", "panel"]

DEVICE_SYSTEMS: tuple[tuple[str, str], ...] = (
    (r"GB200", "gb200_nvl72"),
    (r"B200", "dgx_b200"),
    (r"H200", "dgx_h200"),
    (r"H800", "hgx_h800"),
    (r"H20\b", "hgx_h20"),
    (r"H100.*PCIE", "pcie_8x_h100_bridged"),
    (r"H100", "dgx_h100"),
    (r"A100.*SXM|A100-SXM", "dgx_a100"),
    (r"\bA40\b", "pcie_8x_a40_bridged"),
    (r"RTX 4090", "pcie_8x_rtx4090"),
    (r"RTX 5090", "pcie_8x_rtx5090"),
)
"""How a device name that nccl-tests or NCCL prints (``NVIDIA H100 80GB HBM3``, ``A100-SXM4-40GB``) points to a
catalog system, first match wins (upper case). A guess, shown as one with the name it came from: a name says the
GPU, not the box around it (an H100 SXM is in a DGX or HGX H100; a PCIe card may sit in any server), so the
reader can pick another system. A GPU without a line here (an A100 PCIe, a V100) gets no guess."""

DEFAULT_SYSTEM = "dgx_h100"
"""The system drawn when the log names no GPU and the reader picked none (the collective calculator's default)."""


def guess_system(devices: list[str]) -> tuple[str | None, str | None]:
    """The catalog system a log's device names point to, by :data:`DEVICE_SYSTEMS`.

    Parameters
    ----------
    devices : list of str
        Device names as the log prints them, in any case.

    Returns
    -------
    (str or None, str or None)
        The system key and the device name it was read from; ``(None, None)`` when no name matches.

    Examples
    --------
    >>> guess_system(["NVIDIA H100 80GB HBM3 (device 0, bus 0000:19:00)"])
    ('dgx_h100', 'NVIDIA H100 80GB HBM3 (device 0, bus 0000:19:00)')
    >>> guess_system(["A100-SXM4-40GB"])[0], guess_system(["Tesla T4"])
    ('dgx_a100', (None, None))
    """
    for name in devices:
        for pattern, key in DEVICE_SYSTEMS:
            if re.search(pattern, str(name).upper()):
                return key, name
    return None, None


def system_options() -> list[list[str]]:
    """The systems the page offers: ``[[label, key], ...]``, the collective calculator's catalog systems.

    Examples
    --------
    >>> ["DGX H100 / HGX H100", "dgx_h100"] in system_options()
    True
    """
    from gpucomm.viz.calculators.inputs import system_choices

    return [[label, key] for label, key in system_choices() if key != "custom"]


def systems_json() -> str:
    """:func:`system_options` as JSON, for the page's list."""
    return json.dumps(system_options())


def _fit(meta: dict, records: list[dict]) -> dict:
    """The alpha-beta fit ``gpucomm fit`` makes of a parsed run: ``{"ok", "single", "regions", "split_reason",
    "left_out"}``, or ``{"ok": False, "message"}`` when the run cannot be fitted (no collective or rank count,
    fewer than two sizes, every size wrong)."""
    rows = primary_records(meta, records)
    if not meta.get("collective") or not meta.get("num_ranks"):
        return {"ok": False, "message": "the log does not say which collective or how many ranks: no fit "
                                        "(gpucomm parse --collective/--ranks, then gpucomm fit)"}
    rows, wrong = split_wrong(rows)
    try:
        report = fit_regions(rows)
    except GpucommError as exc:
        return {"ok": False, "message": str(exc)}
    single = report.single
    return {"ok": True, "single": {"alpha_s": single.alpha_s, "busbw_bytes_per_s": single.busbw_bytes_per_s,
                                   "rms_rel_error": single.rms_rel_error, "num_points": single.num_points},
            "regions": [{"min_bytes": r.min_bytes, "max_bytes": r.max_bytes, "alpha_s": r.fit.alpha_s,
                         "busbw_bytes_per_s": r.fit.busbw_bytes_per_s, "rms_rel_error": r.fit.rms_rel_error,
                         "text": str(r)} for r in report.regions],
            "split_reason": report.split_reason, "left_out": [r["msg_bytes"] for r in wrong],
            "busbw_at": [[r["msg_bytes"], report.busbw_at(r["msg_bytes"])] for r in rows]}


def _model(meta: dict, records: list[dict], system: str) -> dict:
    """The cost model for ``system`` at the run's sizes and the powers of two between them, its GPUs spread over
    the log's hosts: ``{"ok", "label", "sizes", "busbw_bytes_per_s", "algorithm", "protocol"}`` (the last two per
    size) or ``{"ok": False, "message"}`` (the model's refusal, e.g. more ranks than the system holds)."""
    from gpucomm.model.cost import collective_cost
    from gpucomm.viz.calculators.collective import CostInputs

    collective, n = meta.get("collective"), meta.get("num_ranks")
    if not collective or not n or not records:
        return {"ok": False, "message": "the log does not say which collective or how many ranks: no model curve"}
    hosts = max(len(meta.get("hosts") or []), 1)
    measured = [r["msg_bytes"] for r in records]
    sizes = set(measured) | {2 ** k for k in range(64) if min(measured) <= 2 ** k <= max(measured)}
    try:
        inputs = CostInputs(collective=collective, num_ranks=n, num_nodes=hosts if n % hosts == 0 else 1, system=system)
        fabric = inputs.fabric()
        costs = [collective_cost(collective, s, num_ranks=n, fabric=fabric) for s in sorted(sizes)]
    except GpucommError as exc:
        return {"ok": False, "message": f"the model of {system}: {exc}"}
    return {"ok": True, "label": inputs.label, "sizes": sorted(sizes),
            "busbw_bytes_per_s": [c.busbw_bytes_per_s for c in costs],
            "algorithm": [c.algorithm for c in costs], "protocol": [c.protocol for c in costs]}


def _figure(runs: list[dict]) -> dict:
    """busbw against size: per run its rows (in-place, out-of-place), its fit and the model, as a plotly dict."""
    data = []
    for k, run in enumerate(runs):
        meta, records = run["meta"], run["records"]
        tag = f"run {meta['run']}: " if len(runs) > 1 else ""
        for placement, symbol in (("in_place", "circle"), ("out_of_place", "x")):
            points = [(r["msg_bytes"], r[placement]["busbw_bytes_per_s"] / 1e9) for r in records if r.get(placement)]
            if points:
                data.append({"type": "scatter", "mode": "lines+markers", "name": f"{tag}measured, {placement.replace('_', '-')}",
                             "x": [p[0] for p in points], "y": [p[1] for p in points],
                             "marker": {"symbol": symbol, "size": 7}, "line": {"width": 1},
                             "hovertemplate": "%{x:.3s}B: %{y:.4g} GB/s<extra>%{fullData.name}</extra>"})
        if run["fit"]["ok"]:
            pts = run["fit"]["busbw_at"]
            data.append({"type": "scatter", "mode": "lines", "name": f"{tag}alpha-beta fit (gpucomm fit)",
                         "x": [p[0] for p in pts], "y": [p[1] / 1e9 for p in pts], "line": {"dash": "dot", "width": 1.5},
                         "hovertemplate": "fit %{y:.4g} GB/s<extra></extra>"})
        model = run["model"]
        if model["ok"] and k == 0:
            data.append({"type": "scatter", "mode": "lines", "name": f"model: {model['label']}", "x": model["sizes"],
                         "y": [v / 1e9 for v in model["busbw_bytes_per_s"]], "line": {"width": 3, "color": "#444"},
                         "hovertemplate": "model %{y:.4g} GB/s<extra></extra>"})
    first = runs[0]["meta"]
    what = f"{first.get('collective') or 'collective not stated'}, {first.get('num_ranks') or '?'} ranks"
    sizes = [r["msg_bytes"] for run in runs for r in run["records"]]
    ticks = [2 ** k for k in range(0, 50, 4) if min(sizes) / 2 <= 2 ** k <= max(sizes) * 2] if sizes else []
    return {"data": data, "layout": {
        "title": {"text": f"Your run: {what} (busbw per size) against the model"},
        "xaxis": {"type": "log", "title": {"text": "message size"}, "tickvals": ticks,
                  "ticktext": [format_size(t).replace(" ", "") for t in ticks]},
        "yaxis": {"title": {"text": "busbw (GB/s, per direction)"}, "rangemode": "tozero"},
        "legend": {"orientation": "h", "y": -0.25}, "margin": {"t": 60, "r": 20}, "height": 460,
        "template": "plotly_white"}}


def check_log(text: str, *, system: str | None = None, input_name: str = "pasted text") -> dict:
    """Everything the page shows for a pasted log: the CLI's records, warnings, fit and findings, and the figure.

    Parameters
    ----------
    text : str
        nccl-tests output (text or ``-J`` JSON), an ``NCCL_DEBUG=INFO`` log, or both in one text.
    system : str, optional
        Catalog system for the model curve (a key of :func:`system_options`); default: :func:`guess_system` of
        the log's device names, else :data:`DEFAULT_SYSTEM`.
    input_name : str
        Where the text came from, recorded in the metadata as ``gpucomm parse`` records the file name.

    Returns
    -------
    dict
        ``{"ok": True, "system": key, "system_source": "reader" | "log" | "default", "system_device": name or None,
        "nccl_tests": {"runs": [{"meta", "records", "fit", "model"}]} or None (with ``nccl_tests_message``),
        "nccl_info": the ``gpucomm diagnose --json`` object (without ``input``) or None (with
        ``nccl_info_message``), "figure": a plotly dict or None}``, or ``{"ok": False, "message"}`` when the text
        holds neither nccl-tests rows nor NCCL lines. Never raises for a bad log.

    Examples
    --------
    >>> from gpucomm.measure.logs.nccl_tests import bundled_log_text
    >>> out = check_log(bundled_log_text("C04"), system="dgx_a100")
    >>> meta = out["nccl_tests"]["runs"][0]["meta"]
    >>> meta["collective"], meta["num_ranks"], [w["code"] for w in meta["warnings"]], out["nccl_info"]
    ('all_reduce', 4, ['in_place_outlier', 'busbw_dip'], None)
    >>> check_log("hello")["message"][:38]
    'no nccl-tests result row and no NCCL l'
    """
    if system is not None and system not in {key for _, key in system_options()}:
        return {"ok": False, "message": f"system {system!r} is not valid: expected one of "
                                        f"{', '.join(key for _, key in system_options())}"}
    out: dict[str, Any] = {"ok": True, "nccl_tests": None, "nccl_info": None, "figure": None}
    try:
        runs = read_nccl_tests_output(text)
    except GpucommError as exc:
        runs = ()
        out["nccl_tests_message"] = str(exc)
    try:
        info = parse_nccl_info_log(text)
        out["nccl_info"] = info.as_dict()
    except GpucommError as exc:
        info = None
        out["nccl_info_message"] = str(exc)
    if not runs and info is None:
        return {"ok": False, "message": "no nccl-tests result row and no NCCL line in this text: expected the output "
                                        "of an nccl-tests binary (all_reduce_perf ...) or an NCCL_DEBUG=INFO log"}
    parsed = [log_to_results(log, in_place=True, input_name=input_name) for log in runs]
    devices = [d for meta, _ in parsed for d in meta.get("devices") or []] + list(info.gpus if info else [])
    guessed, device = guess_system(devices)
    out["system"] = system or guessed or DEFAULT_SYSTEM
    out["system_source"] = "reader" if system else ("log" if guessed else "default")
    out["system_device"] = device if not system else None
    if parsed:
        out["nccl_tests"] = {"runs": [{"meta": meta, "records": records, "fit": _fit(meta, records),
                                       "model": _model(meta, records, out["system"])} for meta, records in parsed]}
        out["figure"] = _figure(out["nccl_tests"]["runs"])
    return out


def check_log_json(text: str, system: str = "") -> str:
    """:func:`check_log` with JSON out (NaN and infinities as null), for the page's worker; ``system`` "" = guess."""
    from gpucomm.viz.calculators.live import finite

    return json.dumps(finite(check_log(text, system=system or None)), separators=(",", ":"), allow_nan=False)


def check_log_figure(text: str, system: str | None = None):
    """The page's figure for ``text`` as a ``plotly.graph_objects.Figure`` (build time, or a notebook).

    Raises
    ------
    GpucommError
        When the text holds no nccl-tests rows to draw.
    """
    import plotly.graph_objects as go

    out = check_log(text, system=system)
    if not out["ok"] or out["figure"] is None:
        raise GpucommError(out.get("message") or out.get("nccl_tests_message") or "no nccl-tests rows to draw")
    return go.Figure(out["figure"])


class LogCheckPanel:
    """The page's reader: a text box, a file drop, a system list, and the figure of an example log precomputed at
    build time (the first paint, and what a reader without JavaScript sees), displayed as HTML by a notebook cell.
    ``book/_ext/live_static/gpucomm_log_check.js`` finds it by ``data-gpucomm-logcheck`` and wires it to the worker.
    """

    def __init__(self, example: str, example_name: str, system: str | None = None):
        self.example, self.example_name, self.system = example, example_name, system

    def _repr_html_(self) -> str:
        import html

        import plotly.io as pio

        from gpucomm.viz.figures.render import BOOK_RENDERER, use_book_renderer

        use_book_renderer()
        fig = check_log_figure(self.example, self.system)
        figure = pio.renderers[BOOK_RENDERER].to_mimebundle(fig.to_dict())["text/html"]
        options = json.dumps(system_options(), separators=(",", ":")).replace("</", "<\\/")
        return (f'<div class="gpucomm-logcheck" data-gpucomm-logcheck="1" '
                f'data-example-name="{html.escape(self.example_name)}">'
                f'<script type="application/json" class="gpucomm-logcheck-systems">{options}</script>'
                f'<textarea class="gpucomm-logcheck-example" hidden>{html.escape(self.example)}</textarea>'
                f'<div class="gpucomm-logcheck-figure">{figure}</div></div>')

    def __repr__(self) -> str:
        return f"log check panel (example {self.example_name})"


def panel(example: str, example_name: str, system: str | None = None) -> LogCheckPanel:
    """The page's log reader with ``example`` (a log's text) drawn as its first paint.

    Raises
    ------
    GpucommError
        When the example holds no nccl-tests rows (checked now, at build time, rather than on the page).
    """
    check_log_figure(example, system)
    return LogCheckPanel(example, example_name, system)
