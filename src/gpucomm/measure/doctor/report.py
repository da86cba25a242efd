"""The doctor's records: one :class:`Check` per verdict, and the :class:`DoctorReport` they are collected in.

:meth:`DoctorReport.as_dict` is ``report.json`` (:data:`SCHEMA_VERSION`); the viz layer draws the
HTML report from that plain data.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import socket
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import gpucomm
from gpucomm import GpucommError

__all__ = ["SCHEMA_VERSION", "STATUSES", "CHECK_ORDER", "Check", "DoctorReport", "worst_status", "skip"]

SCHEMA_VERSION = 1
"""Version of ``report.json`` (``DoctorReport.as_dict``)."""

STATUSES = ("ok", "below", "pathology", "skipped")
"""How a check ends: as expected; measured under the expected band; a known problem (with its fix); not run (with why)."""

CHECK_ORDER = ("inventory", "topology", "pcie_link", "nvlink", "nvls", "p2p", "iommu", "acs", "gdr", "copy",
               "all_reduce", "nccl")
"""The order checks are listed in (by the part of ``Check.name`` before ``:``), whatever order they ran in."""


@dataclass(frozen=True)
class Check:
    """The outcome of one check.

    Attributes
    ----------
    name : str
        Stable identifier: ``inventory``, ``topology``, ``pcie_link``, ``nvlink``, ``nvls``, ``p2p``,
        ``iommu``, ``acs``, ``gdr``, ``copy:<kind>``, ``all_reduce``, ``nccl_log``, ``nccl:<finding code>``.
    title : str
        What was checked, in words.
    status : str
        One of :data:`STATUSES`.
    measured : str
        What was seen (or, when skipped, why not).
    expected : str
        What a healthy node shows, with the basis of the expectation.
    fix : str
        For ``below`` and ``pathology``: what usually fixes it ("" otherwise).
    source : str
        A public page for the expectation or the fix ("" where none applies).
    data : dict
        The numbers behind ``measured`` and ``expected`` (JSON-ready), for the report's figures.
    """

    name: str
    title: str
    status: str
    measured: str
    expected: str = ""
    fix: str = ""
    source: str = ""
    data: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise GpucommError(f"check status {self.status!r} is not valid: expected one of {', '.join(STATUSES)}")

    def as_dict(self) -> dict:
        """All fields as plain data."""
        return asdict(self)



def skip(name: str, title: str, why: str, **data) -> Check:
    """A ``skipped`` check saying why it did not run, with the data it had.

    Parameters
    ----------
    name, title : str
        As :class:`Check`'s.
    why : str
        Why the check did not run (shown as ``measured``).
    **data
        JSON-ready values for :attr:`Check.data`.

    Returns
    -------
    Check
        Status ``skipped``.
    """
    return Check(name, title, "skipped", why, data=dict(data))


def worst_status(checks: Sequence[Check]) -> str:
    """``pathology`` if any check found one, else ``below`` if any, else ``ok`` (skipped checks count as ok).

    Examples
    --------
    >>> worst_status([Check("a", "a", "ok", ""), Check("b", "b", "below", "")])
    'below'
    """
    statuses = {c.status for c in checks}
    return "pathology" if "pathology" in statuses else "below" if "below" in statuses else "ok"


def _order_key(check: Check) -> int:
    head = check.name.split(":")[0]
    head = "nccl" if head in ("nccl_log", "nccl") else head
    return CHECK_ORDER.index(head) if head in CHECK_ORDER else len(CHECK_ORDER)


@dataclass
class DoctorReport:
    """What :func:`run_doctor` found so far: checks, and the data the report's figures are drawn from.

    Filled step by step (a Ctrl-C leaves the finished steps in it). :meth:`as_dict` is ``report.json``.

    Attributes
    ----------
    mode : str
        ``gpu`` (CUDA GPUs visible to torch) or ``cpu``.
    checks : list of Check
        In the order they finished (:meth:`ordered` sorts them for display).
    inventory : dict
        Host, CPU, GPUs, versions.
    topology : dict
        ``text`` (``nvidia-smi topo -m``), ``matrix`` (``{row: {column: code}}``), or empty.
    p2p : dict
        ``matrix`` (``matrix[i][j]``: GPU i can access GPU j), ``gpus`` (names), or empty.
    copy : dict
        ``records`` and ``meta`` of the copy measurement, ``expected`` (kind -> bytes/s).
    sweep : dict
        ``records`` and ``meta`` of the all_reduce sweep, ``band`` (the model's curve and band per
        size, :func:`model_band`), ``model_label`` or ``model_reason``.
    nccl : dict
        ``files`` (the debug logs written), and the log reader's facts and findings.
    steps_done, steps_total : int
        Progress through :func:`run_doctor`'s steps.
    interrupted : bool
        True when the run was stopped before its last step (Ctrl-C); ``steps_done`` says how far it got.
    """

    mode: str = "cpu"
    started: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).astimezone().isoformat(
        timespec="seconds"))
    host: str = field(default_factory=socket.gethostname)
    checks: list = field(default_factory=list)
    inventory: dict = field(default_factory=dict)
    topology: dict = field(default_factory=dict)
    p2p: dict = field(default_factory=dict)
    copy: dict = field(default_factory=dict)
    sweep: dict = field(default_factory=dict)
    nccl: dict = field(default_factory=dict)
    steps_done: int = 0
    steps_total: int = 0
    interrupted: bool = False

    def add(self, *checks: Check) -> None:
        """Append finished checks."""
        self.checks.extend(checks)

    def ordered(self) -> list[Check]:
        """The checks in :data:`CHECK_ORDER` (stable within one kind)."""
        return sorted(self.checks, key=_order_key)

    def skipped(self) -> list[Check]:
        """The checks that did not run, each with why."""
        return [c for c in self.ordered() if c.status == "skipped"]

    @property
    def status(self) -> str:
        """:func:`worst_status` of all checks."""
        return worst_status(self.checks)

    def as_dict(self) -> dict:
        """The whole report as JSON-ready data (``report.json``)."""
        counts = Counter(c.status for c in self.checks)
        return {"schema": SCHEMA_VERSION, "tool": "gpucomm doctor", "gpucomm_version": gpucomm.__version__,
                "started": self.started, "host": self.host, "mode": self.mode, "status": self.status,
                "counts": {s: counts.get(s, 0) for s in STATUSES}, "interrupted": self.interrupted,
                "steps_done": self.steps_done, "steps_total": self.steps_total,
                "checks": [c.as_dict() for c in self.ordered()], "inventory": self.inventory,
                "topology": self.topology, "p2p": self.p2p, "copy": self.copy, "sweep": self.sweep,
                "nccl": self.nccl}

    def write_json(self, path: str | os.PathLike) -> dict:
        """Write :meth:`as_dict` to ``path`` (``report.json``); return the data as read back (plain JSON types)."""
        text = json.dumps(self.as_dict(), indent=1, default=str)  # default=str: paths and other non-JSON values
        Path(path).write_text(text + "\n", encoding="utf-8")
        return json.loads(text)

