"""Real ``nvidia-smi topo -m`` outputs bundled with the package, and this machine's own (no torch).

The examples live in ``gpucomm/model/data/topologies/*.txt``: the first line of each is
``# source: <URL>``, then a ``# context`` line, then the command's output verbatim. They let a
page or a lab show what a DGX H100, a DGX-1 or a PCIe server looks like on a machine that has
no GPU. :func:`local_topology_text` runs ``nvidia-smi topo -m`` where it exists.

Parse either with :func:`gpucomm.measure.topology.parse_topo_matrix` (which :func:`read_example_topology`
calls) and draw with :func:`gpucomm.viz.figures.topology.topo_matrix_figure`.
"""

from __future__ import annotations

import shutil
import subprocess

from gpucomm import GpucommError
from gpucomm.measure.topology import TopoMatrix, parse_topo_matrix
from gpucomm.model.measurements import bundled_data

__all__ = ["example_topology_names", "example_topology_file", "example_topology_text", "example_topology_source",
           "example_topology_context", "read_example_topology", "local_topology_text"]


def _folder():
    return bundled_data("topologies")


def example_topology_names() -> list[str]:
    """Names of the bundled examples (file names without ``.txt``), sorted.

    Examples
    --------
    >>> example_topology_names()
    ['dgx1_v100', 'dgx_h100', 'pcie_4gpu_two_sockets']
    """
    return sorted(p.name[:-4] for p in _folder().iterdir() if p.name.endswith(".txt"))


def example_topology_file(name: str) -> str:
    """The whole bundled file: ``# source:`` and ``# context`` lines, then the output.

    Raises
    ------
    GpucommError
        If there is no such example.
    """
    names = example_topology_names()
    if name not in names:
        raise GpucommError(f"unknown example topology {name!r}: expected one of {', '.join(names)}")
    return _folder().joinpath(f"{name}.txt").read_text(encoding="utf-8")


def _split(name: str) -> tuple[dict[str, str], str]:
    lines = example_topology_file(name).splitlines(keepends=True)
    notes: dict[str, str] = {}
    k = 0
    while k < len(lines) and lines[k].startswith("# "):
        key, _, value = lines[k][2:].partition(":")
        notes[key.split(" (")[0].strip()] = value.strip()
        k += 1
    return notes, "".join(lines[k:])


def example_topology_text(name: str) -> str:
    """The ``nvidia-smi topo -m`` output of a bundled example, without the comment lines above it."""
    return _split(name)[1]


def example_topology_source(name: str) -> str:
    """The URL the example was copied from.

    Examples
    --------
    >>> example_topology_source("pcie_4gpu_two_sockets")
    'https://github.com/NVIDIA/nccl/issues/667'
    """
    return _split(name)[0]["source"]


def example_topology_context(name: str) -> str:
    """What the source says about the machine (a summary written when the example was collected)."""
    return _split(name)[0].get("context", "")


def read_example_topology(name: str) -> TopoMatrix:
    """A bundled example, parsed by :func:`gpucomm.measure.topology.parse_topo_matrix`.

    Examples
    --------
    >>> m = read_example_topology("dgx_h100")
    >>> len(m.gpus), sorted(m.gpu_pairs())
    (8, ['NV18'])
    """
    return parse_topo_matrix(example_topology_text(name))


def local_topology_text(timeout_s: float = 20.0) -> str | None:
    """This machine's ``nvidia-smi topo -m`` output, or None where ``nvidia-smi`` is missing or fails.

    Parameters
    ----------
    timeout_s : float
        Seconds to wait for ``nvidia-smi`` (it can hang on a GPU in a bad state).
    """
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "topo", "-m"], capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 and out.stdout.strip() else None
