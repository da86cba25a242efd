"""Why communication limits scaling: Amdahl's law, the GPU generations, machine balance, TP intensity (gpucomm.model.scaling)."""
from __future__ import annotations

import doctest
import math

import pytest

import gpucomm.model.scaling as scaling
from gpucomm import GpucommError
from gpucomm.model.collectives import busbw_factor
from gpucomm.model.hardware import get_gpu, get_link, get_pcie_gen
from gpucomm.model.scaling import (
    GENERATIONS,
    amdahl_limit,
    amdahl_speedup,
    generation_growth,
    get_generation,
    hbm_over_nvlink,
    link_busy_fraction,
    link_ratio,
    machine_balance_flops_per_byte,
    nvlink_per_link_bytes_per_s,
    p100_b200_article_ratios,
    tp_flops_per_wire_byte,
)
from gpucomm.model.tp import get_model, layer_params


def test_docstring_examples_run():
    result = doctest.testmod(scaling, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


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


def test_p100_b200_article_numbers_and_the_like_for_like_correction():
    # the CSDN article's own arithmetic: 4000 / 21 and 128 / 32
    r = p100_b200_article_ratios()
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
    assert get_pcie_gen(5).x16_bidir_marketing_bytes_per_s / 1e9 == 128  # PCI-SIG: raw bit rate, both directions
    assert 2 * get_pcie_gen(5).x16_bytes_per_s / 1e9 == pytest.approx(126.03, abs=0.01)  # both, after 128b/130b
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
                                              ("rtx_2080_ti", 25), ("h800_sxm", 25), ("h100_pcie", 25)])
def test_nvlink_per_link(key, per_link_gb):
    assert nvlink_per_link_bytes_per_s(key) / 1e9 == pytest.approx(per_link_gb)


def test_nvlink_per_link_unknown_links_and_no_nvlink():
    assert nvlink_per_link_bytes_per_s("h100_nvl") is None  # no link count in its sources
    with pytest.raises(GpucommError, match="no NVLink"):
        nvlink_per_link_bytes_per_s("rtx_4090")


def test_hbm_over_nvlink():
    assert hbm_over_nvlink("b200_hgx") == pytest.approx(7.7e12 / 900e9)
    with pytest.raises(GpucommError):
        hbm_over_nvlink("rtx_4090")
