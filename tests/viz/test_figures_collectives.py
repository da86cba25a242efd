"""Figures and composed quantities of the NVSwitch, collectives and measuring chapters (plots.chapters_coll)."""

from __future__ import annotations

import math

import pytest

from gpucomm import GpucommError
from gpucomm.model.collectives import COLLECTIVES
from gpucomm.model.cost import collective_cost, make_fabric, pair_bw_bytes_per_s, per_gpu_bw_bytes_per_s
from gpucomm.measure.nccl_tests_log import read_bundled_log
from gpucomm.model.planning import ServingConfig
from gpucomm.viz.figures.chapters_coll import (
    SEED_TP2_BATCH_THROUGHPUT, SHOWN_ALGORITHMS, LogEntry, algorithms_figure, busbw_factors_table, logs_vs_model_figure,
    mesh_vs_switch_figure, mleng_h200_sweep, protocol_crossover_bytes, request_throughput, steps_and_wire_bytes,
    switch_board, tp2_throughput_figure, wire_bytes_per_link)
from gpucomm.model.tp import tp_forward_comm

MESH = ServingConfig("point-to-point", "h200_sxm", "nvlink4", fabric={"topology": "mesh", "mesh_size": 8})
SWITCH = ServingConfig("NVSwitch", "h200_sxm", "nvlink4")


# --- the seed's numbers (seed 001 = NVIDIA's blog) -----------------------------------------------------------

def test_seed_point_to_point_figures_are_both_directions():
    mesh = make_fabric("nvlink4", topology="mesh", mesh_size=8)
    pair = pair_bw_bytes_per_s(mesh)
    assert 2 * pair / 1e9 == pytest.approx(128, rel=0.01)  # the seed's "128 GB/s" per pair: both directions
    assert pair / 1e9 == pytest.approx(64.3, abs=0.05)
    assert per_gpu_bw_bytes_per_s(mesh, 8) == per_gpu_bw_bytes_per_s(make_fabric("nvlink4"), 8)  # "7 x 128" ~ "900"
    assert per_gpu_bw_bytes_per_s(mesh, 2) * 7 == pytest.approx(per_gpu_bw_bytes_per_s(mesh, 8))


def test_seed_20_gb_per_query_and_per_direction_times():
    pre = tp_forward_comm("llama-3-70b", tp_size=2, num_tokens=8192, link="nvlink4")
    query = pre.msg_bytes * pre.all_reduces
    assert query == 20 * 2**30  # the seed's "20 GB"
    wire = wire_bytes_per_link("all_reduce", query, num_ranks=2, algorithm="ring")
    assert wire == query  # TP=2 ring: each message crosses the pair's link once in each direction
    mesh = make_fabric("nvlink4", topology="mesh", mesh_size=8)
    assert wire / pair_bw_bytes_per_s(mesh) == pytest.approx(2 * 20e9 / 128e9, rel=0.1)  # twice the seed's 150 ms


def test_request_throughput_reproduces_nvidia_table_3_trend():
    ratios = []
    for batch, (p2p, nvs) in SEED_TP2_BATCH_THROUGHPUT.items():
        m = request_throughput("llama-3-70b", MESH, tp_size=2, batch=batch, isl=8192, osl=256)
        s = request_throughput("llama-3-70b", SWITCH, tp_size=2, batch=batch, isl=8192, osl=256)
        assert m.fits_memory and s.fits_memory
        assert m.tokens_per_s_per_gpu == pytest.approx(p2p, rel=0.2)
        assert s.tokens_per_s_per_gpu == pytest.approx(nvs, rel=0.2)
        ratios.append(s.tokens_per_s_per_gpu / m.tokens_per_s_per_gpu)
        assert ratios[-1] == pytest.approx(nvs / p2p, abs=0.12)
    assert ratios == sorted(ratios) and ratios[0] < 1.1 and ratios[-1] > 1.35


def test_request_throughput_composition_and_errors():
    r = request_throughput("llama-3-70b", SWITCH, tp_size=2, batch=4, isl=1024, osl=128)
    assert r.request_s == pytest.approx(r.prefill_s + 128 * r.decode_step_s)
    assert r.tokens_per_s_per_gpu == pytest.approx(4 * 128 / r.request_s / 2)
    assert 0 < r.prefill_comm_share < 1 and 0 < r.decode_comm_share < 1
    with pytest.raises(GpucommError, match="output length"):
        request_throughput("llama-3-70b", SWITCH, tp_size=2, batch=4, isl=1024, osl=0)


