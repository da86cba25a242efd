"""One table of element types: the TP calculator's, the benchmark's and the log parser's sizes all come from it."""

from __future__ import annotations

import pytest

from gpucomm import GpucommError
from gpucomm.model.dtypes import BY_SPELLING, ELEMENT_TYPES, element_type
from gpucomm.model.tp import DTYPE_BYTES, dtype_bytes


def test_every_spelling_names_one_type():
    spellings = [s for t in ELEMENT_TYPES for s in t.spellings]
    assert len(spellings) == len(set(spellings)) == len(BY_SPELLING)
    assert all(s == s.lower() for s in spellings)
    assert len({t.name for t in ELEMENT_TYPES}) == len(ELEMENT_TYPES)


@pytest.mark.parametrize("spelling,name,size", [
    ("float", "float32", 4), ("fp32", "float32", 4), ("double", "float64", 8), ("half", "float16", 2),
    ("bf16", "bfloat16", 2), ("bfloat16", "bfloat16", 2), ("f8e4m3", "float8_e4m3fn", 1), ("fp8", "float8_e4m3fn", 1),
    ("f8e5m2", "float8_e5m2", 1), ("char", "int8", 1), ("int", "int32", 4), ("uint64", "uint64", 8),
])
def test_spellings_resolve(spelling, name, size):
    assert (element_type(spelling).name, element_type(spelling).size_bytes) == (name, size)


def test_unknown_spelling_is_one_clear_line():
    with pytest.raises(GpucommError, match="^unknown element type 'fp4': expected one of float32, fp32, float, "):
        element_type("fp4")


def test_tp_dtypes_unchanged():
    # Spellings, order (the error message and the calculator's menu list them) and sizes as before the table.
    assert list(DTYPE_BYTES.items()) == [("fp32", 4), ("float32", 4), ("fp16", 2), ("float16", 2), ("bf16", 2),
                                         ("bfloat16", 2), ("fp8", 1)]
    with pytest.raises(GpucommError, match=r"^unknown dtype 'FP16': expected one of fp32, float32, fp16, float16, "
                                           r"bf16, bfloat16, fp8$"):
        dtype_bytes("FP16")
