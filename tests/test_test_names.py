"""No test module defines a test (or class) twice: the second definition replaces the first, which then never runs.

ruff's F811 (redefinition) is off for tests (pyproject.toml: fixtures are imported, then named as test parameters), so
this check stands in for it. It found a parametrized fold test in tests/model/test_calibration.py hidden this way by a
later test of the same name.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

TESTS = Path(__file__).parent


def redefined(source: str) -> list[str]:
    """Names defined more than once by ``def``/``class`` at a module's top level, or in one class body."""
    tree = ast.parse(source)
    scopes = [tree.body] + [n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    found = []
    for body in scopes:
        names = Counter(n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
        found += sorted(name for name, count in names.items() if count > 1)
    return found


def test_the_check_finds_a_hidden_test():
    assert redefined("def test_a(): pass\ndef test_b(): pass\ndef test_a(x): pass\n") == ["test_a"]
    assert redefined("class TestX:\n    def test_a(self): pass\n    def test_a(self): pass\n") == ["test_a"]
    assert redefined("def test_a(): pass\nclass T:\n    def test_a(self): pass\n") == []


@pytest.mark.parametrize("path", sorted(TESTS.rglob("test_*.py")), ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_is_defined_twice(path):
    assert redefined(path.read_text()) == [], path
