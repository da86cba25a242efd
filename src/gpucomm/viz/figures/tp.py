"""Figures of tensor-parallel communication (model output -> plotly)."""

from __future__ import annotations

import plotly.graph_objects as go

from gpucomm import GpucommError
from gpucomm.viz.calculators.collective import Path
from gpucomm.model.tp import get_model, tp_forward_comm


def tp_comm_vs_tokens_figure(model: str, *, paths: tuple[Path, ...], tp_sizes: tuple[int, ...] = (2, 4, 8),
                             initial_tp: int = 4, token_counts: tuple[int, ...] | None = None,
                             measured: list[tuple[str, int, float]] = ()) -> go.Figure:
    """All_reduce time of one TP forward pass vs tokens, one line per path, slider over TP degree.

    Parameters
    ----------
    model : str
        Model preset key (``"llama-3-70b"``).
    paths : tuple of Path
        Links to compare.
    tp_sizes : tuple of int
        TP degrees offered by the slider (static HTML, precomputed).
    initial_tp : int
        The slider's starting position; must be in ``tp_sizes``.
    token_counts : tuple of int, optional
        x values (default 1..32768 tokens, powers of two).
    measured : list of (label, num_tokens, time_s)
        Published points to mark (shown at every slider position; they belong to ``initial_tp``).

    Returns
    -------
    plotly.graph_objects.Figure
        y: milliseconds of all_reduce per forward pass (2 per layer, no overlap).

    Raises
    ------
    GpucommError
        If ``initial_tp`` is not in ``tp_sizes``.
    """
    if initial_tp not in tp_sizes:
        raise GpucommError(f"initial TP degree {initial_tp!r} is not valid: expected one of {tp_sizes}")
    cfg = get_model(model)
    tokens = list(token_counts or [2**k for k in range(0, 16)])

    def ys(tp: int) -> list[list[float]]:
        return [[tp_forward_comm(cfg, tp_size=tp, num_tokens=t, link=p.link, p2p=p.p2p).total_time_s * 1e3 for t in tokens]
                for p in paths]

    fig = go.Figure()
    for path, y in zip(paths, ys(initial_tp)):
        fig.add_trace(go.Scatter(x=tokens, y=y, name=path.label, mode="lines+markers",
                                 hovertemplate="%{x} tokens: %{y:.3g} ms<extra>%{fullData.name}</extra>"))
    for label, num_tokens, time_s in measured:
        fig.add_trace(go.Scatter(x=[num_tokens], y=[time_s * 1e3], name=label, mode="markers",
                                 marker=dict(symbol="x", size=13, color="black"),
                                 hovertemplate="%{y:.4g} ms measured<extra>%{fullData.name}</extra>"))
    steps = [dict(method="update", label=str(tp),
                  args=[{"y": ys(tp)}, {"title.text": f"{cfg.name}, TP={tp}: all_reduce time per forward pass (model)"}],
                  )
             for tp in tp_sizes]
    for step in steps:  # restyle only the model traces; measured markers stay
        step["args"].append(list(range(len(paths))))
    fig.update_layout(
        title=f"{cfg.name}, TP={initial_tp}: all_reduce time per forward pass (model)",
        xaxis=dict(type="log", title="tokens in the forward pass (prompt length x batch)"),
        yaxis=dict(type="log", title="all_reduce time per forward (ms)"),
        template="plotly_white", height=560, margin=dict(t=70, b=170),
        legend=dict(orientation="h", y=-0.22),
        sliders=[dict(active=tp_sizes.index(initial_tp), steps=steps, currentvalue=dict(prefix="TP degree: "),
                      y=-0.45, pad=dict(t=10))],
    )
    return fig
