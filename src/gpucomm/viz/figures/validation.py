"""Figures of the model's validation: predicted vs measured, per group of cases and per sweep over message size."""

from __future__ import annotations

import plotly.graph_objects as go

from gpucomm.model.units import format_size
from gpucomm.model.validation import SWEEP_TARGETS, SWEEPS, TARGETS, Result
from gpucomm.viz.figures._layout import LINE_COLORS, color

_GROUP_LABELS = {
    "nvlink_large": "large messages, NVLink/NVSwitch (busbw)",
    "pcie_large": "large messages, PCIe (busbw or time)",
    "network_large": "large messages across nodes, all_gather (busbw)",
    "small_latency": "small messages (time)",
}


def validation_figure(results: list[Result]) -> go.Figure:
    """Predicted / measured ratio for every single case (the sweeps: :func:`sweep_validation_figure`), one trace per
    group, with buttons to show one group.

    Parameters
    ----------
    results : list of Result
        From :func:`gpucomm.model.validation.validate`; the sweeps' points are left out.

    Returns
    -------
    plotly.graph_objects.Figure
        x: the cases in ``results`` order; y: predicted / measured (log axis; 1 = exact). The
        shaded band is the tightest target of :data:`gpucomm.model.validation.TARGETS`, dotted lines the
        others. Open markers are in-sample cases (a parameter was fitted on them).
    """
    cases = [r for r in results if not r.sweep]
    fig = go.Figure()
    groups = [g for g in _GROUP_LABELS if any(r.group == g for r in cases)]
    for group in groups:
        # out-of-sample points first, so the legend shows a filled marker; the x order is fixed below
        rs = sorted((r for r in cases if r.group == group), key=lambda r: r.in_sample)
        fig.add_trace(go.Scatter(
            x=[r.case_id for r in rs], y=[r.predicted / r.measured for r in rs], mode="markers",
            name=_GROUP_LABELS[group],
            marker=dict(size=9, symbol=["circle-open" if r.in_sample else "circle" for r in rs]),
            customdata=[[r.label, r.measured, r.predicted, r.metric, r.why] for r in rs],
            hovertemplate="%{x}: %{customdata[0]}<br>measured %{customdata[1]:.4g}, model %{customdata[2]:.4g} "
                          "(%{customdata[3]})<br>%{customdata[4]}<extra></extra>"))
    bands = sorted((1 + value if kind == "error" else value, group) for group, (kind, value) in TARGETS.items())
    (tight, tight_group), others = bands[0], bands[1:]
    fig.add_hrect(y0=1 / tight, y1=tight, line_width=0, fillcolor="green", opacity=0.1)
    for ratio, _group in others:
        for y in (ratio, 1 / ratio):
            fig.add_hline(y=y, line_dash="dot", line_color="gray", line_width=1)
    fig.add_hline(y=1, line_dash="dash", line_color="gray")
    buttons = [dict(label="all", method="update", args=[{"visible": [True] * len(groups)}])]
    for i, group in enumerate(groups):
        # the other groups stay in the legend (greyed, one click brings a group back), so a view never loses it
        buttons.append(dict(label=group.replace("_", " "), method="update",
                            args=[{"visible": [True if j == i else "legendonly" for j in range(len(groups))]}]))
    targets = "; ".join(f"{g.split('_')[0]} {_target_text(g)}" for _, g in bands)
    fig.update_layout(
        title=dict(text=f"model / measurement for every published case (1 = exact)<br><sup>targets: {targets} "
                        f"(shaded: {tight_group.split('_')[0]}; dotted: the others)</sup>"),
        yaxis=dict(type="log", title="predicted / measured", tickvals=_RATIO_TICKS, ticktext=[f"{t:g}" for t in _RATIO_TICKS]),
        xaxis=dict(tickangle=-90, tickfont=dict(size=10), categoryorder="array", categoryarray=[r.case_id for r in cases]),
        template="plotly_white", height=560, margin=dict(t=120, b=90), legend=dict(orientation="h", y=-0.2),
        updatemenus=[dict(type="buttons", direction="right", buttons=buttons, x=0, y=1.13, xanchor="left")],
    )
    return fig


def sweep_validation_figure(results: list[Result]) -> go.Figure:
    """Predicted / measured time at every size of every bundled sweep, one trace per sweep.

    Parameters
    ----------
    results : list of Result
        From :func:`gpucomm.model.validation.validate`; only the sweeps' points are drawn.

    Returns
    -------
    plotly.graph_objects.Figure
        x: message size (bytes, log axis, labelled in KiB/MiB/GiB); y: predicted / measured time (log axis; 1 =
        exact). Filled markers: out of sample; open: in-sample (a parameter was fitted on that size); crosses: a
        disturbed run, not counted. The shaded band is the model issue's 15 % (:data:`SWEEP_TARGETS`).
    """
    fig = go.Figure()
    labels = {s.sweep_id: s.label for s in SWEEPS}
    within = SWEEP_TARGETS["within"]
    for i, sweep in enumerate(dict.fromkeys(r.sweep for r in results if r.sweep)):
        rs = [r for r in results if r.sweep == sweep]
        symbol = ["x-thin-open" if not r.counted else "circle-open" if r.in_sample else "circle" for r in rs]
        fig.add_trace(go.Scatter(
            x=[r.msg_bytes for r in rs], y=[r.predicted / r.measured for r in rs], mode="lines+markers",
            # the system's first clause names it in the legend (it must fit a phone); the hover has the rest
            # more sweeps than colours: each round of the palette gets its own dash, so no two legend entries match
            name=f"{sweep}: {labels.get(sweep, sweep).split(',')[0]}",
            line=dict(width=1, color=color(i), dash=_DASHES[i // len(LINE_COLORS) % len(_DASHES)]),
            marker=dict(size=7, symbol=symbol),
            customdata=[[format_size(r.msg_bytes), r.measured, r.predicted, r.algorithm, r.why] for r in rs],
            hovertemplate=f"{sweep} ({labels.get(sweep, sweep)}) " + "%{customdata[0]}:<br>measured %{customdata[1]:.4g} us, model "
                          "%{customdata[2]:.4g} us (%{customdata[3]})<br>%{customdata[4]}<extra></extra>"))
    fig.add_hrect(y0=1 - within, y1=1 + within, line_width=0, fillcolor="green", opacity=0.1)
    fig.add_hline(y=1, line_dash="dash", line_color="gray")
    size_ticks = [2**k for k in range(0, 36, 5)]
    # one legend row per sweep under the plot: the figure grows with the sweeps instead of scrolling its legend
    legend_px = 22 * len(fig.data)
    fig.update_layout(
        title=dict(text=f"model / measured time at every size of every sweep (1 = exact)<br>shaded: within "
                        f"{100 * within:.0f} %; open: fitted on; crosses: disturbed, not counted"),
        xaxis=dict(type="log", title="message size", tickvals=size_ticks,
                   ticktext=[format_size(t).replace(" ", "") for t in size_ticks]),
        yaxis=dict(type="log", title="predicted / measured", tickvals=_RATIO_TICKS, ticktext=[f"{t:g}" for t in _RATIO_TICKS]),
        template="plotly_white", height=480 + legend_px, margin=dict(t=90, b=80 + legend_px),
        legend=dict(orientation="h", yanchor="top", y=-0.18),
    )
    return fig


_RATIO_TICKS = [0.25, 0.5, 0.7, 1, 1.4, 2, 4, 8]
_DASHES = ("solid", "dot", "dash")


def _target_text(group: str) -> str:
    kind, value = TARGETS[group]
    return f"within {100 * value:.0f} %" if kind == "error" else f"within {value:g}x"
