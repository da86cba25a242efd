"""Figure of the model's validation: predicted vs measured, per group of cases."""

from __future__ import annotations

import plotly.graph_objects as go

from gpucomm.validation import Result

_GROUP_LABELS = {
    "nvlink_large": "large messages, NVLink/NVSwitch (busbw)",
    "pcie_large": "large messages, PCIe (busbw or time)",
    "small_latency": "small messages (time)",
    "sweep": "full sweeps, A100x8 and H200x8 (time)",
}


def validation_figure(results: list[Result]) -> go.Figure:
    """Predicted / measured ratio for every case, one trace per group, with buttons to show one group.

    Parameters
    ----------
    results : list of Result
        From :func:`gpucomm.validation.validate`.

    Returns
    -------
    plotly.graph_objects.Figure
        y: predicted / measured (log axis; 1 = exact, dashed band = +-15 %); open markers are in-sample
        cases (a parameter was fitted on them).
    """
    fig = go.Figure()
    groups = [g for g in _GROUP_LABELS if any(r.group == g for r in results)]
    for group in groups:
        rs = [r for r in results if r.group == group]
        fig.add_trace(go.Scatter(
            x=[r.case_id for r in rs], y=[r.predicted / r.measured for r in rs], mode="markers",
            name=_GROUP_LABELS[group],
            marker=dict(size=10, symbol=["circle-open" if r.in_sample else "circle" for r in rs]),
            customdata=[[r.label, r.measured, r.predicted, r.metric, r.why] for r in rs],
            hovertemplate="%{customdata[0]}<br>measured %{customdata[1]:.4g}, model %{customdata[2]:.4g} "
                          "(%{customdata[3]})<br>%{customdata[4]}<extra></extra>"))
    fig.add_hrect(y0=1 / 1.15, y1=1.15, line_width=0, fillcolor="green", opacity=0.1)
    fig.add_hline(y=1, line_dash="dash", line_color="gray")
    buttons = [dict(label="all", method="update", args=[{"visible": [True] * len(groups)}])]
    for i, group in enumerate(groups):
        buttons.append(dict(label=group.replace("_", " "), method="update",
                            args=[{"visible": [j == i for j in range(len(groups))]}]))
    fig.update_layout(
        title="model / measurement for every published case (1 = exact; shaded: within 15 %)",
        yaxis=dict(type="log", title="predicted / measured"), xaxis=dict(title="case", tickangle=-60),
        template="plotly_white", height=560, margin=dict(t=110, b=170), legend=dict(orientation="h", y=-0.45),
        updatemenus=[dict(type="buttons", direction="right", buttons=buttons, x=0, y=1.13, xanchor="left")],
    )
    return fig
