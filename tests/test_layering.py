"""The model layer imports neither torch, plotly nor ipywidgets (checked in a fresh interpreter)."""

import subprocess
import sys

MODEL_MODULES = ["gpucomm", "gpucomm.units", "gpucomm.collectives", "gpucomm.hardware", "gpucomm.hardware.calibration",
                 "gpucomm.catalog", "gpucomm.cliutil", "gpucomm.cost", "gpucomm.tp", "gpucomm.training", "gpucomm.planning", "gpucomm.nccl_log", "gpucomm.parse_cli", "gpucomm.topo_examples", "gpucomm.scaling", "gpucomm.topo", "gpucomm.validation", "gpucomm.measurements", "gpucomm.fit", "gpucomm.cli",
                 "gpucomm.hardware.gpus", "gpucomm.hardware.network", "gpucomm.hardware.nvswitch", "gpucomm.hardware.pcie"]
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
