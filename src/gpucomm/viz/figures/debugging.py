"""Figure of what an ``NCCL_DEBUG=INFO`` log says: the transport of every connection, one log at a time.

:func:`connection_transports_figure` (``book/debugging.md``): a bar per transport label (``P2P/IPC``,
``SHM``, ``NET/IB/GDRDMA``, ``NET/Socket``...) with the number of connection lines that use it, a dropdown over
logs. It draws counts the caller read with :func:`gpucomm.measure.logs.nccl_info.parse_nccl_info_log`
(``NcclInfoLog.transports``); it parses nothing itself.
"""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go

from gpucomm import GpucommError
from gpucomm.viz.figures._layout import NVLINK_COLOR, PCIE_COLOR, check_initial, menu, top_title

__all__ = ["connection_transports_figure", "transport_color"]

_NETWORK_COLOR, _GDR_COLOR, _SOCKET_COLOR = "#9467bd", "#1f77b4", "#ff7f0e"


def transport_color(label: str) -> str:
    """Colour of a transport label: GPU-to-GPU (P2P) green, host memory (SHM) red, network with GPUDirect RDMA
    blue, network through host memory purple, TCP sockets orange."""
    if label.startswith("P2P"):
        return NVLINK_COLOR
    if label.startswith("SHM"):
        return PCIE_COLOR
    if "Socket" in label:
        return _SOCKET_COLOR
    return _GDR_COLOR if "GDRDMA" in label else _NETWORK_COLOR


def connection_transports_figure(logs: Mapping[str, Mapping[str, int]], *, notes: Mapping[str, str] | None = None,
                                 initial: str | None = None) -> go.Figure:
    """Connection lines per transport for each log, a dropdown over logs.

    Parameters
    ----------
    logs : mapping of str to (mapping of str to int)
        Log name -> {transport label -> connection lines}, as ``NcclInfoLog.transports``.
    notes : mapping of str to str, optional
        Log name -> one line shown under the title (what the log's thread reports, what was flagged).
    initial : str, optional
        The log shown first (default: the first).

    Returns
    -------
    plotly.graph_objects.Figure
        One bar trace per log (only the chosen one visible); bars coloured by :func:`transport_color`.

    Raises
    ------
    GpucommError
        No log, a log without connections, or ``initial`` not among the logs.
    """
    names = list(logs)
    if not names:
        raise GpucommError("no log to draw: expected at least one log with connection lines")
    empty = [n for n in names if not logs[n]]
    if empty:
        raise GpucommError(f"logs without connection lines: {', '.join(empty)}: expected logs whose 'Channel ... via' "
                           "lines were read")
    initial = names[0] if initial is None else initial
    check_initial("log", initial, names)
    notes = dict(notes or {})

    def title(name: str) -> str:
        sub = f"<br><sup>{notes[name]}</sup>" if name in notes else ""
        return f"{name}: connections by transport (NCCL_DEBUG=INFO){sub}"

    fig = go.Figure()
    for name in names:
        labels = list(logs[name])
        fig.add_trace(go.Bar(x=labels, y=[logs[name][k] for k in labels], name=name, visible=name == initial,
                             marker_color=[transport_color(k) for k in labels],
                             hovertemplate="%{x}: %{y} connection lines<extra></extra>"))
    buttons = [dict(label=name, method="update",
                    args=[{"visible": [other == name for other in names]}, {"title.text": title(name)}])
               for name in names]
    fig.update_layout(title=top_title(title(initial)), template="plotly_white", height=460, margin=dict(t=120, b=60),
                      xaxis=dict(title="transport (as printed after 'via')"),
                      yaxis=dict(title="connection lines in the log", rangemode="tozero"),
                      showlegend=False,
                      # the dropdown names the log the figure opens on
                      updatemenus=[dict(menu("dropdown", buttons), active=names.index(initial))])
    return fig
