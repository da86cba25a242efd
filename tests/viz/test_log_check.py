"""The "check your log" page's Python (run by Pyodide in the page): the same records, warnings, fit and findings as
``gpucomm parse --json``, ``gpucomm fit`` and ``gpucomm diagnose --json`` on the same log, for every bundled log."""

from __future__ import annotations

import json

import pytest

from gpucomm.cli import main as cli_main
from gpucomm.measure.logs.nccl_info import bundled_info_log_names, bundled_info_log_text
from gpucomm.measure.logs.nccl_tests import bundled_log_names, bundled_log_text
from gpucomm.model.measurements import bundled_data
from gpucomm.viz.calculators.live import finite
from gpucomm.viz.calculators.log_check import (
    DEVICE_SYSTEMS,
    check_log,
    check_log_figure,
    check_log_json,
    guess_system,
    panel,
    system_options,
)

# Fields of the metadata record that say when and how it was made, not what the log holds.
_RUN_FIELDS = ("parsed_at", "argv", "input")


def _cli_json_lines(capsys, *argv: str) -> list[dict]:
    capsys.readouterr()
    cli_main(list(argv))
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


def _page(out_json: str) -> dict:
    """What the page receives: the JSON string of check_log_json, parsed."""
    return json.loads(out_json)


def _strip(meta: dict) -> dict:
    return {k: v for k, v in meta.items() if k not in _RUN_FIELDS}


@pytest.mark.parametrize("name", bundled_log_names())
def test_records_and_warnings_are_gpucomm_parse(capsys, name):
    path = str(bundled_data("nccl_logs", f"{name}.txt"))
    cli = finite(_cli_json_lines(capsys, "parse", path, "--json"))
    page = _page(check_log_json(bundled_log_text(name)))
    assert page["ok"], page
    runs = page["nccl_tests"]["runs"]
    metas = [r for r in cli if r["record"] == "meta"]
    assert len(runs) == len(metas)
    records = iter(cli)
    for run in runs:
        meta = next(records)
        rows = [next(records) for _ in range(len(run["records"]))]
        assert _strip(run["meta"]) == _strip(meta)
        assert run["meta"]["input"] == "pasted text"
        assert run["records"] == rows


@pytest.mark.parametrize("name", ["C04", "S01", "S02"])
def test_the_fit_is_gpucomm_fit(capsys, tmp_path, name):
    out = tmp_path / "r.jsonl"
    cli_main(["parse", str(bundled_data("nccl_logs", f"{name}.txt")), "--out", str(out)])
    capsys.readouterr()
    cli_main(["fit", str(out)])
    printed = capsys.readouterr().out
    fit = check_log(bundled_log_text(name))["nccl_tests"]["runs"][0]["fit"]
    assert fit["ok"], fit
    assert f"# {fit['split_reason']}" in printed
    for region in fit["regions"] if len(fit["regions"]) > 1 else []:
        assert region["text"] in printed


@pytest.mark.parametrize("name", bundled_info_log_names())
def test_findings_are_gpucomm_diagnose(capsys, name):
    path = str(bundled_data("nccl_info_logs", f"{name}.txt"))
    (cli,) = _cli_json_lines(capsys, "diagnose", path, "--json")
    page = _page(check_log_json(bundled_info_log_text(name)))
    assert page["ok"], page
    del cli["input"]
    assert page["nccl_info"] == finite(cli)


def test_the_system_is_guessed_from_the_device_names_or_picked():
    out = check_log(bundled_log_text("S01"))  # 16 x "NVIDIA H100 80GB HBM3" on two hosts
    assert (out["system"], out["system_source"]) == ("dgx_h100", "log")
    assert "H100" in out["system_device"]
    model = out["nccl_tests"]["runs"][0]["model"]
    assert model["ok"] and "2 nodes" in model["label"], model
    picked = check_log(bundled_log_text("S01"), system="dgx_b200")
    assert (picked["system"], picked["system_source"]) == ("dgx_b200", "reader")
    assert picked["nccl_tests"]["runs"][0]["model"]["busbw_bytes_per_s"] != model["busbw_bytes_per_s"]
    none = check_log(bundled_log_text("C04"))  # no device list in this log
    assert none["system_source"] == "default"
    assert check_log("x", system="dgx_9000")["message"].startswith("system 'dgx_9000' is not valid: expected one of ")
    known = {key for _, key in system_options()}
    assert {key for _, key in DEVICE_SYSTEMS} <= known, "every guess must be a system the page offers"
    assert guess_system(["Tesla T4"]) == (None, None)


def test_the_model_is_the_cost_model_at_every_measured_size():
    from gpucomm.model.cost import collective_cost
    from gpucomm.model.fabric import system_fabric

    run = check_log(bundled_log_text("C04"), system="dgx_a100")["nccl_tests"]["runs"][0]
    model = run["model"]
    by_size = dict(zip(model["sizes"], model["busbw_bytes_per_s"]))
    for record in run["records"]:
        cost = collective_cost("all_reduce", record["msg_bytes"], num_ranks=4, fabric=system_fabric("dgx_a100", num_ranks=4))
        assert by_size[record["msg_bytes"]] == pytest.approx(cost.busbw_bytes_per_s, rel=1e-12)


def test_text_with_neither_is_refused_in_one_line():
    out = check_log("hello\nworld")
    assert not out["ok"] and "\n" not in out["message"] and "nccl-tests" in out["message"]


def test_figure_and_panel():
    fig = check_log_figure(bundled_log_text("C04"), "dgx_a100")
    names = [t.name for t in fig.data]
    assert any(n.startswith("model: DGX A100") for n in names) and "measured, in-place" in names
    html = panel(bundled_log_text("C04"), "C04", system="dgx_a100")._repr_html_()
    assert 'data-gpucomm-logcheck="1"' in html and "Plotly.newPlot(" in html
    assert json.loads(html.split('class="gpucomm-logcheck-systems">', 1)[1].split("</script>", 1)[0]) == system_options()
