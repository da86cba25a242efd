"""Figures of TP and training communication: TP speed-up, training strategies (gpucomm.viz.figures.parallelism)."""
from __future__ import annotations

import pytest

from gpucomm import GpucommError
from gpucomm.model.fabric import make_fabric

plotly = pytest.importorskip("plotly")

from gpucomm.model.planning import training_comm_estimate  # noqa: E402
from gpucomm.model.tp import tp_speedup  # noqa: E402
from gpucomm.viz.figures.parallelism import tp_speedup_figure, training_comm_figure  # noqa: E402

H100 = make_fabric("nvlink4", gpu="h100_sxm5", name="H100 SXM")
RTX4090 = make_fabric("pcie4", p2p=False, gpu="rtx_4090", name="RTX 4090")


def _small(fig):
    assert len(fig.to_json()) < 300_000


def step_y(fig, i):
    return fig.layout.sliders[0].steps[i].args[0]["y"]


def step_text(fig, i):
    return fig.layout.sliders[0].steps[i].args[0]["text"]


def test_tp_speedup_figure_matches_the_model():
    fig = tp_speedup_figure()
    nv = fig.data[1]
    assert nv.y[-1] == pytest.approx(tp_speedup("llama-3-70b", tp_size=8, fabric=H100, phase="prefill", prompt_len=4096))
    decode = fig.layout.updatemenus[0].buttons[1]
    assert decode.method == "restyle" and list(decode.args[1]) == [1, 2, 3]
    staged = make_fabric("pcie5", p2p=False, gpu="h100_sxm5")
    assert decode.args[0]["y"][2][-1] == pytest.approx(tp_speedup("llama-3-70b", tp_size=8, fabric=staged, phase="decode",
                                                                  batch=1, prompt_len=4096))
    with pytest.raises(GpucommError):
        tp_speedup_figure(scenarios=())


def test_training_figure_bars_and_overlap_buttons():
    fig = training_comm_figure("llama-3-8b", (H100, RTX4090), gpu_counts=(2, 8), initial_gpus=8)
    _small(fig)
    assert len(fig.data) == 2 * 4 + 1
    ys = step_y(fig, 1)
    e = training_comm_estimate("llama-3-8b", "tp", fabric=RTX4090, num_gpus=8, overlap=True)
    assert ys[3][1] == pytest.approx(e.comm.time_s)
    d = training_comm_estimate("llama-3-8b", "dp", fabric=H100, num_gpus=8, overlap=True)
    assert d.exposed_s == 0 and ys[-1][0] == pytest.approx(d.compute_s)
    floor = 10 ** fig.layout.yaxis.range[0]
    assert ys[4][0] == pytest.approx(floor) and step_text(fig, 1)[4][0] == "hidden"  # hidden: drawn at the floor
    # traces 4-7: the exposed part of dp, fsdp, pp, tp; a hidden one is drawn at the floor and says so, an exposed
    # one at its time (which ones are exposed is the model's answer, not this test's)
    seen_exposed = False
    for k, strategy in enumerate(("dp", "fsdp", "pp", "tp")):
        for i, fabric in enumerate((H100, RTX4090)):
            est = training_comm_estimate("llama-3-8b", strategy, fabric=fabric, num_gpus=8, overlap=True)
            if est.exposed_s > 0:
                seen_exposed = True
                assert ys[4 + k][i] == pytest.approx(est.exposed_s) and step_text(fig, 1)[4 + k][i] == ""
            else:
                assert ys[4 + k][i] == pytest.approx(floor) and step_text(fig, 1)[4 + k][i] == "hidden"
    assert seen_exposed  # the figure shows both kinds
    buttons = fig.layout.updatemenus[0].buttons
    assert [len(b.args[0]["visible"]) for b in buttons] == [9, 9]
    assert buttons[1].args[0]["visible"][:4] == [False] * 4
