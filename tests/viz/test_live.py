"""The book's live mode, Python side: what the browser runs in Pyodide, checked in CPython.

The figure spec is a plain dict that plotly accepts as is and that equals the notebooks' figure;
``compute`` gives the model's numbers for what the controls hold and refuses a bad value with the
CLI's message, naming the control; the zip the book serves holds the package's model and
calculators and runs with no plotly, numpy, pandas, ipywidgets or torch importable.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from dataclasses import replace

import pytest

from gpucomm.cli import main as cli_main
from gpucomm.model.cost import collective_cost
from gpucomm.model.hardware import get_system
from gpucomm.viz.calculators.collective import (
    CONTROL_ROWS,
    CostInputs,
    collective_figure,
    collective_spec,
    collective_update,
)
from gpucomm.viz.calculators.inputs import input_fields
from gpucomm.viz.calculators.live import browser_zip, calculators, compute, compute_json, controls, panel

A100 = dict(system="dgx_a100", num_ranks=4, msg_bytes=64 * 2**20, compare=("dgx_h100", "gb200_nvl72"))
RAW_A100 = {"system": "dgx_a100", "num_ranks": "4", "msg_bytes": "64MiB", "compare": ["dgx_h100", "gb200_nvl72"]}


def _cli_error(capsys, *argv: str) -> str:
    """The message of ``gpucomm ARGV``'s one-line error, without its ``gpucomm VERB: error: [argument --x: ]``."""
    assert cli_main(list(argv)) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line, line
    message = line.split(": error: ", 1)[1]
    return message.split(": ", 1)[1] if message.startswith("argument ") else message


def test_spec_is_plain_json_and_the_notebook_figure_is_the_same_spec():
    spec = collective_spec(CostInputs(**A100))
    text = json.dumps(spec, allow_nan=False)  # plain types only: what crosses into the browser
    assert json.loads(text) == spec
    assert spec["layout"]["template"] == "plotly_white"
    figure = collective_figure(CostInputs(**A100)).to_dict()
    import plotly.graph_objects as go

    assert go.Figure(spec).to_dict() == figure  # plotly validates every property of the spec
    assert len(spec["data"]) == len(figure["data"]) and spec["data"][0]["y"] == list(figure["data"][0]["y"])


def test_each_series_has_its_10_to_90_percent_band_from_the_model():
    # yours and each compared system: a low and a high trace on the time panel, the high one shaded down to the low
    # one, legend-grouped with the series' curve, no hover; their y are the model's time_low_s and time_high_s
    inputs = CostInputs(**A100)
    spec = collective_spec(inputs)
    sizes = spec["data"][0]["x"]
    names = [t["name"] for t in spec["data"]]
    for name, system in (("your configuration", "dgx_a100"), (get_system("dgx_h100").name, "dgx_h100")):
        curve = names.index(name)
        low = names.index(f"{name}: 10-90 % band (low)")
        high = names.index(f"{name}: 10-90 % band (high)")
        assert high == low + 1 and low > curve  # tonexty fills to the trace just before it
        fabric = replace(inputs, system=system).fabric()
        costs = [collective_cost("all_reduce", s, num_ranks=4, fabric=fabric) for s in sizes]
        assert spec["data"][low]["y"] == pytest.approx([c.time_low_s * 1e6 for c in costs])
        assert spec["data"][high]["y"] == pytest.approx([c.time_high_s * 1e6 for c in costs])
        assert all(lo < t < hi for lo, t, hi in zip(spec["data"][low]["y"], spec["data"][curve]["y"],
                                                    spec["data"][high]["y"]))
        for i in (low, high):
            t = spec["data"][i]
            assert t["legendgroup"] == spec["data"][curve]["legendgroup"] and t["showlegend"] is False
            assert t["hoverinfo"] == "skip" and t["visible"] is True and (t["xaxis"], t["yaxis"]) == ("x", "y")
        assert spec["data"][high]["fill"] == "tonexty" and "fill" not in spec["data"][low]
    # a system not compared: its band is hidden with its curve
    hidden = [t for t in spec["data"] if t["name"].endswith("band (low)") and t["visible"] is False]
    assert hidden and all(t["y"] == [] for t in hidden)
    # the curves keep the indices the front end and the widget know: time and busbw first, the markers next
    assert [t["name"] for t in spec["data"][:2]] == ["your configuration", "your configuration: busbw"]
    assert spec["data"][5]["mode"] == "markers" and spec["data"][6]["mode"] == "markers"


