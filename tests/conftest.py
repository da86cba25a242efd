"""Fixtures shared by the test folders, the test tiers and the hypothesis profiles.

Two tiers (the Makefile's ``make test-fast`` and ``make test``):

* ``procs``: a test that starts a process (a subprocess, a spawned rank) or a torch process group. The marker is
  applied automatically at collection (:func:`pytest_collection_modifyitems`): a test is marked when its source, the
  source of a fixture it uses, or of a function of its own module or of this conftest that it calls (followed
  transitively) names something that starts one (:data:`PROCESS_STARTERS`). ``make test-fast`` runs
  ``-m "not procs and not slow"``; ``make test`` runs everything.
* In the fast tier a guard makes the tier fast by construction: a test the scan missed that starts a process
  anyway (through a package function) is stopped at that moment and skipped with the reason, so the fast tier never
  waits for a process; ``make test`` runs it in full.

Hypothesis profiles: ``fast`` (few examples, the fast tier's default) and ``full`` (``make test``, ``HYPOTHESIS_PROFILE
=full``). A test sets no ``max_examples`` of its own, except a property that needs more cases under ``full`` (the
cost model's invariants, tests/model/test_invariants.py).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import io
import os
import re
import subprocess
import sys
import textwrap
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from gpucomm.measure.logs.nccl_tests import bundled_log_text

# --- hypothesis profiles ---------------------------------------------------------------------------------------

settings.register_profile("fast", max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("full", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


# --- the procs tier ----------------------------------------------------------------------------------------------

PROCESS_STARTERS = (
    "subprocess", "sys.executable", "Popen", "multiprocessing", "init_process_group", "launch_workers",
    "launch_local", "run_sweep", "run_tp_layer", "run_copy_bandwidth", "run_doctor", "torch.distributed.run",
    "gloo_sweep", "run_rank", "metadata_record", "measure_copy_bandwidth", "local_topology_text", "profile_all_reduce",
)
"""Names whose appearance in a test's code (or a helper it calls) marks the test ``procs``: the standard library's
ways to start a process, torch's process group, and the package's entry points that start ranks. A name missing here
is caught at run time by the fast tier's guard, which says which test started a process."""


def _source(obj) -> str:
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        return ""


@cache
def _starts_processes(module_name: str, func_name: str, _seen: frozenset = frozenset()) -> bool:
    import sys

    module = sys.modules.get(module_name)
    func = getattr(module, func_name, None)
    if func is None:
        return False
    text = _source(func)
    if any(name in text for name in PROCESS_STARTERS):
        return True
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    called = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    seen = _seen | {func_name}
    for name in sorted(called - seen):
        target = getattr(module, name, None)
        if inspect.isfunction(target) and target.__module__ in (module_name, __name__):
            if _starts_processes(target.__module__, name, seen):
                return True
    return False


def _item_starts_processes(item) -> bool:
    func = getattr(item, "function", None)
    if func is None:
        return False
    if _starts_processes(func.__module__, func.__name__):
        return True
    for defs in item._fixtureinfo.name2fixturedefs.values():
        for fixturedef in defs:
            fixture = fixturedef.func
            if fixture.__name__ == "_fast_tier_starts_no_process":  # the guard names what it stops
                continue
            if fixture.__module__ and _starts_processes(fixture.__module__, fixture.__name__):
                return True
    return False


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("procs") is None and _item_starts_processes(item):
            item.add_marker(pytest.mark.procs)
    items[:] = _heaviest_files_first(items)


def _heaviest_files_first(items: list) -> list:
    """The items, whole files moved ahead by how long they are likely to run: the labs (notebooks that measure with
    real ranks), then files with a ``procs`` or ``slow`` test, then the rest; each file's items keep their order.

    Why: ``make test`` hands files to its workers in this order (``--dist loadfile``); the labs, collected after
    ``tests``, came last, and a run could end on one worker still running a lab. Long files first is the usual
    remedy (longest job first); with it, the workers of a timed run ended within 13 s of one another.
    """
    rank: dict = {}
    for item in items:
        heavy = 0 if "labs" in item.path.parts and item.path.suffix == ".ipynb" else (
            1 if item.get_closest_marker("procs") or item.get_closest_marker("slow") else 2)
        rank[item.path] = min(rank.get(item.path, 2), heavy)
    return sorted(items, key=lambda item: rank[item.path])


class _ProcessStarted(BaseException):
    """Raised by the fast tier's guard where a process would start (a BaseException: ``except Exception`` in the
    code under test does not swallow it)."""


def _fast_tier(config) -> bool:
    return "not procs" in (config.getoption("markexpr", "") or "")


