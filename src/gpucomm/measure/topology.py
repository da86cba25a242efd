"""Read ``nvidia-smi topo -m``: the parser lives in :mod:`gpucomm.model.topology_text` (pure text, standard library),
so that the model can build a fabric from a file (``gpucomm cost --topo``); the measure layer keeps its old names.
"""

from __future__ import annotations

from gpucomm.model.topology_text import (
    ACCEPTED_CODES,
    DGX1_P100_TOPO,
    DGX1_P100_TOPO_SOURCE,
    TOPO_CODES,
    TopoCode,
    TopoMatrix,
    describe_cell,
    parse_topo_matrix,
)

__all__ = ["ACCEPTED_CODES", "DGX1_P100_TOPO", "DGX1_P100_TOPO_SOURCE", "TOPO_CODES", "TopoCode", "TopoMatrix",
           "describe_cell", "parse_topo_matrix"]
