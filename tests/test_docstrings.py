"""Public functions of the model layer carry numpydoc docstrings with Parameters and Returns sections.

The project standard: public docstrings (numpydoc) give shapes, units, errors raised and sources. This test
checks the part a machine can check: every public function (and method of a public class) defined in any
public module of ``gpucomm.model`` (found by walking the package, so a new module is checked the day it is
added) has a docstring, a ``Parameters`` section when it takes arguments, and a ``Returns`` section when it
returns something.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import textwrap
from pathlib import Path

import pytest

import gpucomm.model


def public_modules(package) -> list[str]:
    """The package and every module below it whose dotted name has no part starting with ``_``."""
    names = [package.__name__] + [m.name for m in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")]
    return sorted(name for name in names if not any(part.startswith("_") for part in name.split(".")))


MODULES = public_modules(gpucomm.model)

# Functions exempt from a rule, with the reason. Keep it small; it is empty today.
ALLOWED_WITHOUT_PARAMETERS: dict[str, str] = {}
ALLOWED_WITHOUT_RETURNS: dict[str, str] = {}

# Functions whose sections were completed on purpose: they must keep both sections (no delegation).
REQUIRED = (
    "gpucomm.model.fabric.make_fabric", "gpucomm.model.cost.per_gpu_bw_bytes_per_s", "gpucomm.model.cost.pair_bw_bytes_per_s",
    "gpucomm.model.cost.ring_steps", "gpucomm.model.cost.all_reduce_time_s", "gpucomm.model.cost.alpha_beta_time_s",
    "gpucomm.model.tp.get_model", "gpucomm.model.tp.dtype_bytes", "gpucomm.model.tp.check_tp_size", "gpucomm.model.tp.tp_all_reduce_bytes",
    "gpucomm.model.tp.layer_params", "gpucomm.model.tp.kv_bytes_per_token_per_layer", "gpucomm.model.tp.tp_speedup",
    "gpucomm.model.tp.sp_layer_comm", "gpucomm.model.training.model_params", "gpucomm.model.collectives.check_collective",
    "gpucomm.model.collectives.check_num_ranks", "gpucomm.model.collectives.algbw_bytes_per_s",
    "gpucomm.model.collectives.busbw_bytes_per_s", "gpucomm.model.validation.summarize",
    "gpucomm.model.planning.training_memory_bytes_per_gpu", "gpucomm.model.hardware.links.get_link",
    "gpucomm.model.hardware.pcie.get_pcie_gen", "gpucomm.model.hardware.pcie.get_host_hop",
    "gpucomm.model.hardware.pcie.get_inter_socket_link", "gpucomm.model.hardware.pcie.PCIeGen.bw_bytes_per_s",
    "gpucomm.model.hardware.gpus.get_gpu", "gpucomm.model.hardware.nvswitch.get_nvswitch", "gpucomm.model.hardware.nvswitch.get_system",
    "gpucomm.model.hardware.network.get_network",
)
RETURNS_ONLY = ("gpucomm.model.hardware.links.link_keys", "gpucomm.model.hardware.calibration.all_parameters",
                "gpucomm.model.validation.validate")
RAISES_REQUIRED = ("gpucomm.model.validation.validate", "gpucomm.model.hardware.pcie.PCIeGen.bw_bytes_per_s",
                   "gpucomm.model.cost.alpha_beta_time_s", "gpucomm.model.tp.layer_params")

DELEGATION = re.compile(r"See :(func|class):`")


def has_section(doc: str, name: str) -> bool:
    """Whether the cleaned docstring has a numpydoc section ``name`` (title line, then a dashed line)."""
    return re.search(rf"^{name}\n-{{{len(name)}}}[ \t]*$", doc, re.M) is not None


def public_functions(module):
    """(qualified name, function) of every public function and public-class method defined in ``module``."""
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            yield f"{module.__name__}.{name}", obj
        elif inspect.isclass(obj):
            for attr, member in vars(obj).items():  # properties and dataclass dunders are not functions here
                if not attr.startswith("_") and inspect.isfunction(member):
                    yield f"{module.__name__}.{name}.{attr}", member


def takes_parameters(func) -> bool:
    return any(name != "self" for name in inspect.signature(func).parameters)


def returns_value(func) -> bool:
    """From the return annotation; without one, from a ``return <value>`` in the function's own body."""
    annotation = inspect.signature(func).return_annotation
    if annotation is not inspect.Signature.empty:
        return annotation not in (None, "None")
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    body = tree.body[0]

    def walk(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, ast.Return) and child.value is not None:
                return True
            if walk(child):
                return True
        return False

    return walk(body)


