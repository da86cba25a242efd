"""NVLS buffer memory (``gpucomm.model.nvls_memory``): NCCL's formula and its logged value."""

from __future__ import annotations

import pytest

from gpucomm import GpucommError
from gpucomm.model.nvls_memory import NCCL_STEPS, NVLS_CHUNK_BYTES, nvls_buffer_bytes, nvls_channels


def test_eight_hopper_gpus_match_nccls_log_line():
    # NCCL INFO on 8x H100 (NCCL 2.2x): "nHeads 8 nvlsRanks 8 buffSize 1048576 nvlsPerRankSize 33554432
    # nvlsTotalSize 268435456"
    assert NVLS_CHUNK_BYTES * NCCL_STEPS == 1048576
    assert nvls_buffer_bytes(90, 8) == 268435456
    assert nvls_buffer_bytes(90, 8) // 8 == 33554432


def test_grows_with_gpus_channels_and_chunk():
    base = nvls_buffer_bytes(90, 4)
    assert nvls_buffer_bytes(90, 8) == 2 * base
    assert nvls_buffer_bytes(100, 4) == base * 24 // 16
    assert nvls_buffer_bytes(90, 4, chunk_bytes=NVLS_CHUNK_BYTES // 2) == base // 2
    assert nvls_buffer_bytes(90, 4, channels=8) == base // 2


def test_channel_defaults():
    assert (nvls_channels(90), nvls_channels(100), nvls_channels(100, num_nodes=4)) == (16, 24, 32)


@pytest.mark.parametrize("args", [(80, 8), (90, 1), (90, 33)])
def test_out_of_range_is_refused(args):
    with pytest.raises(GpucommError):
        nvls_buffer_bytes(*args)
