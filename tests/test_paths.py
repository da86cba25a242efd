"""Every path and dotted module name that a docstring, comment, page or the Makefile names still exists.

Files move (``tests/test_book.py`` became ``tests/book/test_book.py``; ``gpucomm/data`` became
``gpucomm/model/data``) and the text that names them goes stale. This scans the project's own text files for repo
paths (``src/gpucomm/...``, ``tests/...``, ``book/...``, ...) and ``gpucomm.x.y`` names, and fails on any that no
longer resolve: a path must exist (as written, under ``src/``, or as a page source for a ``.html`` or
extension-less page name), a dotted name must import (a module, then attributes, dataclass fields included).
``gpucomm.<verb>`` names (``gpucomm.bench``, ``gpucomm.parse``) are the tools recorded in results files, not modules.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path

from gpucomm.cli import VERBS

ROOT = Path(__file__).parents[1]
SKIP_PARTS = {".venv", "_build", ".git", "assets", "node_modules", "__pycache__", ".pytest_cache", ".hypothesis",
              ".ipynb_checkpoints"}
SUFFIXES = {".py", ".md", ".sh", ".cfg", ".toml", ".yml", ".js", ".css", ".txt"}
PATH = re.compile(r"(?<![\w/.<-])((?:src/gpucomm|gpucomm|tests|book|notebooks|labs|scripts|benchmarks|\.ci)/[\w./-]*\w)"
                  r"(?![\w<{*])")
DOTTED = re.compile(r"(?<![\w./-])(gpucomm(?:\.[A-Za-z_]\w*)+)")


def text_files() -> list[Path]:
    found = [p for p in ROOT.rglob("*") if p.is_file() and (p.suffix in SUFFIXES or p.name == "Makefile")]
    found = [p for p in found if not SKIP_PARTS & set(p.relative_to(ROOT).parts[:-1]) and not p.parent.name.endswith(".egg-info")
             and p.name != "external_links.txt" and p != Path(__file__)]  # this file names stale paths on purpose
    # data/ folders hold published logs and tables, quoted as they were written: only their READMEs are ours
    return [p for p in found if "data" not in p.relative_to(ROOT).parts[:-1] or p.name == "README.md"]


def path_exists(path: str) -> bool:
    bases = [ROOT / path, ROOT / "src" / path]
    stems = [b.with_suffix("") for b in bases if b.suffix == ".html"] + [b for b in bases if not b.suffix]
    if any(b.exists() for b in bases) or any(s.with_suffix(ext).exists() for s in stems for ext in (".md", ".ipynb")):
        return True
    # a prefix a test matches names against ("gpucomm/measure/harness" for harness.py): some file starts with it
    return any(b.parent.is_dir() and any(c.name.startswith(b.name) for c in b.parent.iterdir()) for b in bases)


def name_resolves(name: str) -> bool:
    parts = name.split(".")
    if parts[1] in VERBS:  # a tool id: "gpucomm.bench", "gpucomm.bench.copy"
        return True
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            fields = {f.name for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else set()
            if attr in fields:
                return attr == parts[-1]
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def stale(files) -> list[str]:
    out = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for pattern, ok in ((PATH, path_exists), (DOTTED, name_resolves)):
            for match in pattern.finditer(text):
                if not ok(match.group(1)):
                    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                    out.append(f"{where}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(1)}")
    return out


def test_every_named_path_and_module_exists():
    files = text_files()
    assert len(files) > 100 and ROOT / "Makefile" in files
    assert stale(files) == []


def test_the_scan_finds_a_stale_name(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("See tests/test_book.py, src/gpucomm/model/cost.py, book/intro, book/intro.html, src/gpucomm/measure/harn,\n"
                    "gpucomm.model.cost.collective_cost, gpucomm.viz.widgets.training.build, gpucomm.bench.copy,\n"
                    "gpucomm.model.nccl_tuner.Comm.num_channels and gpucomm.model.hardware.calibration.NO_SUCH.\n")
    found = [line.split(": ", 1)[1] for line in stale([page])]
    assert found == ["tests/test_book.py", "gpucomm.viz.widgets.training.build",
                     "gpucomm.model.hardware.calibration.NO_SUCH"]
