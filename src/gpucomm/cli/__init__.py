"""The ``gpucomm`` command: cost calculator, TP breakdown, validation, and (with torch) benchmarks.

Examples::

    gpucomm cost all_reduce --link nvlink3 --gpus 4 --size 64MiB
    gpucomm cost all_reduce --link pcie4 --no-p2p --gpus 4 --size 64MiB --json
    gpucomm tp --model llama-3-70b --tp 4 --tokens 4096 --link nvlink3
    gpucomm bench --ranks 2 -b 8 -e 64M

``gpucomm VERB``, ``python -m gpucomm VERB`` and ``torchrun ... -m gpucomm bench`` all run
:func:`main`.

One module per verb
-------------------
Each verb lives in ``gpucomm/cli/<verb>.py`` and exposes the same two functions:

``register(subparsers) -> None``
    Adds the verb's parser with ``subparsers.add_parser("<verb>", help=...)``, declares its
    flags (argument types from :mod:`gpucomm.cli.common`: :func:`~gpucomm.cli.common.int_arg`,
    :func:`~gpucomm.cli.common.size_arg`), and ends with ``parser.set_defaults(func=run)``.
``run(args) -> int``
    Does the work and returns the exit status: 0 on success, 1 when a measurement found wrong
    results, 130/143 when interrupted. On bad input it raises :class:`gpucomm.GpucommError`
    with one line saying what was wrong and what was expected; :func:`main` prints it as
    ``gpucomm <verb>: error: ...`` and returns 2. Output goes through
    :func:`~gpucomm.cli.common.print_json` (``--json``: one JSON object per line) and
    :func:`~gpucomm.cli.common.print_table` (a rich table); other messages on stderr through
    :func:`~gpucomm.cli.common.print_error`.

Importing a verb module must stay light, because ``gpucomm --help`` and every other verb
import it to build the parser: at module level only the standard library, :mod:`gpucomm.model`,
light :mod:`gpucomm.measure` modules (no torch at their top) and :mod:`gpucomm.cli.common`.
torch, plotly, pandas and numpy are imported inside ``run``; a verb that needs torch calls
:func:`~gpucomm.cli.common.require_torch` first, so a model-only install gets one line instead
of a traceback. ``tests/test_layering.py`` and ``tests/cli`` check that ``gpucomm cost`` loads
none of them.

To add a verb: write ``gpucomm/cli/<verb>.py`` with ``register`` and ``run`` as above, add
``"<verb>"`` to :data:`VERBS` (the order there is the order ``gpucomm --help`` lists them), and
test it through :func:`main` in ``tests/cli/test_<verb>.py``
(``main(["<verb>", ...])`` returns the exit status; ``capsys`` holds the output).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys

from gpucomm import GpucommError, __version__
from gpucomm.cli.common import OneLineErrorParser, print_error

__all__ = ["VERBS", "build_parser", "main"]

VERBS = ("cost", "tp", "validate", "parse", "diagnose", "fit", "copybw", "bench", "doctor")
"""The verbs, each a module ``gpucomm.cli.<verb>``, in the order ``gpucomm --help`` lists them."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``gpucomm`` command: one subparser per verb of :data:`VERBS`.

    Each verb module is imported here and its ``register`` called; the modules import nothing
    heavy at their top, so building the parser loads neither torch nor plotly.
    """
    parser = OneLineErrorParser(prog="gpucomm",
                                description="How GPUs talk to each other: collective cost, TP communication, benchmarks.")
    parser.add_argument("--version", action="version", version=f"gpucomm {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=OneLineErrorParser)
    for verb in VERBS:
        importlib.import_module(f"gpucomm.cli.{verb}").register(subparsers)
    return parser


def _attach_negative_values(argv: list[str]) -> list[str]:
    """Turn ``--size -5MiB`` into ``--size=-5MiB`` so the value reaches validation.

    argparse takes ``-5MiB`` for an option and answers "expected one argument";
    the user should instead hear that the size must be positive.
    """
    out: list[str] = []
    for token in argv:
        if out and out[-1].startswith("--") and "=" not in out[-1] and re.match(r"^-[0-9.]", token):
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gpucomm`` command.

    Parameters
    ----------
    argv : list of str or None
        The arguments after ``gpucomm`` (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: the verb's (0 on success), 2 on a bad flag or a
        :class:`gpucomm.GpucommError` (one line on stderr), 0 after ``--help``/``--version``
        and when the reader of a pipe left early (``gpucomm ... | head``).
    """
    typed = sys.argv[1:] if argv is None else list(argv)
    try:
        args = build_parser().parse_args(_attach_negative_values(typed))
    except SystemExit as exc:  # --help, --version (0) or a bad flag (2, its one line already printed)
        return exc.code if isinstance(exc.code, int) else 0
    args.argv = list(sys.argv) if argv is None else ["gpucomm", *typed]  # recorded in results files
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `gpucomm ... | head`: the reader left, nothing to report
        return 0
    except GpucommError as exc:
        return print_error(args.command, exc)
