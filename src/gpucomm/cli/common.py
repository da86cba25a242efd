"""What every ``gpucomm`` verb shares: the parser class, argument types and the printers.

One definition of each, so every verb reads its flags and reports the same way:

- :class:`OneLineErrorParser`: a bad flag is one line on stderr, exit status 2;
- :func:`int_arg` (integers in a range) and :func:`size_arg` (message sizes): argparse types;
- :func:`mesh_size`: ``--mesh-size`` of ``cost`` and ``tp``, refused where no mesh is asked for;
- :func:`print_error`: ``gpucomm VERB: error: ...`` on one line of stderr;
- :func:`require_torch`: one clear line where a measuring verb runs without PyTorch;
- :func:`print_json` and :func:`print_table`: the ``--json`` object and the rich table.

This module imports neither torch nor plotly; rich is imported when a table is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence

from gpucomm import GpucommError
from gpucomm.model.units import parse_size

__all__ = ["OneLineErrorParser", "int_arg", "size_arg", "mesh_size", "one_line", "print_error", "require_torch",
           "print_json", "print_table"]


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line (no usage dump), exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")


def int_arg(name: str, minimum: int):
    """An argparse ``type`` accepting integers >= ``minimum``.

    Parameters
    ----------
    name : str
        How the error names the value, e.g. ``"number of GPUs"`` or ``"--gpus"``.
    minimum : int
        The smallest accepted value.

    Returns
    -------
    callable
        ``str -> int``; raises :class:`argparse.ArgumentTypeError` naming the value and the range.

    Examples
    --------
    >>> int_arg("number of GPUs", 2)("8")
    8
    >>> int_arg("number of GPUs", 2)("1")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: number of GPUs 1 is out of range: expected an integer >= 2
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {text!r} is not an integer: expected an integer >= {minimum}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{name} {value} is out of range: expected an integer >= {minimum}")
        return value
    return parse


def size_arg(text: str) -> int:
    """An argparse ``type`` for message sizes (``64MiB``, ``1GB``, ``8``), in bytes.

    Parsed by :func:`gpucomm.model.units.parse_size`; its error becomes the argparse error.

    Examples
    --------
    >>> size_arg("64MiB")
    67108864
    """
    try:
        return parse_size(text)
    except GpucommError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def one_line(text: object) -> str:
    """``text`` with every run of whitespace (newlines included) made one space.

    Examples
    --------
    >>> one_line("bad row\\n  at line 3")
    'bad row at line 3'
    """
    return " ".join(str(text).split())


def print_error(verb: str, message: object, status: int = 2) -> int:
    """Print ``gpucomm VERB: error: MESSAGE`` as one line on stderr (as argparse words its own errors).

    Parameters
    ----------
    verb : str
        The verb that failed (``cost``, ``bench``...).
    message : object
        What went wrong and what was expected; newlines are folded into spaces.
    status : int
        The exit status to return (default 2: bad input).

    Returns
    -------
    int
        ``status``, so a verb can ``return print_error(...)``.
    """
    print(f"gpucomm {verb}: error: {one_line(message)}", file=sys.stderr, flush=True)  # flushed: ranks interleave
    return status


def require_torch(what: str) -> None:
    """Import torch, or say in one line that ``what`` needs it.

    Parameters
    ----------
    what : str
        What needs torch, e.g. ``"copy bandwidth"``; it starts the message.

    Raises
    ------
    GpucommError
        ``WHAT needs PyTorch: pip install torch`` where torch cannot be imported.
    """
    import importlib

    try:
        importlib.import_module("torch")
    except ImportError:
        raise GpucommError(f"{what} needs PyTorch: pip install torch") from None


def print_json(obj: object) -> None:
    """Print ``obj`` as one line of JSON (the ``--json`` output of every verb)."""
    print(json.dumps(obj))


def print_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[str]], *, right_aligned: Iterable[str] = (),
                width: int = 100, note: str | None = None) -> None:
    """Print one rich table (bold header), and optionally a note under it.

    Parameters
    ----------
    title : str
        Printed above the table.
    columns : sequence of str
        Column titles.
    rows : iterable of sequences of str
        One cell per column.
    right_aligned : iterable of str
        Columns whose cells are right-aligned (numbers); the others are left-aligned.
    width : int
        Characters per line: the table wraps its cells to fit.
    note : str or None
        A line printed under the table, wrapped to ``width``.
    """
    from rich.console import Console
    from rich.table import Table

    right = set(right_aligned)
    table = Table(title=title, show_header=True, header_style="bold")
    for column in columns:
        table.add_column(column, justify="right" if column in right else "left")
    for row in rows:
        table.add_row(*row)
    console = Console(width=width)
    # rich answers a closed pipe (`gpucomm validate | head`) with SystemExit(1); main() treats it as the reader leaving
    console.on_broken_pipe = _raise_broken_pipe
    console.print(table)
    if note:
        console.print(note)


def _raise_broken_pipe() -> None:
    raise BrokenPipeError


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the flags that say how the GPUs of one node are connected, shared by ``cost`` and ``tp``.

    ``--no-p2p``, ``--topology``, ``--mesh-size`` and ``--inter-socket``: the parts of a
    :class:`gpucomm.model.fabric.Fabric` that a link key alone does not give.
    """
    from gpucomm.model.hardware import INTER_SOCKET_LINKS

    parser.add_argument("--no-p2p", action="store_true", help="P2P disabled: stage through host memory (PCIe links)")
    parser.add_argument("--topology", default="switch",
                        help="switch (NVSwitch or PCIe tree, default), mesh (point-to-point) or pairs (NVLink bridges)")
    parser.add_argument("--mesh-size", type=int_arg("mesh size", 2), default=None,
                        help="with --topology mesh: GPUs wired in the mesh (default 8)")
    parser.add_argument("--inter-socket", default=None,
                        help=f"GPUs under both sockets (SYS in nvidia-smi topo -m): the socket link, one of "
                             f"{', '.join(INTER_SOCKET_LINKS)}")


def mesh_size(args: argparse.Namespace) -> int:
    """``--mesh-size`` of ``cost`` and ``tp``: 8 by default, refused without ``--topology mesh``.

    A mesh size given for a switch or bridged pairs would be silently ignored, so it is an error.

    Raises
    ------
    GpucommError
        ``--mesh-size`` given with another topology.
    """
    if args.mesh_size is None:
        return 8
    if args.topology != "mesh":
        raise GpucommError(f"--mesh-size {args.mesh_size} only applies to a point-to-point mesh: expected --topology mesh")
    return args.mesh_size
