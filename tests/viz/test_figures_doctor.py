"""gpucomm.viz.figures.doctor: the doctor report's figures from report.json data (no torch, no GPU)."""

from __future__ import annotations

import pytest

from gpucomm import GpucommError
from gpucomm.measure.topology_examples import example_topology_text
from gpucomm.viz.figures.doctor import doctor_figures, doctor_report_html, p2p_matrix_figure, sweep_band_figure


def sweep_rec(size: int, busbw: float) -> dict:
    return {"record": "result", "collective": "all_reduce", "num_ranks": 8, "msg_bytes": size, "time_s": size / busbw,
            "busbw_bytes_per_s": busbw}


BAND = [{"msg_bytes": s, "busbw_bytes_per_s": b, "low": 0.85 * b, "high": 1.15 * b, "time_s": s / b}
        for s, b in ((8, 1e6), (2**20, 1e11), (2**28, 4e11))]


def test_p2p_matrix_colours_and_refuses_a_ragged_matrix():
    fig = p2p_matrix_figure([[True, False, True], [True, True, True], [False, True, True]], ["A", "B", "C"])
    assert [list(row) for row in fig.data[0].z] == [[0.5, 0, 1], [1, 0.5, 1], [0, 1, 0.5]]
    assert "GPU0 (A) -> GPU1: no P2P access" in fig.data[0].customdata[0][1]
    with pytest.raises(GpucommError, match="not square"):
        p2p_matrix_figure([[True, False]])


def test_sweep_band_figure_draws_the_model_and_its_band():
    fig = sweep_band_figure({"records": [sweep_rec(b["msg_bytes"], b["busbw_bytes_per_s"]) for b in BAND], "band": BAND,
                             "model_label": "NVLink 4.0", "backend": "nccl"})
    assert [t.name for t in fig.data] == ["measured", "model: NVLink 4.0", "band high", "expected band"]
    assert fig.data[-1].fill == "tonexty" and fig.data[-1].y[-1] == pytest.approx(0.85 * 400)
    with pytest.raises(GpucommError, match="no records"):
        sweep_band_figure({"records": []})


def test_a_gpu_report_has_four_figures_and_one_page():
    report = {"host": "n1", "mode": "gpu", "status": "pathology",
              "topology": {"text": example_topology_text("dgx_h100")},
              "p2p": {"matrix": [[True] * 2] * 2, "gpus": ["H100"] * 2},
              "copy": {"records": [{"record": "copy", "kind": "h2d_pinned", "bytes": 2**20, "time_s": 2e-5,
                                    "bw_bytes_per_s": 5e10}], "expected": {"h2d_pinned": 6.3e10}},
              "sweep": {"records": [sweep_rec(b["msg_bytes"], b["busbw_bytes_per_s"]) for b in BAND], "band": BAND},
              "checks": [{"name": "p2p", "title": "P2P <access>", "status": "pathology", "measured": "0->1 missing",
                          "expected": "all", "fix": "disable ACS", "source": "https://example.org/acs"}],
              "interrupted": True, "steps_done": 3, "steps_total": 8}
    assert [h for h, _ in doctor_figures(report)] == ["Topology (nvidia-smi topo -m)", "P2P access matrix",
                                                      "Copy bandwidth", "all_reduce sweep against the model"]
    page = doctor_report_html(report)
    assert "P2P &lt;access&gt;" in page and 'href="https://example.org/acs"' in page
    assert "Interrupted after 3 of 8 steps" in page and page.count('class="plotly-graph-div"') == 4
