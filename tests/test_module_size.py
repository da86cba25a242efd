"""The measurement layer stays in small modules of short functions, checked from the package tree itself.

Every module under ``src/gpucomm/measure`` has at most :data:`MAX_MODULE_LINES` lines, and every function
(methods and nested functions included) at most :data:`MAX_BODY_LINES` lines of body: from its first
statement after the docstring to its last line. A longer one is split along its seams (a module into a
package of named parts, a function into named steps). Files are found by walking the folder, so a new
module is checked without being listed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gpucomm

MEASURE = Path(gpucomm.__file__).parent / "measure"
MAX_MODULE_LINES = 700
MAX_BODY_LINES = 80

def module_lines(source: str) -> int:
    """Lines of a module's text (a last line without a newline counts)."""
    return len(source.splitlines())


def body_lines(func: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function's body, from its first statement after the docstring to its last line."""
    body = func.body
    has_doc = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)
    first = body[1] if has_doc and len(body) > 1 else body[0]
    return func.end_lineno - first.lineno + 1


def long_functions(source: str, limit: int = MAX_BODY_LINES) -> list[str]:
    """``name (n lines, line k)`` of every function in ``source`` whose body is over ``limit`` lines."""
    return [f"{node.name} ({body_lines(node)} lines, line {node.lineno})" for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and body_lines(node) > limit]


def _modules() -> list:
    return [pytest.param(path, id=path.relative_to(MEASURE).as_posix()) for path in sorted(MEASURE.rglob("*.py"))]


MODULES = _modules()


def test_the_walk_finds_the_measure_modules():
    names = {p.id for p in MODULES}
    assert {"harness.py", "runner.py", "tp_layer.py", "doctor/run.py", "logs/nccl_info.py"} <= names, sorted(names)


def test_the_measures_count_what_they_say():
    # a function of 81 body lines after its docstring is caught, one of 80 is not; a module over the limit is caught
    def source(n: int) -> str:
        return "def f():\n    '''Doc.\n\n    More.\n    '''\n" + "    x = 1\n" * n

    assert long_functions(source(81)) == ["f (81 lines, line 1)"] and long_functions(source(80)) == []
    nested = "class A:\n    def m(self):\n        def inner():\n" + "            y = 2\n" * 81
    assert [s.split(" (")[0] for s in long_functions(nested)] == ["m", "inner"]
    assert module_lines("a = 1\n" * 701) == 701 > MAX_MODULE_LINES


@pytest.mark.parametrize("path", MODULES)
def test_module_is_small(path):
    lines = module_lines(path.read_text(encoding="utf-8"))
    assert lines <= MAX_MODULE_LINES, f"{path.relative_to(MEASURE)} has {lines} lines: split it along its seams"


@pytest.mark.parametrize("path", MODULES)
def test_functions_are_short(path):
    long = long_functions(path.read_text(encoding="utf-8"))
    assert not long, f"{path.relative_to(MEASURE)}: bodies over {MAX_BODY_LINES} lines: {', '.join(long)}"
