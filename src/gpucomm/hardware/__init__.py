"""The hardware catalog: links (per-GPU bandwidth, per direction) with a source for every number.

Use :func:`get_link` to look an entry up by key (``"nvlink3"``, ``"pcie4"``...), and
:data:`LINKS` to list them. Calibration factors (effective vs nominal bandwidth,
protocol latencies) live in :mod:`gpucomm.hardware.calibration`, each with its source.
"""

from gpucomm.hardware.links import LINKS, Link, get_link, link_keys

__all__ = ["LINKS", "Link", "get_link", "link_keys"]
