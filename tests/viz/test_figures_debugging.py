"""The debugging chapter's figure (gpucomm.viz.figures.debugging)."""

from __future__ import annotations

import pytest

pytest.importorskip("plotly")

from gpucomm.viz.figures.debugging import connection_transports_figure  # noqa: E402

LOGS = {"a": {"P2P/direct": 10}, "b": {"NET/IB": 4, "P2P/direct": 10}, "c": {"SHM/direct": 2}}


@pytest.mark.parametrize("initial", [None, "b", "c"])
def test_dropdown_names_the_log_shown(initial):
    """The dropdown's active item is the log the figure opens on, and its button shows that log alone."""
    fig = connection_transports_figure(LOGS, initial=initial)
    shown = [t.name for t in fig.data if t.visible]
    menu = fig.layout.updatemenus[0]
    assert shown == [initial or "a"]
    assert menu.buttons[menu.active].label == shown[0]
    assert menu.buttons[menu.active].args[0]["visible"] == [t.visible for t in fig.data]
