"""Hardware chapters: Amdahl and generation-gap helpers, the `nvidia-smi topo -m` parser, and their figures."""

import doctest
import json
import math
import subprocess
import sys

import pytest

from gpucomm import GpucommError
from gpucomm.model.collectives import busbw_factor
from gpucomm.model.hardware import get_gpu, get_link, get_pcie_gen
from gpucomm.model.tp import get_model, layer_params, tp_speedup

import gpucomm.model.scaling as scaling
import gpucomm.measure.topology as topo
from gpucomm.model.scaling import (GENERATIONS, amdahl_limit, amdahl_speedup, generation_growth, get_generation,
                             hbm_over_nvlink, link_busy_fraction, link_ratio, machine_balance_flops_per_byte,
                             nvlink_per_link_bytes_per_s, seed_004_ratios, tp_flops_per_wire_byte)
from gpucomm.measure.topology import DGX1_P100_TOPO, TOPO_CODES, describe_cell, parse_topo_matrix


# --- scaling -------------------------------------------------------------------------------------

@pytest.mark.parametrize("module", [scaling, topo])
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_model_modules_import_no_plotly():
    code = ("import sys, gpucomm.model.scaling, gpucomm.measure.topology\n"
            "print(sorted(m for m in ('plotly', 'torch', 'ipywidgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("p,n,expected", [(0.0, 8, 1.0), (1.0, 8, 8.0), (0.5, 2, 4 / 3), (0.95, 8, 1 / (0.05 + 0.95 / 8))])
def test_amdahl_speedup(p, n, expected):
    assert amdahl_speedup(p, n) == pytest.approx(expected)


def test_amdahl_limit_and_monotone_in_workers():
    assert amdahl_limit(0.9) == pytest.approx(10.0)
    assert amdahl_limit(1.0) == math.inf
    speeds = [amdahl_speedup(0.9, n) for n in (1, 2, 4, 8, 1024)]
    assert speeds == sorted(speeds) and speeds[0] == 1.0 and speeds[-1] < 10.0


@pytest.mark.parametrize("bad", [-0.1, 1.5, "0.5", True, float("nan")])
def test_amdahl_rejects_bad_fractions(bad):
    with pytest.raises(GpucommError, match="parallel fraction"):
        amdahl_speedup(bad, 4)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_amdahl_rejects_bad_worker_counts(bad):
    with pytest.raises(GpucommError):
        amdahl_speedup(0.5, bad)


def test_generations_come_from_the_catalog():
    years = [g.year for g in GENERATIONS]
    assert years == sorted(years) == [2016, 2017, 2020, 2022, 2024]
    h100 = get_generation("h100_sxm5")
    assert h100.compute_flops_per_s == get_gpu("h100_sxm5").dense_bf16_flops_per_s
    assert h100.pcie_gen == get_gpu("h100_sxm5").pcie_gen == 5
    assert get_generation("v100_sxm2").compute_flops_per_s == get_gpu("v100_sxm2").dense_fp16_flops_per_s  # no BF16
    assert get_generation("p100_sxm2").compute_flops_per_s == scaling.P100_SXM2_FP16_FLOPS_PER_S.value == 21.2e12
    for g in GENERATIONS:
        assert g.nvlink_bw_bytes_per_s == get_link(g.nvlink_key).bw_bytes_per_s
        assert g.pcie_bw_bytes_per_s == get_pcie_gen(g.pcie_gen).x16_bytes_per_s
        assert g.pcie_source


def test_get_generation_unknown():
    with pytest.raises(GpucommError, match="rtx_4090"):
        get_generation("rtx_4090")


def test_seed_004_numbers_and_the_like_for_like_correction():
    # the seed's own arithmetic: 4000 / 21 and 128 / 32
    r = seed_004_ratios()
    assert r["compute"] == pytest.approx(190.5, abs=0.05) and r["pcie"] == 4.0
    assert r["nvlink5_over_pcie5"] == pytest.approx(14.06, abs=0.01)
    # like for like: dense 16-bit 21.2 -> 2250 TFLOP/s, PCIe 3.0 -> 5.0 per direction, NVLink 80 -> 900 GB/s
    g = generation_growth("p100_sxm2", "b200_hgx", last_pcie_gen=5)
    assert g["compute"] == pytest.approx(2250 / 21.2)
    assert g["pcie"] == pytest.approx(4.0)
    assert g["nvlink"] == pytest.approx(11.25)
    assert g["compute_over_pcie"] == pytest.approx(g["compute"] / 4.0)
    # with B200's own PCIe 6.0 (flit, no 128b/130b): 128 / 15.75
    assert generation_growth()["pcie"] == pytest.approx(128 / (8 * 16 * 128 / 130 / 8))


def test_pcie5_per_direction_is_about_63_not_128():
    assert get_pcie_gen(5).x16_bytes_per_s / 1e9 == pytest.approx(63.015, abs=0.01)
    assert get_pcie_gen(5).x16_bidir_marketing_bytes_per_s / 1e9 == pytest.approx(126.03, abs=0.01)
    assert link_ratio("nvlink5", "pcie5") == pytest.approx(900 / 63.015, rel=1e-4)


def test_machine_balance():
    assert machine_balance_flops_per_byte(1e15, 1e12) == pytest.approx(1000.0)
    assert get_generation("h100_sxm5").flops_per_nvlink_byte == pytest.approx(989.4e12 / 450e9)
    for bad in (0, -1, float("inf"), "1"):
        with pytest.raises(GpucommError):
            machine_balance_flops_per_byte(bad, 1e9)


@pytest.mark.parametrize("tp", [2, 4, 8])
def test_tp_intensity_matches_an_independent_count(tp):
    cfg = get_model("llama-3-70b")
    flops = 2 * layer_params(cfg) / tp
    wire = 2 * busbw_factor("all_reduce", tp) * cfg.hidden_size * 2
    assert tp_flops_per_wire_byte("llama-3-70b", tp_size=tp) == pytest.approx(flops / wire)


def test_tp_intensity_falls_with_tp_and_fp8_doubles_it():
    values = [tp_flops_per_wire_byte("llama-3-70b", tp_size=t) for t in (2, 4, 8)]
    assert values == sorted(values, reverse=True)
    assert tp_flops_per_wire_byte("llama-3-70b", tp_size=8, dtype="fp8") == pytest.approx(2 * values[-1])
    with pytest.raises(GpucommError):
        tp_flops_per_wire_byte("llama-3-70b", tp_size=1)


def test_link_busy_fraction_pcie_vs_nvlink():
    h100 = get_generation("h100_sxm5")
    nv = link_busy_fraction("llama-3-70b", tp_size=8, flops_per_s=h100.compute_flops_per_s,
                            bw_bytes_per_s=h100.nvlink_bw_bytes_per_s)
    pcie = link_busy_fraction("llama-3-70b", tp_size=8, flops_per_s=h100.compute_flops_per_s,
                              bw_bytes_per_s=h100.pcie_bw_bytes_per_s)
    assert nv < 1 < pcie
    assert pcie / nv == pytest.approx(450e9 / h100.pcie_bw_bytes_per_s)


@pytest.mark.parametrize("key,per_link_gb", [("p100_sxm2", 20), ("v100_sxm2", 25), ("a100_sxm4_80gb", 25),
                                              ("h100_sxm5", 25), ("b200_hgx", 50), ("a40", 14.0625),
                                              ("rtx_2080_ti", 25), ("h800_sxm", 25)])
def test_nvlink_per_link(key, per_link_gb):
    assert nvlink_per_link_bytes_per_s(key) / 1e9 == pytest.approx(per_link_gb)


def test_nvlink_per_link_unknown_links_and_no_nvlink():
    assert nvlink_per_link_bytes_per_s("h100_pcie") is None
    with pytest.raises(GpucommError, match="no NVLink"):
        nvlink_per_link_bytes_per_s("rtx_4090")


def test_hbm_over_nvlink():
    assert hbm_over_nvlink("b200_hgx") == pytest.approx(7.7e12 / 900e9)
    with pytest.raises(GpucommError):
        hbm_over_nvlink("rtx_4090")


# --- topo ----------------------------------------------------------------------------------------

MODERN = """\
\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV12\tNV12\tNV12\tPXB\t0-63,128-191\t0\t\tN/A
GPU1\tNV12\t X \tNV12\tNV12\tPXB\t0-63,128-191\t0\t\tN/A
GPU2\tNV12\tNV12\t X \tNV12\tSYS\t64-127,192-254\t1\t\tN/A
GPU3\tNV12\tNV12\tNV12\t X \tSYS\t64-127,192-254\t1\t\tN/A
NIC0\tPXB\tPXB\tSYS\tSYS\t X \t\t\t\t

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
"""


def test_parse_the_dgx1_example_with_its_garbled_header():
    m = parse_topo_matrix(DGX1_P100_TOPO)
    assert m.gpus == tuple(f"GPU{i}" for i in range(8))
    assert m.devices[8:] == ("mlx5_0", "mlx5_2", "mlx5_1", "mlx5_3")
    # hybrid cube mesh: every P100 uses its 4 NVLinks, 16 NVLink pairs, 12 cross-socket pairs
    assert all(len(m.peers(g)) == get_gpu("p100_sxm2").nvlink_links for g in m.gpus)
    assert {k: len(v) for k, v in m.gpu_pairs().items()} == {"NV1": 16, "SOC": 12}
    assert m.cell("GPU0", "mlx5_0") == "PIX" and m.cell("GPU0", "mlx5_1") == "PHB"
    assert m.affinity["GPU3"] == {"CPU Affinity": "1-1"} and "mlx5_0" not in m.affinity
    assert m.legend["SOC"].startswith("Connection traversing PCIe as well as the SMP link")
    d = m.as_dict()
    assert all(d[a][b] == d[b][a] for a in m.devices for b in m.devices)


def test_parse_a_modern_output_with_nic_legend_and_numa_columns():
    m = parse_topo_matrix(MODERN)
    assert m.devices == ("GPU0", "GPU1", "GPU2", "GPU3", "NIC0")
    assert m.affinity["GPU2"] == {"CPU Affinity": "64-127,192-254", "NUMA Affinity": "1", "GPU NUMA ID": "N/A"}
    assert m.nic_legend == {"NIC0": "mlx5_0"}
    assert set(m.legend) == {"X", "SYS", "NODE", "PHB", "PXB", "PIX", "NV#"}
    assert m.peers("GPU0", codes=("PXB",)) == ("NIC0",)
    assert m.gpu_pairs() == {"NV12": [("GPU0", "GPU1"), ("GPU0", "GPU2"), ("GPU0", "GPU3"), ("GPU1", "GPU2"),
                                      ("GPU1", "GPU3"), ("GPU2", "GPU3")]}


def test_parse_space_aligned_output_and_ansi_colours():
    text = ("        GPU0    GPU1    CPU Affinity    NUMA Affinity\n"
            "GPU0     X      \x1b[32mPHB\x1b[0m     0-11            N/A\n"
            "GPU1    PHB      X      0-11            N/A\n")
    m = parse_topo_matrix(text)
    assert m.cell("GPU1", "GPU0") == "PHB"
    assert m.affinity["GPU0"] == {"CPU Affinity": "0-11", "NUMA Affinity": "N/A"}


@pytest.mark.parametrize("text,match", [
    ("", "empty"),
    ("   \n\n", "empty"),
    ("\tGPU0\tGPU1\n", "no topology matrix"),
    ("\tGPU0\tGPU1\nGPU0\t X \tNVX\nGPU1\tNVX\t X \n", r"line 2, row GPU0, column GPU1: unknown code 'NVX'"),
    ("\tGPU0\tGPU1\nGPU0\t X \nGPU1\tPIX\t X \n", r"line 2 \(GPU0\): 1 cells for 2 devices"),
    ("\tGPU0\tGPU1\nGPU0\tPIX\tPIX\nGPU1\tPIX\t X \n", "own cell is 'PIX': expected X"),
    ("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPHB\t X \n", "GPU1-GPU0 is PHB but GPU0-GPU1 is PIX"),
    ("\tGPU0\tGPU2\nGPU0\t X \tPIX\nGPU1\tPIX\t X \n", "header .* does not list the row devices"),
    ("\tGPU0\tGPU0\nGPU0\t X \tPIX\nGPU0\tPIX\t X \n", "appears twice"),
    ("\tGPU0\tGPU1\nGPU0\t X \tNV0\nGPU1\tNV0\t X \n", "unknown code 'NV0'"),
])
def test_garbled_input_gives_a_clear_error(text, match):
    with pytest.raises(GpucommError, match=match):
        parse_topo_matrix(text)


def test_parse_rejects_non_text():
    with pytest.raises(GpucommError, match="string"):
        parse_topo_matrix(None)


def test_describe_cell_and_nccl_defaults():
    assert describe_cell("NV18") == (TOPO_CODES["NV#"], 18)
    assert describe_cell(" x ")[0].code == "X"
    p2p = {code: c.nccl_p2p_by_default for code, c in TOPO_CODES.items()}
    assert p2p == {"X": True, "NV#": True, "PIX": True, "PXB": True, "PHB": False, "NODE": False, "SYS": False,
                   "SOC": False}
    assert TOPO_CODES["SOC"].rank == TOPO_CODES["SYS"].rank
    ranks = [TOPO_CODES[c].rank for c in ("X", "NV#", "PIX", "PXB", "PHB", "NODE", "SYS")]
    assert ranks == sorted(ranks)
    with pytest.raises(GpucommError, match="expected one of"):
        describe_cell("QPI")


def test_matrix_lookups_reject_unknown_names():
    m = parse_topo_matrix(MODERN)
    with pytest.raises(GpucommError, match="unknown device"):
        m.cell("GPU0", "GPU9")
    with pytest.raises(GpucommError, match="unknown topology code"):
        m.peers("GPU0", codes=("NV12",))


# --- figures -------------------------------------------------------------------------------------

plots = pytest.importorskip("gpucomm.viz.figures.chapters_hw")


def _size_kb(fig) -> float:
    return len(fig.to_json()) / 1024


def test_compute_vs_links_figure_views():
    fig = plots.compute_vs_links_figure()
    assert [t.y for t in fig.data[:3]] == [tuple(g.compute_flops_per_s / 1e12 for g in GENERATIONS),
                                           tuple(g.nvlink_bw_bytes_per_s / 1e9 for g in GENERATIONS),
                                           tuple(g.pcie_bw_bytes_per_s / 1e9 for g in GENERATIONS)]
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["absolute", "growth since P100 (2016)", "FLOP per byte of link"]
    growth = buttons[1].args[0]["y"]
    assert [series[0] for series in growth[:3]] == [1.0, 1.0, 1.0]
    assert growth[0][-1] == pytest.approx(generation_growth()["compute"])
    balance = buttons[2].args[0]
    assert balance["visible"] == [False, False, False, True, True, True, True]
    assert balance["y"][5][0] == pytest.approx(tp_flops_per_wire_byte("llama-3-70b", tp_size=2))
    assert fig.layout.yaxis.type == "log"
    assert len(buttons[0].args[0]["y"]) == len(fig.data)
    assert _size_kb(fig) < 300


def test_tp_speedup_figure_matches_the_model():
    fig = plots.tp_speedup_figure()
    nv = fig.data[1]
    assert nv.y[-1] == pytest.approx(tp_speedup("llama-3-70b", gpu="h100_sxm5", tp_size=8, link="nvlink4",
                                                phase="prefill", prompt_len=4096))
    decode = fig.layout.updatemenus[0].buttons[1]
    assert decode.method == "restyle" and list(decode.args[1]) == [1, 2, 3]
    assert decode.args[0]["y"][2][-1] == pytest.approx(tp_speedup(
        "llama-3-70b", gpu="h100_sxm5", tp_size=8, link="pcie5", p2p=False, phase="decode", batch=1, prompt_len=4096))
    with pytest.raises(GpucommError):
        plots.tp_speedup_figure(scenarios=())


def test_pcie_allreduce_figure_has_a_gpu_slider_and_dotted_staged_paths():
    fig = plots.pcie_allreduce_figure()
    assert len(fig.data) == 16 and len(fig.layout.sliders[0].steps) == 3
    dotted = [t.name for t in fig.data if t.line.dash == "dot"]
    assert dotted and all("no P2P" in name for name in dotted)
    assert fig.layout.xaxis.tickvals[0] > 8  # the overlapping 8 B tick is gone
    assert _size_kb(fig) < 300
    with pytest.raises(GpucommError):
        plots.pcie_allreduce_figure(initial_gpus=16)


def test_topo_matrix_figure():
    m = parse_topo_matrix(DGX1_P100_TOPO)
    fig = plots.topo_matrix_figure(m)
    heat = fig.data[0]
    assert list(heat.x) == list(m.devices)
    assert heat.z[0][0] == 0 and heat.z[0][1] == TOPO_CODES["NV#"].rank and heat.text[0][5] == "SOC"
    gpus_only = fig.layout.updatemenus[0].buttons[1].args[0]
    assert gpus_only["x"][0] == list(m.gpus)
    assert _size_kb(fig) < 300
    assert not plots.topo_matrix_figure(parse_topo_matrix(
        "\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \n")).layout.updatemenus


def test_nvlink_generations_figure_views():
    fig = plots.nvlink_generations_figure()
    assert list(fig.data[0].y) == [g.nvlink_bw_bytes_per_s / 1e9 for g in GENERATIONS]
    views = {b.label: b.args[0] for b in fig.layout.updatemenus[0].buttons}
    assert views["per link, per direction"]["y"][0] == [20, 25, 25, 25, 50]
    assert views["per link, per direction"]["visible"] == [True, False]
    assert views["per GPU, both directions"]["y"][0] == [160, 300, 600, 900, 1800]
    json.loads(fig.to_json())
