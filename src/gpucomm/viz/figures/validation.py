"""Figure of the model's validation: predicted vs measured, per group of cases."""

from __future__ import annotations

import plotly.graph_objects as go

from gpucomm.model.validation import TARGETS, Result

_GROUP_LABELS = {
    "nvlink_large": "large messages, NVLink/NVSwitch (busbw)",
    "pcie_large": "large messages, PCIe (busbw or time)",
    "network_large": "large messages across nodes, all_gather (busbw)",
    "small_latency": "small messages (time)",
    "sweep": "full sweeps, A100x8 and H200x8 (time)",
}


def validation_figure(results: list[Result]) -> go.Figure:
    """Predicted / measured ratio for every case, one trace per group, with buttons to show one group.

    Parameters
    ----------
    results : list of Result
        From :func:`gpucomm.model.validation.validate`.

    Returns
    -------
    plotly.graph_objects.Figure
        x: the cases in ``results`` order; y: predicted / measured (log axis; 1 = exact). The
        shaded band is the tightest target of :data:`gpucomm.model.validation.TARGETS`, dotted lines the
        others. Open markers are in-sample cases (a parameter was fitted on them).
    """
    fig = go.Figure()
    groups = [g for g in _GROUP_LABELS if any(r.group == g for r in results)]
    for group in groups:
        # out-of-sample points first, so the legend shows a filled marker; the x order is fixed below
        rs = sorted((r for r in results if r.group == group), key=lambda r: r.in_sample)
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
    sweep = [r.case_id for r in results if r.label.endswith(" sweep")]
    if sweep:
        fig.add_annotation(x=sweep[len(sweep) // 2], y=0, yref="paper", yanchor="top", yshift=-6, showarrow=False,
                           text="sizes of the two sweeps", font=dict(size=10, color="gray"))
    buttons = [dict(label="all", method="update", args=[{"visible": [True] * len(groups)}])]
    for i, group in enumerate(groups):
        buttons.append(dict(label=group.replace("_", " "), method="update",
                            args=[{"visible": [j == i for j in range(len(groups))]}]))
    targets = "; ".join(f"{g.split('_')[0]} {_target_text(g)}" for _, g in bands)
    fig.update_layout(
        title=dict(text=f"model / measurement for every published case (1 = exact)<br><sup>targets: {targets} "
                        f"(shaded: {tight_group.split('_')[0]}; dotted: the others)</sup>"),
        yaxis=dict(type="log", title="predicted / measured", tickvals=[0.25, 0.5, 0.7, 1, 1.4, 2, 4, 8],
                   ticktext=["0.25", "0.5", "0.7", "1", "1.4", "2", "4", "8"]),
        # every single case is labelled; the sweeps' many sizes are not (hover shows them)
        xaxis=dict(tickangle=-90, tickfont=dict(size=9), categoryorder="array",
                   categoryarray=[r.case_id for r in results],
                   tickvals=[r.case_id for r in results if not r.label.endswith(" sweep")]),
        template="plotly_white", height=620, margin=dict(t=120, b=150), legend=dict(orientation="h", y=-0.17),
        updatemenus=[dict(type="buttons", direction="right", buttons=buttons, x=0, y=1.13, xanchor="left")],
    )
    return fig


def _target_text(group: str) -> str:
    kind, value = TARGETS[group]
    return f"within {100 * value:.0f} %" if kind == "error" else f"within {value:g}x"