@pytest.fixture(autouse=True)
def _fast_tier_starts_no_process(request, monkeypatch):
    """In the fast tier (``-m`` excludes ``procs``), stop a test at the moment it would start a process."""
    if not _fast_tier(request.config):
        return
    import multiprocessing.process

    def refuse(*args, **kwargs):
        raise _ProcessStarted(request.node.nodeid)

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    try:
        return (yield)
    except _ProcessStarted:
        pytest.skip(f"{item.nodeid} starts a process that tests/conftest.py's scan did not see (add the entry point "
                    "to PROCESS_STARTERS): runs in make test")


# --- constructed logs --------------------------------------------------------------------------------------------
@pytest.fixture
def rewrite_c28():
    """A function ``rewrite(edit)``: C28's text with the tokens of every result row (11 of them: size, count, type,
    then time, algbw, busbw, error for each half) replaced by ``edit(tokens)``, joined by two spaces. For constructed
    logs made from a real one; they are examples, not measurements."""
    def rewrite(edit) -> str:
        lines = []
        for line in bundled_log_text("C28").splitlines():
            tokens = line.split()
            if not line.startswith("#") and len(tokens) == 11:
                line = "  ".join(edit(tokens))
            lines.append(line)
        return "\n".join(lines) + "\n"
    return rewrite


@pytest.fixture
def shapeless_log(rewrite_c28) -> str:
    """A log that says neither its collective nor its rank count: C28's old-layout rows (no command line, no device
    list, no redop column) with the size column set to count x 4 B, so busbw = algbw = size / time fits factor 1
    (all_reduce on 2 ranks, broadcast, reduce or send_recv on any count) and size / count gives no rank count."""
    return rewrite_c28(lambda t: [str(int(t[1]) * 4), *t[1:]])


# --- the gpucomm command, in this process -----------------------------------------------------------------------

@dataclass
class Ran:
    """What a run of the command left: its exit status and what it printed (as subprocess.CompletedProcess names
    them)."""

    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def gpucomm(monkeypatch):
    """A function ``gpucomm(*args, env=None) -> Ran``: the ``gpucomm`` command run through ``gpucomm.cli.main`` in this
    process (no subprocess: CONTRIBUTING's way to test a verb), with ``env`` added to the environment for the call."""
    from gpucomm.cli import main

    def run(*args: str, env: dict[str, str] | None = None) -> Ran:
        out, err = io.StringIO(), io.StringIO()
        with monkeypatch.context() as patch, redirect_stdout(out), redirect_stderr(err):
            for key, value in (env or {}).items():
                patch.setenv(key, value)
            status = main([str(arg) for arg in args])
        return Ran(status, out.getvalue(), err.getvalue())

    return run


# --- what a fresh interpreter loads: one subprocess for every light-import check ---------------------------------

HEAVY = ("torch", "plotly", "pandas", "ipywidgets", "numpy", "pynvml")
"""Libraries the model layer and the model verbs must not load (CONTRIBUTING: imports point downward)."""

_C04 = "src/gpucomm/model/data/nccl_logs/C04.txt"
_INFO_LOG = "src/gpucomm/model/data/nccl_info_logs/nccl_tests_188.txt"

FRESH_TARGETS: dict[str, tuple] = {
    **{f"verb {verb}": ("import", [f"gpucomm.cli.{verb}"]) for verb in
       ("cost", "tp", "validate", "parse", "diagnose", "fit", "copybw", "bench", "doctor")},
    "parser": ("parse_args", [["bench", "-b", "8", "-e", "1M", "-f", "4", "--ranks", "2"],
                              ["copybw", "-b", "1KiB", "-e", "1MiB", "-f", "2", "-n", "3", "-w", "1", "--out", "x.jsonl"],
                              ["fit", "r.jsonl", "--link", "nvlink4", "--gpus", "8", "--plot", "p.html"]]),
    "cost": ("main", ["cost", "all_reduce", "--link", "nvlink4", "--gpus", "8", "--size", "1MiB"]),
    "cost --json": ("main", ["cost", "all_reduce", "--link", "nvlink4", "--gpus", "8", "--size", "1MiB", "--json"]),
    "tp": ("main", ["tp", "--model", "llama-3-70b", "--tp", "8", "--tokens", "64", "--link", "nvlink4", "--gpu",
                    "h100_sxm5"]),
    "validate --json": ("main", ["validate", "--json"]),
    "--help": ("main", ["--help"]),
    "parse": ("main", ["parse", _C04]),
    "diagnose": ("main", ["diagnose", _INFO_LOG]),
    "bench without torch": ("main without torch", ["bench"]),
    "copybw without torch": ("main without torch", ["copybw"]),
    "model": ("import", "every gpucomm.model module"),
    "topology examples": ("import", ["gpucomm.measure.topology_examples"]),
}
"""What the one fresh interpreter does, each in a forked child of a process that has imported only the standard
library: import modules, parse arguments with gpucomm's parser, or run ``gpucomm.cli.main`` (optionally with torch
made unimportable, as on a model-only install)."""

