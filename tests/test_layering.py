"""The package's layers, checked from the package tree itself (nothing listed by hand can go stale).

``src/gpucomm`` has four layers, each a subpackage, with imports pointing downward only::

    model  <-  measure  <-  viz  <-  cli

``model`` is pure Python (standard library only). ``measure`` adds torch.distributed, ``viz``
plotly and ipywidgets, ``cli`` the command line. Every ``.py`` file is parsed (imports inside
functions included), so a lazy import cannot hide an upward dependency; a fresh interpreter then
imports every model module and checks that no heavy library came along.
"""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import gpucomm

ROOT = Path(gpucomm.__file__).parent

# Layer -> the gpucomm layers it may import ("" is the package root: GpucommError, __version__).
ALLOWED = {
    "model": {"", "model"},
    "measure": {"", "model", "measure"},
    "viz": {"", "model", "measure", "viz"},
    "cli": {"", "model", "measure", "viz", "cli"},
}
# Third-party libraries each layer may import (the model: none, only the standard library).
THIRD_PARTY = {
    "model": set(),
    "measure": {"torch", "numpy", "tqdm", "pynvml"},  # pynvml: package nvidia-ml-py, imported lazily (doctor)
    "viz": {"plotly", "ipywidgets", "pandas", "numpy"},
    "cli": {"rich"},
}
HEAVY = ("torch", "plotly", "ipywidgets", "pandas", "numpy")


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``, relative imports resolved."""
    package = ".".join(("gpucomm", *path.relative_to(ROOT).parent.parts)).rstrip(".")
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
    return found


def _layer_files(layer: str) -> list[Path]:
    return sorted((ROOT / layer).rglob("*.py"))


def test_every_layer_exists_and_holds_code():
    on_disk = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert on_disk == set(ALLOWED), f"layers on disk {sorted(on_disk)}, expected {sorted(ALLOWED)}"
    for layer in ALLOWED:
        modules = [p for p in _layer_files(layer) if p.name != "__init__.py"]
        assert modules, f"layer {layer!r} has no module"
    # Nothing but the package marker and `python -m gpucomm` sits beside the layers.
    loose = sorted(p.name for p in ROOT.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py"], loose


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_imports_point_downward(layer):
    wrong = []
    for path in _layer_files(layer):
        for line, module in _imports(path):
            top, _, rest = module.partition(".")
            where = f"{path.relative_to(ROOT)}:{line} imports {module}"
            if top == "gpucomm":
                target = rest.partition(".")[0]
                if target not in ALLOWED[layer]:
                    wrong.append(where)
            elif top not in sys.stdlib_module_names and top not in THIRD_PARTY[layer]:
                wrong.append(where)
    assert not wrong, f"{layer} may import gpucomm.{sorted(ALLOWED[layer])} and {sorted(THIRD_PARTY[layer])}:\n" + \
        "\n".join(wrong)


def _run_fresh(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_importing_the_model_loads_no_heavy_library(fresh_process):
    import gpucomm.model

    names = [m.name for m in pkgutil.walk_packages(gpucomm.model.__path__, "gpucomm.model.")]
    assert len(names) >= 10, names  # the walk found the model's modules
    ran = fresh_process["model"]  # a fresh interpreter imported every one of them (tests/conftest.py)
    assert set(names) <= set(ran.modules) and ran.heavy(HEAVY) == [], ran.stderr


def test_the_command_line_loads_no_heavy_library_for_model_verbs(fresh_process):
    ran = fresh_process["cost"]
    assert ran.code == 0 and ran.heavy(HEAVY) == [], ran.stderr


def test_package_never_imports_pages_or_tests():
    for path in ROOT.rglob("*.py"):
        modules = {m.partition(".")[0] for _, m in _imports(path)}
        assert not modules & {"tests", "notebooks", "labs", "book", "benchmarks", "scripts"}, path
        # built from parts so that a search of the tree for that path finds real references only
        assert "/".join(("..", "shared")) not in path.read_text(), path
