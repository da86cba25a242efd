"""Copy bandwidth (``copybw``) and the ``fit`` command: records, tables, CLI registration, no torch in fit.

Copies on a CPU-only machine measure host memory (small sizes, well under a second); GPU kinds
are checked only for their clear refusal here, and run where CUDA is available.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from gpucomm import GpucommError
from gpucomm.cli import main
from gpucomm.measure.copy_bandwidth import (
    COPY_KINDS,
    GPU_KINDS,
    HOST_KINDS,
    PEER_KINDS,
    catalog_gpu_key,
    copy_sizes,
    expected_copy_bw_bytes_per_s,
    format_copy_table,
)
from gpucomm.model.collectives import busbw_factor
from gpucomm.model.cost import collective_cost
from gpucomm.model.fit import catalog_comparison, fit_regions
from gpucomm.model.hardware import get_gpu, pcie_bw_bytes_per_s

KiB, MiB = 2**10, 2**20


def run_py(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


# --- no torch at import -------------------------------------------------------------------

def test_copy_and_fit_clis_register_without_importing_torch(fresh_process):
    ran = fresh_process["parser"]  # gpucomm's parser built and used in a fresh interpreter (tests/conftest.py)
    _, a, b = json.loads(ran.stdout)
    assert [a[k] for k in ("min_bytes", "max_bytes", "step_factor", "iters", "warmup_iters", "out", "func")] == \
        ["1KiB", "1MiB", 2, 3, 1, "x.jsonl", "gpucomm.cli.copybw"]
    assert [b[k] for k in ("results", "link", "gpus", "plot", "func")] == ["r.jsonl", "nvlink4", 8, "p.html", "gpucomm.cli.fit"]
    assert ran.heavy(("torch", "plotly", "numpy")) == []


def test_fit_runs_without_torch(tmp_path):
    path = synthetic_results(tmp_path)
    out = run_py(
        "import sys\n"
        "sys.modules['torch'] = None  # any import of torch now fails\n"
        "from gpucomm.cli import main\n"
        f"print('exit', main(['fit', {str(path)!r}, '--link', 'nvlink3', '--gpus', '4']))\n")
    assert "exit 0" in out and "single fit: alpha = 20 us, B = 100 GB/s" in out


# --- copy bandwidth -----------------------------------------------------------------------

def test_copy_sizes_and_kinds():
    assert copy_sizes("4KiB", "64KiB", 4) == [4096, 16384, 65536]
    assert set(GPU_KINDS + PEER_KINDS + HOST_KINDS) == set(COPY_KINDS)


def test_catalog_expectations_per_direction():
    exp = expected_copy_bw_bytes_per_s("h100_sxm5")
    assert exp["h2d_pinned"][0] == exp["d2h_pinned"][0] == pcie_bw_bytes_per_s(5, 16)
    assert "per direction" in exp["h2d_pinned"][1]
    assert exp["d2d"][0] == get_gpu("h100_sxm5").mem_bw_bytes_per_s / 2
    assert exp["peer_0_to_1"][0] == get_gpu("h100_sxm5").nvlink_bw_bytes_per_s  # 450 GB/s, not the 900 marketing
    no_p2p = expected_copy_bw_bytes_per_s("rtx_4090")
    assert no_p2p["peer_0_to_1"][0] is None and "no CUDA peer access" in no_p2p["peer_0_to_1"][1]
    assert expected_copy_bw_bytes_per_s("a100_sxm4_80gb")["h2d_pinned"][0] is None  # no PCIe gen in the catalog
    assert catalog_gpu_key("NVIDIA H100 PCIe") == "h100_pcie"
    assert catalog_gpu_key("NVIDIA H20") == "h20" and catalog_gpu_key("NVIDIA H200 NVL") == "h200_nvl"
    assert catalog_gpu_key("Tesla V100-SXM2-32GB") == "v100_sxm2"


def test_host_copy_records_and_file(tmp_path, capsys):
    pytest.importorskip("torch")
    from gpucomm.measure.copy_bandwidth import measure_copy_bandwidth, read_copy_results

    out = tmp_path / "copy.jsonl"
    results = measure_copy_bandwidth(HOST_KINDS, min_bytes="4KiB", max_bytes="64KiB", step_factor=4, iters=3,
                                     warmup_iters=1, blocks=2, out=out)
    assert results.kinds == list(HOST_KINDS)
    assert [r["bytes"] for r in results.of_kind("host_numpy")] == [4096, 16384, 65536]
    for r in results:
        assert r["record"] == "copy" and r["time_s"] > 0
        assert r["bw_bytes_per_s"] == pytest.approx(r["bytes"] / r["time_s"])
    assert results.peak("host_torch") == max(r["bw_bytes_per_s"] for r in results.of_kind("host_torch"))
    assert results.meta["timing"] == "host clock" and results.meta["peer_access"] == {}
    saved = read_copy_results(out)
    assert list(saved) == list(results) and saved.meta["tool"] == "gpucomm.bench.copy"
    # the metadata record every tool writes (gpucomm.measure.harness.metadata_record)
    for key in ("gpucomm_version", "date", "host", "devices", "torch_version", "nccl_version", "env", "argv"):
        assert key in saved.meta, key
    assert saved.meta["argv"][:2] == ["measure_copy_bandwidth", "kinds=['host_torch', 'host_numpy']"]
    printed = capsys.readouterr().out
    assert "(GB/s)" in printed and "# peak host_numpy" in printed and "bytes copied / time, one direction" in printed
    assert format_copy_table(results).count("\n") == printed.strip().count("\n") - 1  # all but the file line


def test_copy_refuses_what_this_machine_cannot_do(capsys):
    torch = pytest.importorskip("torch")
    from gpucomm.measure.copy_bandwidth import measure_copy_bandwidth

    with pytest.raises(GpucommError, match="copy kind 'h2d' is not valid"):
        measure_copy_bandwidth(["h2d"])
    if not torch.cuda.is_available():
        with pytest.raises(GpucommError, match="h2d_pinned needs a CUDA GPU, and none is available"):
            measure_copy_bandwidth("h2d_pinned")
    if torch.cuda.device_count() < 2:
        with pytest.raises(GpucommError, match="peer_0_to_1 needs 2 CUDA GPUs"):
            measure_copy_bandwidth(["peer_0_to_1"])
    assert main(["copybw", "--kinds", "host_torch", "-b", "1MiB", "-e", "8"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gpucomm copybw: error: minimum size -b 1048576 B")


@pytest.mark.skipif(not __import__("importlib").util.find_spec("torch") or
                    not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_copy_kinds_run():
    from gpucomm.measure.copy_bandwidth import available_copy_kinds, measure_copy_bandwidth

    results = measure_copy_bandwidth(None, min_bytes="1MiB", max_bytes="4MiB", iters=3, warmup_iters=1,
                                     print_table=False)
    assert results.kinds == list(available_copy_kinds())
    assert all(r["bw_bytes_per_s"] > 0 for r in results)


# --- fit ----------------------------------------------------------------------------------

def synthetic_results(tmp_path, *, rows=None, name="sweep.jsonl"):
    rows = rows or [{"record": "result", "collective": "all_reduce", "num_ranks": 4, "msg_bytes": 8 * 4**k,
                     "time_s": 20e-6 + 1.5 * 8 * 4**k / 100e9} for k in range(12)]
    for r in rows:
        r.setdefault("busbw_bytes_per_s", busbw_factor(r["collective"], r["num_ranks"]) * r["msg_bytes"] / r["time_s"])
    meta = {"record": "meta", "collective": rows[0]["collective"], "num_ranks": rows[0]["num_ranks"], "backend": "nccl"}
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in [meta, *rows]))
    return path


def two_regime_rows():
    """An LL-like regime (low alpha, low B) below 64 KiB and a Simple-like one (high alpha, high B) above."""
    rows = []
    for k in range(3, 27):
        s = 2**k
        t = 5e-6 + s / 10e9 if s < 64 * KiB else 40e-6 + s / 200e9
        rows.append({"record": "result", "collective": "all_reduce", "num_ranks": 2, "msg_bytes": s, "time_s": t})
    return rows


def test_fit_one_region_when_one_line_fits():
    rows = [{"collective": "all_reduce", "num_ranks": 4, "msg_bytes": 8 * 4**k, "time_s": 20e-6 + 1.5 * 8 * 4**k / 100e9}
            for k in range(12)]
    report = fit_regions(rows)
    assert len(report.regions) == 1 and report.single.alpha_s == pytest.approx(20e-6)
    assert report.single.busbw_bytes_per_s == pytest.approx(100e9)
    assert report.split_reason.startswith("one region")


def test_fit_splits_two_protocol_regions():
    report = fit_regions(two_regime_rows())
    assert report.single.rms_rel_error > 0.15
    low, high = report.regions
    assert low.max_bytes == 32 * KiB and high.min_bytes == 64 * KiB
    assert low.fit.alpha_s == pytest.approx(5e-6, rel=1e-6) and low.fit.busbw_bytes_per_s == pytest.approx(10e9)
    assert high.fit.alpha_s == pytest.approx(40e-6, rel=1e-6) and high.fit.busbw_bytes_per_s == pytest.approx(200e9)
    assert report.busbw_at(64 * MiB) == pytest.approx(high.fit.busbw_at(64 * MiB))
    assert "two regions split between 32 KiB and 64 KiB" in report.split_reason


def test_fit_rejects_mixed_or_empty_input():
    with pytest.raises(GpucommError, match="no result records"):
        fit_regions([])
    rows = two_regime_rows()
    rows[0] = dict(rows[0], collective="all_gather")
    with pytest.raises(GpucommError, match="mix collectives"):
        fit_regions(rows)


def test_catalog_comparison_ratio_is_measured_over_model():
    rows = [{"collective": "all_reduce", "num_ranks": 8, "msg_bytes": s, "time_s": t,
             "busbw_bytes_per_s": busbw_factor("all_reduce", 8) * s / t} for s, t in ((2**20, 50e-6), (2**26, 600e-6))]
    comp = catalog_comparison(rows, link="nvlink4")
    for c, r in zip(comp, rows):
        model = collective_cost("all_reduce", r["msg_bytes"], num_ranks=8, fabric="nvlink4")
        assert c["model_busbw_bytes_per_s"] == model.busbw_bytes_per_s
        assert c["ratio"] == pytest.approx(r["busbw_bytes_per_s"] / model.busbw_bytes_per_s)
    assert catalog_comparison(rows, link="nvlink4", num_gpus=2)[0]["model_busbw_bytes_per_s"] == \
        collective_cost("all_reduce", 2**20, num_ranks=2, fabric="nvlink4").busbw_bytes_per_s
    with pytest.raises(GpucommError, match="unknown link"):
        catalog_comparison(rows, link="nvlink9")


def fit_cli(argv):
    return main(["fit", *argv])


def test_fit_cli_prints_regions_comparison_and_writes_a_plot(tmp_path, capsys):
    pytest.importorskip("plotly")
    path = synthetic_results(tmp_path, rows=two_regime_rows())
    plot = tmp_path / "fit.html"
    assert fit_cli([str(path), "--link", "nvlink4", "--gpus", "8", "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "# all_reduce on 2 ranks, backend nccl: 24 sizes" in out
    assert "region 1: 8 B to 32 KiB: alpha = 5 us, B = 10 GB/s" in out
    assert "region 2: 64 KiB to 64 MiB: alpha = 40 us, B = 200 GB/s" in out
    assert "catalog model: nvlink4, 8 GPUs" in out and "ratio" in out
    rows = [line.split() for line in out.splitlines() if line and not line.startswith("#")]
    assert len(rows) == 24 and rows[-1][0] == str(64 * MiB)
    big = collective_cost("all_reduce", 64 * MiB, num_ranks=8, fabric="nvlink4").busbw_bytes_per_s
    measured = 64 * MiB / (40e-6 + 64 * MiB / 200e9)
    assert float(rows[-1][5]) == pytest.approx(measured / big, abs=0.006)
    html = plot.read_text()
    assert "<html>" in html[:100] and "plotly" in html and len(html) > 1_000_000  # plotly.js included
    assert "fit 8 B-32 KiB" in html and "catalog: nvlink4, 8 GPUs" in html


def test_fit_cli_bad_input_exits_2_with_one_line(tmp_path, capsys):
    path = synthetic_results(tmp_path)
    for argv, match in [([str(tmp_path / "missing.jsonl")], "cannot be read"),
                        ([str(path), "--link", "nvlink9"], "unknown link"),
                        ([str(path), "--gpus", "8"], "expected --link too"),
                        ([str(path), "--plot", str(tmp_path / "fit.png")], "ending in .html"),
                        ([str(path), "--plot", ""], "--plot ''")]:
        assert fit_cli(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("gpucomm fit: error: ") and match in err[0], err
    assert not (tmp_path / "fit.png").exists()
    assert math.isfinite(fit_regions([json.loads(line) for line in path.read_text().splitlines()]).single.alpha_s)


# --- the labs' figures --------------------------------------------------------------------

def test_lab_figures_draw_the_records():
    pytest.importorskip("plotly")
    from gpucomm.viz.figures.bench import collectives_bandwidth_figure, copy_bandwidth_figure

    rows = [{"record": "copy", "kind": k, "bytes": s, "time_s": s / bw, "bw_bytes_per_s": bw}
            for k, bw in (("h2d_pinned", 50e9), ("d2d", 1.5e12)) for s in (2**20, 2**26)]
    fig = copy_bandwidth_figure(rows, {"h2d_pinned": 63.0e9, "d2d": None})
    assert [t.name for t in fig.data] == ["h2d_pinned", "h2d_pinned: catalog 63 GB/s", "d2d"]
    assert list(fig.data[0].y) == [50.0, 50.0] and list(fig.data[2].y) == [1500.0, 1500.0]
    with pytest.raises(GpucommError, match="no copy records"):
        copy_bandwidth_figure([])

    sweep = lambda f: [{"msg_bytes": s, "time_s": s / 2e9, "algbw_bytes_per_s": 2e9, "busbw_bytes_per_s": f * 2e9}
                       for s in (8, 2**20)]  # noqa: E731
    fig = collectives_bandwidth_figure({"broadcast": sweep(1.0), "all_gather": sweep(0.5)})
    busbw, algbw = fig.data[:2], fig.data[2:]
    assert [list(t.y) for t in busbw] == [[2.0, 2.0], [1.0, 1.0]] and all(t.visible for t in busbw)
    assert [list(t.y) for t in algbw] == [[2.0, 2.0], [2.0, 2.0]] and not any(t.visible for t in algbw)
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["busbw", "algbw"]


def test_copybw_without_torch_says_so_in_one_line(fresh_process):
    ran = fresh_process["copybw without torch"]
    assert ran.code == 2
    assert ran.stderr.strip() == "gpucomm copybw: error: copy bandwidth needs PyTorch: pip install torch"
