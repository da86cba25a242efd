"""Published sweeps against the model, one at a time (gpucomm.viz.figures.measured.logs_vs_model_figure)."""
from __future__ import annotations

import math

import pytest

from gpucomm import GpucommError

plotly = pytest.importorskip("plotly")

from gpucomm.measure.logs.nccl_tests import read_bundled_log  # noqa: E402
from gpucomm.model.cost import collective_cost  # noqa: E402
from gpucomm.model.fabric import make_fabric  # noqa: E402
from gpucomm.model.measurements import mleng_h200_sweep  # noqa: E402
from gpucomm.viz.figures.measured import LogEntry, logs_vs_model_figure  # noqa: E402


def test_logs_vs_model_figure():
    c04, c08 = read_bundled_log("C04"), read_bundled_log("C08")
    entries = (LogEntry.from_log("C04: DGX A100", c04, "nvlink3", line_rate_bytes_per_s=300e9),
               LogEntry.from_log("C08: 2 nodes", c08, make_fabric("nvlink4", num_nodes=2, network="eth_200g")),
               LogEntry("C13: H200", mleng_h200_sweep(), [], "nvlink4", line_rate_bytes_per_s=450e9))
    fig = logs_vs_model_figure(entries, initial=1)
    # C04: out, in, model, line; C08: out, in, model; C13: out, model, line
    assert len(fig.data) == 10
    assert [t.visible for t in fig.data] == [False] * 4 + [True] * 3 + [False] * 3
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["C04", "C08", "C13"]
    assert buttons[2].args[0]["visible"] == [False] * 7 + [True] * 3
    assert list(fig.data[0].y) == [r.busbw_gbps for r in c04.out_of_place()]
    model = fig.data[2]
    s = model.x[-1]
    assert model.y[-1] == pytest.approx(collective_cost("all_reduce", s, num_ranks=4, fabric="nvlink3").busbw_bytes_per_s / 1e9,
                                        rel=1e-3)
    assert max(model.x) == max(r.size_bytes for r in c04.records) and min(model.x) == min(r.size_bytes for r in c04.records)
    with pytest.raises(GpucommError, match="no measured sweeps"):
        logs_vs_model_figure(())
    with pytest.raises(GpucommError, match="initial entry"):
        logs_vs_model_figure(entries, initial=3)
    with pytest.raises(GpucommError, match="no records"):
        logs_vs_model_figure((LogEntry("empty", []),))
    assert math.isfinite(len(fig.to_json()))
