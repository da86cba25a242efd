#!/usr/bin/env python
"""Re-run notebooks in place so that their committed outputs match the package (what nbval compares).

    .venv/bin/python scripts/execute_notebooks.py notebooks/*.ipynb

Each notebook runs in its own folder with the ``python3`` kernel of this interpreter. Cells tagged
``skip-execution`` (the live ipywidgets calculators: their state would inline megabytes of
widget JavaScript into the page) are skipped and keep no output; no widget state is stored;
no per-cell timing metadata is written, so a re-run that changes no number changes no byte.
Each figure is stored once (plotly's JSON: gpucomm.viz.figures.render) and written on one line, not
one number per line as nbformat's indented JSON would: the notebooks stay small (1 MB in all,
tests/viz/test_render.py) and any Jupyter reads them the same.
Then check: ``.venv/bin/python -m pytest --nbval notebooks/ --nbval-sanitize-with tests/nbval_sanitize.cfg``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

MAX_NOTEBOOK_BYTES = 1_000_000  # committed outputs stay small: no inlined plotly.js, no widget state


def execute(path: Path, timeout_s: int = 300) -> int:
    """Execute one notebook in place; return its size in bytes."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.metadata.pop("execution", None)
    client = NotebookClient(nb, timeout=timeout_s, kernel_name="python3", store_widget_state=False,
                            record_timing=False, resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    nb.metadata.pop("widgets", None)
    nbformat.validate(nb)
    path.write_text(compact_figures(nbformat.writes(nb)), encoding="utf-8")
    return path.stat().st_size


PLOTLY_JSON = "application/vnd.plotly.v1+json"


def compact_figures(text: str) -> str:
    """``text`` (a notebook as nbformat writes it: sorted keys, indent 1) with each plotly figure on one line."""
    nb = json.loads(text)
    figures = []
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if PLOTLY_JSON in data:
                figures.append(data[PLOTLY_JSON])
                data[PLOTLY_JSON] = f"@@figure {len(figures) - 1}@@"
    out = json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    for i, figure in enumerate(figures):
        out = out.replace(json.dumps(f"@@figure {i}@@"),
                          json.dumps(figure, sort_keys=True, separators=(",", ":"), ensure_ascii=False), 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell (default 300)")
    args = parser.parse_args(argv)
    too_big = []
    for path in args.notebooks:
        size = execute(path, args.timeout)
        print(f"{path}: {size / 1e3:.0f} kB")
        if size > MAX_NOTEBOOK_BYTES:
            too_big.append(path)
    if too_big:
        print(f"over {MAX_NOTEBOOK_BYTES / 1e6:g} MB: {', '.join(map(str, too_big))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
