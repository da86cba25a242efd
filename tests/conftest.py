"""Fixtures shared by the test folders."""

from __future__ import annotations

import pytest

from gpucomm.measure.logs.nccl_tests import bundled_log_text


@pytest.fixture
def shapeless_log() -> str:
    """A log that says neither its collective nor its rank count: C28's old-layout rows (no command line, no device
    list, no redop column) with the size column set to count x 4 B, so busbw = algbw = size / time fits factor 1
    (all_reduce on 2 ranks, broadcast, reduce or send_recv on any count) and size / count gives no rank count."""
    lines = []
    for line in bundled_log_text("C28").splitlines():
        tokens = line.split()
        if not line.startswith("#") and len(tokens) > 2 and tokens[0].isdigit():
            size = str(int(tokens[1]) * 4)
            line = line.replace(tokens[0], size.rjust(len(tokens[0])), 1)
        lines.append(line)
    return "\n".join(lines) + "\n"