def test_controls_come_from_the_field_metadata():
    c = controls("collective", CostInputs(**A100))
    fields = dict(input_fields(CostInputs))
    assert list(c["fields"]) == list(fields)
    assert [f for row in c["rows"] for f in row] == [f for row in CONTROL_ROWS for f in row]
    for name, meta in fields.items():
        assert c["fields"][name]["label"] == meta["label"] and c["fields"][name]["kind"] == meta["kind"]
        if meta["choices"]:
            assert [v for _, v in c["fields"][name]["choices"]] == [v for _, v in meta["choices"]()]
    assert c["fields"]["msg_bytes"]["value"] == "64MiB"
    assert c["fields"]["compare"]["value"] == ["dgx_h100", "gb200_nvl72"]
    assert c["fields"]["p2p"]["enabled_when"] == ["system", "custom"]
    json.dumps(c, allow_nan=False)


def test_compute_gives_the_model_numbers_for_what_the_controls_hold():
    result = compute("collective", RAW_A100)
    assert result["ok"], result
    update = collective_update(CostInputs(**A100))
    assert result["summary"] == update.summary
    # the shown traces only, in order (a hidden one is never drawn: it does not cross into the browser)
    shown = [y for y, visible in zip(update.data["y"], update.data["visible"]) if visible]
    assert [t["y"] for t in result["spec"]["data"]] == [list(y) for y in shown]
    assert all(t["visible"] is not False for t in result["spec"]["data"])
    assert result["spec"]["layout"]["title"]["text"] == update.layout["title.text"]
    # One string each way, as Pyodide passes it.
    assert json.loads(compute_json("collective", json.dumps(RAW_A100))) == json.loads(json.dumps(result))


@pytest.mark.parametrize("size", ["0", "abc", "-3MiB"])
def test_a_bad_size_gets_the_cli_message_next_to_its_control(capsys, size):
    result = compute("collective", {**RAW_A100, "msg_bytes": size})
    assert result == {"ok": False, "field": "msg_bytes",
                      "message": _cli_error(capsys, "cost", "all_reduce", "--link", "nvlink3", "--gpus", "4", "--size", size)}


def test_a_configuration_the_model_refuses_gets_the_cli_message(capsys):
    result = compute("collective", {**RAW_A100, "algorithm": "nvls"})
    cli = _cli_error(capsys, "cost", "all_reduce", "--link", "nvlink3", "--gpus", "4", "--size", "64MiB", "--algo", "nvls")
    assert result == {"ok": False, "field": None, "message": cli}


@pytest.mark.parametrize("field, raw, words", [
    ("num_ranks", "eight", "GPUs 'eight' is not valid: expected an integer from 1 to 100000"),
    ("num_ranks", "0", "GPUs 0 is not valid"),
    ("system", "dgx_9000", "system 'dgx_9000' is not valid: expected one of custom, "),
    ("compare", ["nope"], "compare with 'nope' is not valid"),
])
def test_a_bad_value_names_its_field(field, raw, words):
    result = compute("collective", {**RAW_A100, field: raw})
    assert not result["ok"] and result["field"] == field and words in result["message"], result


def test_an_unknown_field_or_calculator_is_refused():
    assert compute("collective", {"colour": "red"})["message"].startswith("field 'colour' is not valid")
    with pytest.raises(Exception, match="live calculator 'nope' is not valid"):
        compute("nope", {})


