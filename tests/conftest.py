"""Fixtures shared by the test folders."""

from __future__ import annotations

import pytest

from gpucomm.measure.logs.nccl_tests import bundled_log_text


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
