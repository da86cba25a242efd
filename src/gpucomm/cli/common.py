"""Pieces shared by the ``gpucomm`` subcommands: one-line argparse errors and typed arguments."""

from __future__ import annotations

import argparse

from gpucomm import GpucommError
from gpucomm.model.units import parse_size


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line (no usage dump), exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")


def int_arg(name: str, minimum: int):
    """An argparse ``type`` accepting integers >= ``minimum``, with an error that names the value and the range."""
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
    """An argparse ``type`` for message sizes (``64MiB``, ``1GB``, ``8``), via :func:`gpucomm.model.units.parse_size`."""
    try:
        return parse_size(text)
    except GpucommError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