def test_panel_html_holds_the_controls_and_the_precomputed_figure():
    html = panel("collective", **A100)._repr_html_()
    assert 'data-gpucomm-live="collective"' in html and "Plotly.newPlot(" in html
    data = html.split('class="gpucomm-live-controls">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data) == controls("collective", CostInputs(**A100))
    assert collective_update(CostInputs(**A100)).summary in html.replace("&#x27;", "'")


def test_every_live_calculator_computes_its_defaults():
    for name in calculators():
        assert compute(name, {})["ok"], name


@pytest.mark.parametrize("name, changes", [
    ("mesh", {"link": "nvlink3", "mesh_size": "4", "msg_bytes": "16MiB"}),
    ("generations", {}),
    ("training", {"num_gpus": "64"}),
    ("tp", {"interconnect": "nvlink4:mesh8", "batch": "16", "tp_size": "4"}),
])
def test_update_mode_gives_the_figure_update_of_the_widget(name, changes):
    """Without a skeleton, the browser applies the calculator's FigureUpdate: the one the ipywidgets UI applies."""
    calc = calculators()[name]
    result = compute(name, changes)
    assert result["ok"], result
    meta = dict(input_fields(calc.inputs))
    from gpucomm.viz.calculators.live import read_field

    inputs = calc.inputs(**{k: read_field(meta[k], v) for k, v in changes.items()})
    update = calc.update(inputs)
    assert result["summary"] == update.summary
    assert result["update"]["traces"] == list(update.traces)
    assert result["update"]["layout"] == json.loads(json.dumps(update.layout))
    assert json.dumps(result["update"]["data"], allow_nan=False)
    assert result["update"]["data"]["y"] == json.loads(json.dumps(update.data["y"]).replace("NaN", "null"))
    figure = calc.figure(inputs)  # the first paint the update applies to has every trace it names
    assert max(update.traces) < len(figure.data)


def test_protocol_menu_offers_every_protocol_of_the_model_ll128_included():
    """The collective calculator's protocol control (live panel; the ipywidgets UI reads the same metadata) lists
    ``auto`` and every protocol the cost model knows, LL128 among them, and each reaches the model."""
    from gpucomm.model.cost import PROTOCOLS

    choices = [v for _, v in controls("collective")["fields"]["protocol"]["choices"]]
    assert choices == ["auto", *PROTOCOLS] and "LL128" in choices
    for protocol in PROTOCOLS:
        result = compute("collective", {**RAW_A100, "protocol": protocol})
        assert result["ok"], result
        assert result["summary"] == collective_update(CostInputs(**A100, protocol=protocol)).summary
        assert result["summary"].endswith(f"{protocol} protocol)"), result["summary"]


def test_tp_panel_refuses_with_the_cli_message_next_to_the_control(capsys):
    """The TP calculator: a TP degree that does not divide the heads gets ``gpucomm tp``'s line; a batch out of
    range names the batch control; the panel's controls are every input of the ipywidgets UI."""
    from gpucomm.viz.calculators.tp_inference import CONTROL_ROWS as TP_ROWS
    from gpucomm.viz.calculators.tp_inference import TPInputs

    result = compute("tp", {"tp_size": "3"})
    cli = _cli_error(capsys, "tp", "--model", "llama-3-70b", "--tp", "3", "--tokens", "8192", "--link", "nvlink4")
    assert result == {"ok": False, "field": None, "message": cli}
    bad = compute("tp", {"batch": "0"})
    assert bad["field"] == "batch" and bad["message"] == "batch 0 is not valid: expected an integer from 1 to 4096 sequences"
    c = controls("tp")
    assert sorted(f for row in c["rows"] for f in row) == sorted(f for f, _ in input_fields(TPInputs))
    assert c["rows"] == [list(row) for row in TP_ROWS]


def test_browser_zip_is_the_model_and_calculators_and_runs_without_heavy_libraries(tmp_path):
    data = browser_zip()
    assert data == browser_zip(), "the zip must be the same bytes for the same package (its name is its hash)"
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert "gpucomm/model/cost.py" in names and "gpucomm/viz/calculators/live.py" in names
    assert not [n for n in names if n.startswith(("gpucomm/cli/", "gpucomm/viz/figures/", "gpucomm/viz/widgets/"))
                or "__pycache__" in n]
    # of measure, the log readers and the modules beside them (their torch never imported: below), not the doctor
    assert "gpucomm/measure/logs/nccl_info.py" in names and "gpucomm/measure/logs/nccl_tests_results.py" in names
    assert not [n for n in names if n.startswith("gpucomm/measure/doctor/")]
    zipfile.ZipFile(io.BytesIO(data)).extractall(tmp_path)
    # A fresh interpreter that sees only the unpacked zip and the standard library, as Pyodide does.
    code = """
import importlib.abc, json, sys
HEAVY = ("plotly", "numpy", "pandas", "ipywidgets", "torch")
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HEAVY:
            raise ImportError(name + " is not in the browser")
sys.meta_path.insert(0, Block())
sys.path = [ZIPDIR] + [p for p in sys.path if "site-packages" not in p and "src" not in p]
from gpucomm.viz.calculators.live import calculators, compute_json
out = json.loads(compute_json("collective", RAW))
assert out["ok"], out
for name in calculators():
    assert json.loads(compute_json(name, "{}"))["ok"], name
import gpucomm
assert gpucomm.__file__.startswith(ZIPDIR), gpucomm.__file__
from gpucomm.viz.calculators.log_check import check_log_json
log = json.loads(check_log_json(open(LOG).read(), "dgx_a100"))
assert log["ok"] and log["nccl_tests"]["runs"][0]["records"], log
print(out["summary"])
""".replace("ZIPDIR", repr(str(tmp_path))).replace("RAW", repr(json.dumps(RAW_A100))).replace(
        "LOG", repr(str(tmp_path / "gpucomm/model/data/nccl_logs/C04.txt")))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == collective_update(CostInputs(**A100)).summary