# --- steps, wire bytes, protocols ------------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm, steps, factor", [("ring", 14, 1.75), ("tree", 6, 2.0), ("rhd", 6, 1.75),
                                                       ("one_shot", 2, 7.0), ("two_shot", 4, 1.75), ("nvls", 1, 1.125)])
def test_steps_and_wire_bytes_all_reduce_8(algorithm, steps, factor):
    assert steps_and_wire_bytes("all_reduce", 1024, num_ranks=8, algorithm=algorithm) == (steps, factor * 1024)


def test_steps_and_wire_bytes_errors():
    with pytest.raises(GpucommError, match="does not implement"):
        steps_and_wire_bytes("broadcast", 8, num_ranks=4, algorithm="nvls")
    with pytest.raises(GpucommError, match="power of two"):
        steps_and_wire_bytes("all_reduce", 8, num_ranks=6, algorithm="rhd")
    with pytest.raises(GpucommError, match="unknown collective"):
        wire_bytes_per_link("allreduce", 8, num_ranks=4, algorithm="ring")


def test_protocol_crossover():
    x = protocol_crossover_bytes("all_reduce", num_ranks=8, link="nvlink4")
    assert x & (x - 1) == 0
    kw = dict(num_ranks=8, link="nvlink4", algorithm="ring")
    assert collective_cost("all_reduce", x, protocol="Simple", **kw).time_s < collective_cost("all_reduce", x, protocol="LL", **kw).time_s
    assert collective_cost("all_reduce", x // 2, protocol="Simple", **kw).time_s >= collective_cost("all_reduce", x // 2, protocol="LL", **kw).time_s


def test_busbw_factors_table():
    table = dict(busbw_factors_table(8))
    assert list(table) == list(COLLECTIVES) and table["all_reduce"] == 1.75 and table["send_recv"] == 1.0


# --- switch boards ------------------------------------------------------------------------------------------------

def test_switch_boards_port_arithmetic():
    h100, b200, nvl72, a100 = (switch_board(k) for k in ("dgx_h100", "dgx_b200", "gb200_nvl72", "dgx_a100"))
    for b in (h100, b200, nvl72, a100):
        assert b.gpu_links <= b.switch_ports  # enough ports for every GPU link: a precondition of non-blocking
        assert b.gpu_bw_bytes_per_s == pytest.approx(b.links_per_gpu * b.link_bw_bytes_per_s)
    assert b200.gpu_links == b200.switch_ports and nvl72.gpu_links == nvl72.switch_ports
    assert h100.chip_bidir_marketing_bytes_per_s * 8 / 1e12 == pytest.approx(25.6)  # seed: "25.6 Tb/s" per chip
    assert nvl72.aggregate_bidir_bytes_per_s / 1e12 == pytest.approx(129.6)  # NVIDIA's "130 TB/s"
    assert nvl72.bisection_bytes_per_s / 1e12 == pytest.approx(32.4)
    assert h100.bisection_bytes_per_s * 2 / 1e12 == pytest.approx(3.6)  # DGX H100 "3.6 TB/s bisection" (both directions)
    assert a100.aggregate_bidir_bytes_per_s / 1e12 == pytest.approx(4.8)  # A100 whitepaper "4.8 TB/s total"
    assert not a100.nvls and h100.nvls
    with pytest.raises(GpucommError, match="has no NVSwitch"):
        switch_board("dgx1_v100")


def test_mleng_sweep():
    rows = mleng_h200_sweep()
    assert len(rows) == 20 and rows[0]["msg_bytes"] == 32 * 2**10
    assert rows[-1]["busbw_bytes_per_s"] / 1e9 == 482.26
    assert all(r["time_s"] > 0 for r in rows)


# --- figures --------------------------------------------------------------------------------------------------

def test_mesh_vs_switch_figure_buttons_carry_the_model():
    sizes = (16 * 2**10, 2**30)
    fig = mesh_vs_switch_figure("nvlink4", sizes=sizes, initial_size=2**30)
    assert len(fig.data) == 6
    menu = fig.layout.updatemenus[0]
    assert [b.label for b in menu.buttons] == ["16 KiB", "1 GiB"] and menu.active == 1
    y_sw, y_mesh = menu.buttons[0].args[0]["y"]
    assert y_sw[0] == pytest.approx(collective_cost("all_reduce", 16 * 2**10, num_ranks=2, link="nvlink4").time_s * 1e6, rel=1e-3)
    assert y_mesh[-1] == pytest.approx(collective_cost("all_reduce", 16 * 2**10, num_ranks=8, link="nvlink4",
                                                       topology="mesh").time_s * 1e6, rel=1e-3)
    assert list(menu.buttons[0].args[2]) == [4, 5]  # only the time traces change
    assert list(fig.data[4].y) == list(menu.buttons[1].args[0]["y"][0])
    with pytest.raises(GpucommError, match="initial size"):
        mesh_vs_switch_figure(sizes=sizes, initial_size=123)


def test_tp2_throughput_figure():
    fig = tp2_throughput_figure()
    assert len(fig.data) == 6
    assert list(fig.data[0].y) == [v[0] for v in SEED_TP2_BATCH_THROUGHPUT.values()]
    assert list(fig.data[1].y) == [v[1] for v in SEED_TP2_BATCH_THROUGHPUT.values()]
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["tokens/s per GPU", "NVSwitch / point-to-point"]


def test_algorithms_figure_dropdown_and_slider():
    fig = algorithms_figure("nvlink4", gpu_counts=(2, 4, 8), initial_gpus=8)
    assert len(fig.data) == 3 * len(SHOWN_ALGORITHMS) + 1
    assert len(fig.to_json()) < 300_000
    menu = fig.layout.updatemenus[0]
    assert [b.label for b in menu.buttons] == list(COLLECTIVES)
    ag = menu.buttons[COLLECTIVES.index("all_gather")]
    slider = ag.args[1]["sliders"][0]
    assert [s["label"] for s in slider["steps"]] == ["2", "4", "8"]
    ys = slider["steps"][1]["args"][0]["y"]  # all_gather on 4 GPUs
    sizes = list(fig.data[0].x)
    ring = collective_cost("all_gather", sizes[-1], num_ranks=4, link="nvlink4", algorithm="ring")
    assert ys[0][-1] == pytest.approx(ring.time_s * 1e6, rel=1e-3)
    assert ys[1][-1] == pytest.approx(ring.latency_s * 1e6, rel=1e-3)
    assert ys[2][-1] == pytest.approx(ring.transfer_s * 1e6, rel=1e-3)
    tree = SHOWN_ALGORITHMS.index("tree")
    assert all(v is None for v in ys[3 * tree])  # tree does not implement all_gather
    auto = collective_cost("all_gather", sizes[0], num_ranks=4, link="nvlink4")
    assert slider["steps"][1]["args"][0]["customdata"][-1][0] == f"{auto.algorithm}/{auto.protocol}"
    with pytest.raises(GpucommError, match="initial GPU count"):
        algorithms_figure(gpu_counts=(2, 4), initial_gpus=8)


def test_algorithms_figure_rhd_missing_off_powers_of_two():
    fig = algorithms_figure("nvlink4", collectives=("all_reduce",), gpu_counts=(6,), initial_gpus=6)
    rhd = SHOWN_ALGORITHMS.index("rhd")
    assert all(v is None for v in fig.data[3 * rhd].y)
    assert all(v is not None and v > 0 for v in fig.data[0].y)


def test_logs_vs_model_figure():
    c04, c08 = read_bundled_log("C04"), read_bundled_log("C08")
    entries = (LogEntry.from_log("C04: DGX A100", c04, {"link": "nvlink3"}, line_rate_bytes_per_s=300e9),
               LogEntry.from_log("C08: 2 nodes", c08, {"link": "nvlink4", "num_nodes": 2, "network": "eth_200g"}),
               LogEntry("C13: H200", mleng_h200_sweep(), [], {"link": "nvlink4"}, line_rate_bytes_per_s=450e9))
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
    assert model.y[-1] == pytest.approx(collective_cost("all_reduce", s, num_ranks=4, link="nvlink3").busbw_bytes_per_s / 1e9,
                                        rel=1e-3)
    assert max(model.x) == max(r.size_bytes for r in c04.records) and min(model.x) == min(r.size_bytes for r in c04.records)
    with pytest.raises(GpucommError, match="no measured sweeps"):
        logs_vs_model_figure(())
    with pytest.raises(GpucommError, match="initial entry"):
        logs_vs_model_figure(entries, initial=3)
    with pytest.raises(GpucommError, match="no records"):
        logs_vs_model_figure((LogEntry("empty", []),))
    assert math.isfinite(len(fig.to_json()))