def problems(qualname: str, func) -> list[str]:
    """What the docstring of ``func`` lacks under the rules above (empty: it passes)."""
    doc = inspect.getdoc(func)
    if not doc:
        return [f"{qualname}: no docstring"]
    out = []
    if (takes_parameters(func) and not has_section(doc, "Parameters") and not DELEGATION.search(doc)
            and qualname not in ALLOWED_WITHOUT_PARAMETERS):
        out.append(f"{qualname}: no Parameters section")
    if returns_value(func) and not has_section(doc, "Returns") and qualname not in ALLOWED_WITHOUT_RETURNS:
        out.append(f"{qualname}: no Returns section")
    return out


ALL = {qualname: func for module in MODULES
       for qualname, func in public_functions(importlib.import_module(module))}


def test_walk_finds_the_functions():
    # the walk is not vacuous: it sees every function this test names, methods included, in every model module
    missing = [q for q in (*REQUIRED, *RETURNS_ONLY) if q not in ALL]
    assert not missing, missing
    assert len(ALL) >= 130
    src = Path(gpucomm.model.__file__).parents[2]
    on_disk = {(p.parent if p.name == "__init__.py" else p.with_suffix("")).relative_to(src).as_posix().replace("/", ".")
               for p in Path(gpucomm.model.__file__).parent.rglob("*.py")}
    public_on_disk = {name for name in on_disk if not any(part.startswith("_") for part in name.split("."))}
    assert public_on_disk == set(MODULES), sorted(public_on_disk ^ set(MODULES))
    assert not set(ALLOWED_WITHOUT_PARAMETERS) - set(ALL) and not set(ALLOWED_WITHOUT_RETURNS) - set(ALL)


@pytest.mark.parametrize("qualname", sorted(ALL))
def test_public_function_docstring(qualname):
    assert problems(qualname, ALL[qualname]) == []


@pytest.mark.parametrize("qualname", REQUIRED)
def test_completed_functions_keep_both_sections(qualname):
    doc = inspect.getdoc(ALL[qualname])
    assert has_section(doc, "Parameters"), f"{qualname} lost its Parameters section"
    assert has_section(doc, "Returns"), f"{qualname} lost its Returns section"


@pytest.mark.parametrize("qualname", RETURNS_ONLY)
def test_no_argument_functions_keep_returns(qualname):
    assert has_section(inspect.getdoc(ALL[qualname]), "Returns")


@pytest.mark.parametrize("qualname", RAISES_REQUIRED)
def test_raises_sections(qualname):
    assert has_section(inspect.getdoc(ALL[qualname]), "Raises")


def test_alpha_beta_cites_hockney():
    doc = inspect.getdoc(ALL["gpucomm.model.cost.alpha_beta_time_s"])
    assert "Hockney" in doc and "Parallel" in doc and "1994" in doc


def test_rules_catch_missing_sections():
    # the checker itself: a docstring without the sections fails, one with them passes, delegation is honoured
    def bare(x: int) -> int:
        """Summary only."""
        return x

    def complete(x: int) -> int:
        """Summary.

        Parameters
        ----------
        x : int
            A number.

        Returns
        -------
        int
            The same number.
        """
        return x

    def delegating(x: int) -> None:
        """See :func:`complete`."""

    def unannotated(x):
        """Summary.

        Parameters
        ----------
        x : int
            A number.
        """
        return x

    def undocumented():
        return 1

    assert problems("bare", bare) == ["bare: no Parameters section", "bare: no Returns section"]
    assert problems("complete", complete) == []
    assert problems("delegating", delegating) == []
    assert problems("unannotated", unannotated) == ["unannotated: no Returns section"]
    assert problems("undocumented", undocumented) == ["undocumented: no docstring"]
    # a section title needs its dashed underline: prose mentioning "Parameters" does not count
    assert not has_section("Parameters are described elsewhere.", "Parameters")
