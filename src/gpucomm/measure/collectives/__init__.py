"""The torch side of each collective: buffers, the torch.distributed call, the exact correctness check.

One module per measured collective, named as the collective (``all_reduce.py``), defining one
:class:`~gpucomm.measure.spec.CollectiveSpec` named as the collective in capitals (``ALL_REDUCE``).
Everything else about a collective (nccl-tests binary, size convention, whether it reduces, the
ranks it needs, the busbw factor) is its file in :mod:`gpucomm.model.collectives`. What the
benchmark measures is therefore the collectives that have a module here: :data:`MEASURED`, from
which ``gpucomm.measure.config`` and ``gpucomm.measure.spec`` derive their registries. Measuring one
more collective is one more module here (and its reference in the benchmark's tests).

Listing this package imports neither torch nor the modules themselves.
"""

from __future__ import annotations

import pkgutil

from gpucomm.model.collectives import COLLECTIVES

_MODULES = {info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")}

MEASURED: tuple[str, ...] = tuple(c for c in COLLECTIVES if c in _MODULES)
"""The collectives with a module in this package, in :data:`gpucomm.model.collectives.COLLECTIVES` order."""

if _MODULES - set(MEASURED):
    raise ImportError(f"{__name__}: modules {sorted(_MODULES - set(MEASURED))} are not collectives: expected names "
                      f"of gpucomm.model.collectives ({', '.join(COLLECTIVES)})")


def spec_module(collective: str) -> tuple[str, str]:
    """Where the spec of a measured collective lives.

    Parameters
    ----------
    collective : str
        One of :data:`MEASURED`.

    Returns
    -------
    (str, str)
        The module's import name and the spec's attribute name: ``("gpucomm.measure.collectives.all_reduce",
        "ALL_REDUCE")``.
    """
    return f"{__name__}.{collective}", collective.upper()
