"""Figures of serving on a TP group: decode vs TP, NVIDIA's TP=2 table, systems compared (gpucomm.viz.figures.serving)."""
from __future__ import annotations

import json

import pytest

from gpucomm import GpucommError

plotly = pytest.importorskip("plotly")

from gpucomm.model.fabric import make_fabric, system_fabric  # noqa: E402
from gpucomm.model.measurements import NVIDIA_BLOG_TP2_THROUGHPUT  # noqa: E402
from gpucomm.model.planning import serving_estimate  # noqa: E402
from gpucomm.model.tp import tp_step  # noqa: E402
from gpucomm.viz.figures.serving import Workload, system_comparison_figure, tp2_throughput_figure, tp_decode_scaling_figure  # noqa: E402

H100 = make_fabric("nvlink4", gpu="h100_sxm5", name="H100 SXM")
RTX4090 = make_fabric("pcie4", p2p=False, gpu="rtx_4090", name="RTX 4090")

FABRICS = (H100, H100.replace(name="H100 one-shot"), RTX4090, H100.replace(name="2 GPUs only", gpus_per_node=2))
ALGORITHMS = ("auto", "one_shot", "auto", "auto")


def _small(fig):
    assert len(fig.to_json()) < 300_000


def step_y(fig, i):
    return fig.layout.sliders[0].steps[i].args[0]["y"]


def step_text(fig, i):
    return fig.layout.sliders[0].steps[i].args[0]["text"]


def test_tp_decode_figure_matches_the_model_in_every_slider_step():
    fig = tp_decode_scaling_figure("llama-3-70b", FABRICS, batches=(1, 64), initial_batch=1, algorithms=ALGORITHMS)
    _small(fig)
    assert len(fig.data) == 2 * len(FABRICS)
    step = fig.layout.sliders[0].steps[1]  # batch 64
    y, symbols = step.args[0]["y"], step.args[0]["marker.symbol"]
    s = tp_step("llama-3-70b", fabric=RTX4090, tp_size=4, phase="decode", batch=64, prompt_len=1024)
    one = tp_step("llama-3-70b", fabric=H100, tp_size=8, phase="decode", batch=64, prompt_len=1024, algorithm="one_shot")
    assert y[2][3] == pytest.approx(one.tokens_per_s_per_user) and one.all_reduce.algorithm == "one_shot"
    assert y[4][2] == pytest.approx(s.tokens_per_s_per_user) and y[5][2] == pytest.approx(s.tokens_per_s_per_gpu)
    assert symbols[4][2] == ("circle" if s.fits_memory else "circle-open") == "circle-open"
    assert y[6][2] is None  # beyond the fabric's GPUs per node
    assert list(fig.data[0].y) == step_y(fig, 0)[0]
    with pytest.raises(GpucommError, match="batch"):
        tp_decode_scaling_figure("llama-3-70b", FABRICS, batches=(1, 64), initial_batch=3)
    with pytest.raises(GpucommError, match="one per fabric"):
        tp_decode_scaling_figure("llama-3-70b", FABRICS, algorithms=("auto",))


def test_tp2_throughput_figure():
    fig = tp2_throughput_figure()
    assert len(fig.data) == 6
    assert list(fig.data[0].y) == [v[0] for v in NVIDIA_BLOG_TP2_THROUGHPUT.values()]
    assert list(fig.data[1].y) == [v[1] for v in NVIDIA_BLOG_TP2_THROUGHPUT.values()]
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["tokens/s per GPU", "NVSwitch / point-to-point"]


def test_system_comparison_dropdown():
    w = (Workload("8B", "llama-3-8b", tp_size=1), Workload("405B", "llama-3.1-405b", batch=8))
    fig = system_comparison_figure(w, ("dgx_h100", "dgx_h200", "pcie_8x_rtx4090"))
    _small(fig)
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["8B", "405B"]
    user, gpu = buttons[1].args[0]["y"]
    h200 = serving_estimate("llama-3.1-405b", system_fabric("dgx_h200"), tp_size=8, batch=8)
    assert user[1] == pytest.approx(h200.tokens_per_s_per_user) and gpu[1] == pytest.approx(h200.tokens_per_s_per_gpu)
    texts = buttons[1].args[0]["text"][0]
    assert "does not fit" in texts[0] and "does not fit" not in texts[1]  # 405B fp16: 8x80 GB no, 8x141 GB yes
    json.loads(fig.to_json())
