"""Element types: one table of every type a collective can move, with its size and its spellings.

Three vocabularies name the same types, and each part of the package reads its own:

* the **torch name** (``torch.float32``, ``torch.bfloat16``): the canonical name here, the one the
  benchmark records;
* the **short name** ML frameworks and papers use (``fp32``, ``bf16``, ``fp8``): the TP and training
  calculators take it;
* the names **nccl-tests prints** in its ``type`` column (``float``, ``half``, ``bfloat16``,
  ``f8e4m3``; ``test_typenames`` in nccl-tests ``src/common.cu``), and the older NCCL names that
  ``nccl.h`` keeps as aliases in ``ncclDataType_t`` (``char`` = ``int8``, ``int`` = ``int32``).

Every other table of element sizes in the package is a selection of spellings from this one
(:data:`gpucomm.model.tp.DTYPE_BYTES`, ``gpucomm.measure.config.DTYPE_BYTES`` and ``DTYPE_ALIASES``,
``gpucomm.measure.logs.nccl_tests.TYPE_BYTES``), so a size is stated once.

References
----------
IEEE 754-2019 (binary16, binary32, binary64); bfloat16: Kalamkar et al., "A Study of BFLOAT16 for Deep
Learning Training", arXiv:1905.12322; FP8 E4M3 and E5M2: Micikevicius et al., "FP8 Formats for Deep
Learning", arXiv:2209.05433; NCCL ``src/nccl.h.in`` (``ncclDataType_t``); nccl-tests ``src/common.cu``
(``test_typenames``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpucomm import GpucommError

__all__ = ["ElementType", "ELEMENT_TYPES", "BY_SPELLING", "element_type"]


@dataclass(frozen=True)
class ElementType:
    """One element type and every spelling of it.

    Attributes
    ----------
    name : str
        The torch.dtype name (``"float32"``), canonical.
    size_bytes : int
        Bytes per element.
    short : str or None
        The short name ML frameworks use (``"fp32"``, ``"bf16"``), None where there is none.
    nccl_tests : tuple of str
        Names nccl-tests prints in its ``type`` column: the current ``test_typenames`` entry first,
        then older NCCL aliases (``"char"`` for int8).
    aliases : tuple of str
        Further spellings, each with its reason in :data:`ELEMENT_TYPES`.
    """

    name: str
    size_bytes: int
    short: str | None
    nccl_tests: tuple[str, ...]
    aliases: tuple[str, ...] = ()

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every accepted spelling, lower case, the torch name first, each once."""
        names = (self.name, self.short, *self.nccl_tests, *self.aliases)
        return tuple(dict.fromkeys(n for n in names if n is not None))


ELEMENT_TYPES: tuple[ElementType, ...] = (
    ElementType("float32", 4, "fp32", ("float",)),
    ElementType("float64", 8, "fp64", ("double",)),
    ElementType("float16", 2, "fp16", ("half",)),
    ElementType("bfloat16", 2, "bf16", ("bfloat16",)),
    # "fp8" alone means E4M3: the format of weights and activations in FP8 training and inference
    # (arXiv:2209.05433, sec. 3; E5M2 is kept for gradients). Both are one byte.
    ElementType("float8_e4m3fn", 1, "fp8_e4m3", ("f8e4m3",), aliases=("fp8",)),
    ElementType("float8_e5m2", 1, "fp8_e5m2", ("f8e5m2",)),
    ElementType("int8", 1, None, ("int8", "char")),
    ElementType("uint8", 1, None, ("uint8",)),
    ElementType("int32", 4, None, ("int32", "int")),
    ElementType("uint32", 4, None, ("uint32",)),
    ElementType("int64", 8, None, ("int64",)),
    ElementType("uint64", 8, None, ("uint64",)),
)
"""Every element type, floating point first (in the order the benchmark lists them), then integers."""

BY_SPELLING: dict[str, ElementType] = {s: t for t in ELEMENT_TYPES for s in t.spellings}
"""Every spelling of :data:`ELEMENT_TYPES` -> its type (lower case, exact match)."""


def element_type(spelling: str) -> ElementType:
    """The element type a spelling names (exact, lower-case match).

    Parameters
    ----------
    spelling : str
        A spelling of :data:`BY_SPELLING`: torch name, short name or nccl-tests name.

    Returns
    -------
    ElementType
        The entry of :data:`ELEMENT_TYPES`.

    Raises
    ------
    GpucommError
        If no type has that spelling.

    Examples
    --------
    >>> element_type("bf16").name, element_type("half").size_bytes
    ('bfloat16', 2)
    """
    try:
        return BY_SPELLING[spelling]
    except (KeyError, TypeError):
        raise GpucommError(f"unknown element type {spelling!r}: expected one of {', '.join(BY_SPELLING)}") from None
