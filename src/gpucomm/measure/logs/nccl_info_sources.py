"""The public pages the findings of :mod:`gpucomm.measure.logs.nccl_info_checks` cite for their fixes.

NCCL's user guide is cited at the 2.26.2 archive (the troubleshooting section with stable anchors) and
its environment page at the current release.
"""

from __future__ import annotations

DOCS = "https://docs.nvidia.com/deeplearning/nccl/archives/nccl_2262/user-guide/docs"
ENV_DOCS = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
SRC_ACS = f"{DOCS}/troubleshooting.html#pci-access-control-services-acs"
SRC_ERRORS = f"{DOCS}/troubleshooting.html#errors"
SRC_NETWORK = f"{DOCS}/troubleshooting.html#networking-issues"