_FRESH_SCRIPT = r'''
import contextlib, importlib, io, json, os, pkgutil, sys

def run(kind, arg):
    out, err = io.StringIO(), io.StringIO()
    code = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        if kind == "import":
            if arg == "every gpucomm.model module":
                import gpucomm.model
                arg = [m.name for m in pkgutil.walk_packages(gpucomm.model.__path__, "gpucomm.model.")]
            for name in arg:
                importlib.import_module(name)
        elif kind == "parse_args":
            from gpucomm.cli import build_parser
            parser = build_parser()
            print(json.dumps([{k: v if isinstance(v, (int, float, str, type(None), list)) else getattr(v, "__module__", str(v))
                               for k, v in vars(parser.parse_args(argv)).items()} for argv in arg]))
        else:
            if kind == "main without torch":
                sys.modules["torch"] = None  # any import of torch now fails
            from gpucomm.cli import main
            try:
                code = main(arg)
            except SystemExit as exc:
                code = exc.code
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue(), "modules": sorted(sys.modules)}

before = set(sys.modules)
targets = json.load(sys.stdin)
results = {}
for name, (kind, arg) in targets.items():
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            result = run(kind, arg)
            result["modules"] = sorted(set(result["modules"]) - before)
        except BaseException as exc:
            result = {"code": None, "stdout": "", "stderr": repr(exc), "modules": []}
        with os.fdopen(write, "w") as pipe:
            json.dump(result, pipe)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        results[name] = json.load(pipe)
    os.waitpid(pid, 0)
json.dump(results, sys.stdout)
'''


@dataclass
class Fresh:
    """What one target of :data:`FRESH_TARGETS` did in a fresh interpreter."""

    code: int | None
    stdout: str
    stderr: str
    modules: list[str]

    def heavy(self, names=HEAVY) -> list[str]:
        """The top-level packages of ``names`` that the target loaded (empty: it stayed light)."""
        return sorted({m.partition(".")[0] for m in self.modules} & set(names))


@pytest.fixture(scope="session")
def fresh_process() -> dict[str, Fresh]:
    """Every target of :data:`FRESH_TARGETS`, run once per session in one subprocess (a child forked per target
    from an interpreter that has imported nothing but the standard library): ``{name: Fresh}``."""
    import json
    import sys
    from pathlib import Path

    root = Path(__file__).parents[1]
    proc = subprocess.run([sys.executable, "-c", _FRESH_SCRIPT], input=json.dumps(FRESH_TARGETS), capture_output=True,
                          text=True, cwd=root, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return {name: Fresh(**result) for name, result in json.loads(proc.stdout).items()}


# ----------------------------------------------------------------------------------- the book's numbers
# Shared by tests/model/chapters (each chapter module's numbers()) and tests/book/test_claims.py: a page's glue
# references, and a model parameter changed the way a recalibration would, with every memoised model function emptied
# so that the change reaches every number and leaves none behind.
BOOK = Path(__file__).resolve().parents[1] / "book"
_GLUE_REF = re.compile(r"\{glue(?::[a-z]+)?\}`([^`:]+)(?::[^`]*)?`")
_ANSWER_KEY = re.compile(r"^:answer:\s*(\S+)", re.M)


def _page_refs(page: str) -> set[str]:
    text = (BOOK / f"{page}.md").read_text(encoding="utf-8")
    return set(_GLUE_REF.findall(text)) | {a for a in _ANSWER_KEY.findall(text) if not re.fullmatch(r"[0-9.]+", a)}


def clear_model_caches() -> None:
    """Empty every memoised function of :mod:`gpucomm.model` (NCCL's plan per fabric is cached, and reads parameters)."""
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("gpucomm.model"):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


@pytest.fixture
def page_refs():
    """``page_refs(page)``: the glue keys ``book/<page>.md`` reads (its ``{glue:text}`` references, its self-checks'
    ``:answer:`` keys)."""
    return _page_refs


@pytest.fixture
def fresh_model():
    """Caches emptied before and after: a changed parameter must reach every number, and leave none behind."""
    clear_model_caches()
    yield
    clear_model_caches()


@pytest.fixture
def scale_parameter(monkeypatch, fresh_model):
    """``scale_parameter(table, key, factor)``: multiply one calibration parameter by ``factor`` for this test only."""
    def scale(table: dict, key: str, factor: float) -> None:
        monkeypatch.setitem(table, key, dataclasses.replace(table[key], value=table[key].value * factor))
        clear_model_caches()
    return scale
