"""The model layer imports neither torch, plotly nor ipywidgets (checked in a fresh interpreter)."""

import subprocess
import sys

MODEL_MODULES = ["gpucomm", "gpucomm.model.units", "gpucomm.model.collectives", "gpucomm.model.hardware", "gpucomm.model.hardware.calibration",
                 "gpucomm.model.catalog", "gpucomm.cli.common", "gpucomm.model.cost", "gpucomm.model.tp", "gpucomm.model.training", "gpucomm.model.planning", "gpucomm.measure.nccl_tests_log", "gpucomm.cli.parse", "gpucomm.measure.topology_examples", "gpucomm.model.scaling", "gpucomm.measure.topology", "gpucomm.model.validation", "gpucomm.model.measurements", "gpucomm.model.fit", "gpucomm.cli",
                 "gpucomm.model.hardware.gpus", "gpucomm.model.hardware.network", "gpucomm.model.hardware.nvswitch", "gpucomm.model.hardware.pcie"]
HEAVY = ["torch", "plotly", "ipywidgets"]


def test_model_layer_imports_no_torch_plotly_or_ipywidgets():
    code = (
        "import importlib, sys\n"
        f"for m in {MODEL_MODULES!r}:\n"
        "    try:\n        importlib.import_module(m)\n"
        "    except ModuleNotFoundError as e:\n"
        "        if e.name != m: raise\n"
        f"print(sorted(h for h in {HEAVY!r} if h in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_package_never_imports_pages_or_tests():
    from pathlib import Path
    import gpucomm

    root = Path(gpucomm.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text()
        for forbidden in ("import tests", "from tests", "import notebooks", "from labs", "import labs", "../shared"):
            assert forbidden not in text, f"{path} contains {forbidden!r}"
