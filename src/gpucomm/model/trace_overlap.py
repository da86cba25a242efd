"""Read a profiler trace: how much communication ran alone, and how much hid behind compute.

A trace in the Chrome trace-event format (what ``torch.profiler.profile(...).export_chrome_trace(path)`` writes,
and what Perfetto and ``chrome://tracing`` open) lists *complete events*: ``{"ph": "X", "name": ..., "ts": start,
"dur": duration, "tid": thread, ...}``, times in microseconds (Google, "Trace Event Format", the ``X`` event;
PyTorch's ``torch/profiler/profiler.py``). Communication shows up as

* ``gloo:all_reduce`` (and ``gloo:<collective>``): the gloo backend runs each collective on its own worker thread,
  inside a ``record_function`` of that name, so the event spans the transfer itself;
* ``ncclDevKernel_*`` / ``ncclKernel_*`` events of category ``kernel`` in a GPU trace: the NCCL kernel on its
  stream (``ncclDevKernel_<coll>_...`` from NCCL 2.19, ``src/device/generate.py``; ``ncclKernel_`` before), and
  ``ncclSymkDevKernel_*``, the symmetric-memory kernels of NCCL 2.27 and later
  (``src/device/symmetric/generate.py`` at v2.30.7-1). (The CPU-side ``nccl:all_reduce`` and
  ``c10d::allreduce_`` events only enqueue it.)

Compute is either the GPU's other kernels, or, in a CPU trace, the regions the program labelled with
``record_function("compute")``. This module takes the union of each kind's intervals and splits communication
into the part that ran while compute was running (*overlapped*) and the rest (*exposed*): the exposed part is
what a faster network would save. Standard library only: it reads a parsed JSON object, not a file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from gpucomm import GpucommError

__all__ = ["Interval", "OverlapSummary", "complete_events", "is_communication", "intersection_s", "overlap_summary",
           "union_s"]

Interval = tuple[float, float]
"""``(start_s, end_s)``, seconds, start <= end."""

_COMM_PREFIXES = ("gloo:", "ncclDevKernel", "ncclKernel", "ncclSymkDevKernel")


def complete_events(trace: Mapping | list) -> list[dict]:
    """The complete (``"ph": "X"``) events of a parsed Chrome trace, each with ``ts`` and ``dur`` in microseconds.

    Parameters
    ----------
    trace : dict or list
        The parsed JSON: an object with ``traceEvents`` (PyTorch's format) or a bare list of events.

    Returns
    -------
    list of dict
        The events, in file order.

    Raises
    ------
    GpucommError
        When ``trace`` is neither, or an ``X`` event lacks a numeric ``ts`` or ``dur``.

    Examples
    --------
    >>> complete_events({"traceEvents": [{"ph": "X", "name": "a", "ts": 0, "dur": 5}, {"ph": "i", "name": "b"}]})
    [{'ph': 'X', 'name': 'a', 'ts': 0, 'dur': 5}]
    """
    events = trace.get("traceEvents") if isinstance(trace, Mapping) else trace
    if not isinstance(events, list):
        raise GpucommError("not a Chrome trace: expected an object with 'traceEvents' or a list of events")
    out = []
    for event in events:
        if isinstance(event, Mapping) and event.get("ph") == "X":
            if not all(isinstance(event.get(k), (int, float)) for k in ("ts", "dur")):
                raise GpucommError(f"event {event.get('name')!r} has no numeric ts/dur")
            out.append(dict(event))
    return out


def is_communication(event: Mapping) -> bool:
    """Whether ``event`` is communication doing its work (gloo's worker-thread event or an NCCL kernel).

    Parameters
    ----------
    event : dict
        A complete event (:func:`complete_events`).

    Returns
    -------
    bool
        True for names starting with ``gloo:``, ``ncclDevKernel``, ``ncclKernel`` or ``ncclSymkDevKernel``.

    Examples
    --------
    >>> is_communication({"name": "gloo:all_reduce"}), is_communication({"name": "c10d::allreduce_"})
    (True, False)
    """
    return str(event.get("name", "")).startswith(_COMM_PREFIXES)


def _merged(intervals: Iterable[Interval]) -> list[Interval]:
    merged: list[list[float]] = []
    for start, end in sorted(intervals):
        if end < start:
            raise GpucommError(f"interval ends before it starts: {(start, end)}")
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def union_s(intervals: Iterable[Interval]) -> float:
    """Total time covered by at least one interval, seconds.

    Parameters
    ----------
    intervals : iterable of (float, float)
        ``(start_s, end_s)`` pairs, in any order, possibly overlapping.

    Returns
    -------
    float
        The length of their union.

    Raises
    ------
    GpucommError
        For an interval that ends before it starts.

    Examples
    --------
    >>> union_s([(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)])
    4.0
    """
    return sum(b - a for a, b in _merged(intervals))


def _intersections(first: Iterable[Interval], second: Iterable[Interval]) -> list[Interval]:
    a, b = _merged(first), _merged(second)
    i = j = 0
    out: list[Interval] = []
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def intersection_s(first: Iterable[Interval], second: Iterable[Interval]) -> float:
    """Time covered by both sets of intervals (by the union of each), seconds.

    Parameters
    ----------
    first, second : iterable of (float, float)
        Two sets of ``(start_s, end_s)`` intervals.

    Returns
    -------
    float
        The length of ``union(first) & union(second)``.

    Raises
    ------
    GpucommError
        For an interval that ends before it starts.

    Examples
    --------
    >>> intersection_s([(0.0, 4.0)], [(1.0, 2.0), (3.0, 6.0)])
    2.0
    """
    return sum(hi - lo for lo, hi in _intersections(first, second))


@dataclass(frozen=True)
class OverlapSummary:
    """Communication and compute of one rank's trace, seconds.

    ``comm_s`` and ``compute_s`` are the unions of each kind's events; ``overlapped_s`` the time both ran;
    ``exposed_comm_s = comm_s - overlapped_s``; ``window_s`` the span the shares are taken of (the union of the
    step events, or first to last event); ``comm_events`` how many communication events were found.
    """

    comm_s: float
    compute_s: float
    overlapped_s: float
    exposed_comm_s: float
    window_s: float
    comm_events: int

    @property
    def overlap_fraction(self) -> float:
        """Share of the communication that ran under compute (0 to 1; 0 when there was none)."""
        return self.overlapped_s / self.comm_s if self.comm_s > 0 else 0.0

    @property
    def exposed_share(self) -> float:
        """Exposed communication as a share of the window (0 to 1)."""
        return self.exposed_comm_s / self.window_s if self.window_s > 0 else 0.0


def _intervals(events: Iterable[Mapping]) -> list[Interval]:
    return [(e["ts"] * 1e-6, (e["ts"] + e["dur"]) * 1e-6) for e in events]


def overlap_summary(trace: Mapping | list, *, compute_label: str = "compute", step_label: str | None = "step",
                    comm: Callable[[Mapping], bool] = is_communication) -> OverlapSummary:
    """Split a trace's communication into overlapped and exposed time.

    Parameters
    ----------
    trace : dict or list
        A parsed Chrome trace (:func:`complete_events`), one rank's.
    compute_label : str
        In a trace without GPU kernels, the name of the ``record_function`` regions that are compute. With GPU
        kernels (category ``kernel``), compute is every kernel that is not communication.
    step_label : str or None
        Name of the events that delimit the measured steps (``record_function("step")``, or PyTorch's
        ``ProfilerStep#N`` events when given ``"ProfilerStep"``: names starting with it count). Their union is the
        window, and only communication and compute inside it count; None, or no such event: from the first
        event's start to the last event's end.
    comm : callable
        ``comm(event) -> bool``, which events are communication (default :func:`is_communication`).

    Returns
    -------
    OverlapSummary
        Times in seconds.

    Raises
    ------
    GpucommError
        When the trace is malformed or holds no communication event.

    Examples
    --------
    >>> ev = [{"ph": "X", "name": "step", "ts": 0, "dur": 100},
    ...       {"ph": "X", "name": "gloo:all_reduce", "ts": 10, "dur": 60},
    ...       {"ph": "X", "name": "compute", "ts": 0, "dur": 50}]
    >>> s = overlap_summary(ev)
    >>> round(s.overlapped_s * 1e6), round(s.exposed_comm_s * 1e6), round(s.exposed_share, 2)
    (40, 20, 0.2)
    """
    events = complete_events(trace)
    comm_events = [e for e in events if comm(e)]
    if not comm_events:
        raise GpucommError("no communication event in the trace (gloo:*, ncclDevKernel*, ncclKernel*, ncclSymkDevKernel*)")
    kernels = [e for e in events if e.get("cat") == "kernel"]
    if kernels:
        compute_events = [e for e in kernels if not comm(e)]
    else:
        compute_events = [e for e in events if e.get("name") == compute_label]
    steps = [e for e in events if step_label and str(e.get("name", "")).startswith(step_label)]
    if steps:
        window_iv = _merged(_intervals(steps))
    else:
        window_iv = [(min(e["ts"] for e in events) * 1e-6, max(e["ts"] + e["dur"] for e in events) * 1e-6)]
    # only what happened inside the measured steps counts (a barrier before them, the profiler's start-up, do not)
    comm_iv = _intersections(_intervals(comm_events), window_iv)
    compute_iv = _intersections(_intervals(compute_events), window_iv)
    comm_s, compute_s = union_s(comm_iv), union_s(compute_iv)
    overlapped = intersection_s(comm_iv, compute_iv)
    return OverlapSummary(comm_s, compute_s, overlapped, comm_s - overlapped, union_s(window_iv), len(comm_events))
