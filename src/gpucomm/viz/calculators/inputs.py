"""Calculator inputs: fields that carry label, unit, range and help; validation; catalog choices.

Every calculator of the course describes its inputs with one frozen dataclass whose fields are
made by :func:`param`. The metadata (label, unit, range or choices, help) is all a widget needs
to build its controls (:mod:`gpucomm.viz.widgets.controls`) and all :func:`check_inputs` needs to
refuse a bad value with a message that names it and says what is accepted. Choices are
functions that read the catalog (:mod:`gpucomm.model.hardware`, :data:`gpucomm.model.tp.MODELS`) when
called, so a calculator never carries a hardware or model literal of its own.

Figures are updated through :class:`FigureUpdate`: the same object feeds a live
``go.FigureWidget`` (:func:`apply_update`, inside ``batch_update()``), the precomputed steps
of a static plotly slider or dropdown (:func:`step_args`) and a plain figure dict
(:func:`update_spec`, what the book's live mode draws in the browser), so all show the same numbers.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpucomm import GpucommError
from gpucomm.model.fabric import Fabric, make_fabric, system_fabric

__all__ = [
    "param", "input_fields", "check_inputs", "check_field", "with_inputs", "FigureUpdate", "apply_update", "update_spec",
    "step_args", "compact",
    "interconnect_choices", "get_interconnect", "interconnect_key", "collective_choices", "algorithm_choices",
    "protocol_choices", "link_choices", "network_choices", "gpu_choices", "model_choices", "dtype_choices",
    "system_choices", "nodes_for",
]

Choices = Callable[[], list[tuple[str, Any]]]
"""A function returning ``[(label shown to people, value), ...]``, read from the catalog when called."""


def param(default: Any, *, label: str, help: str, unit: str = "", min: float | None = None,  # noqa: A002
          max: float | None = None, choices: Choices | None = None, kind: str | None = None) -> Any:
    """A dataclass field of a calculator's inputs, with the metadata controls and checks need.

    Parameters
    ----------
    default
        Default value (SI units: bytes, seconds, counts).
    label : str
        Short name shown next to the control.
    help : str
        One sentence for people: what the value means, in which unit.
    unit : str
        Unit of the value (``"bytes"``, ``"tokens"``, ``"GPUs"``...). ``"bytes"`` makes a size
        field, entered as text such as ``64MiB`` (:func:`gpucomm.model.units.parse_size`).
    min, max : float, optional
        Accepted range, inclusive (numbers).
    choices : callable, optional
        Returns ``[(label, value), ...]``: the accepted values (catalog keys).
    kind : {"choice", "multi", "size", "int", "float", "bool"}, optional
        Inferred when omitted: ``multi`` for a tuple with choices, ``choice`` with choices,
        ``size`` for unit bytes, else from the type of ``default``.

    Returns
    -------
    dataclasses.Field
    """
    if kind is None:
        if choices is not None:
            kind = "multi" if isinstance(default, tuple) else "choice"
        elif unit == "bytes":
            kind = "size"
        elif isinstance(default, bool):
            kind = "bool"
        elif isinstance(default, int):
            kind = "int"
        else:
            kind = "float"
    meta = {"label": label, "help": help, "unit": unit, "min": min, "max": max, "choices": choices, "kind": kind}
    return dataclasses.field(default=default, metadata=meta)


def input_fields(inputs_or_cls) -> list[tuple[str, dict]]:
    """``[(field name, metadata), ...]`` of a calculator's inputs dataclass, in declaration order."""
    return [(f.name, dict(f.metadata)) for f in dataclasses.fields(inputs_or_cls) if "label" in f.metadata]


def _bound(value: float) -> str:
    """A range bound as people read it: ``1048576``, not ``1.04858e+06``; ``0.05`` as is."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _describe_range(meta: dict) -> str:
    unit = f" {meta['unit']}" if meta["unit"] and meta["kind"] != "size" else ""
    what = "an integer" if meta["kind"] in ("int", "size") else "a number"
    if meta["min"] is not None and meta["max"] is not None:
        return f"{what} from {_bound(meta['min'])} to {_bound(meta['max'])}{unit}"
    if meta["min"] is not None:
        return f"{what} >= {_bound(meta['min'])}{unit}"
    return what


def check_inputs(inputs) -> Any:
    """Return ``inputs`` if every field is of its kind and in its range or choices, else raise.

    Raises
    ------
    GpucommError
        Naming the first bad field, its value and what is accepted, e.g. ``"GPUs 0 is not
        valid: expected an integer from 1 to 100000 GPUs"``.
    """
    for name, meta in input_fields(inputs):
        check_field(meta, getattr(inputs, name))
    return inputs


def check_field(meta: dict, value: Any) -> Any:
    """Return ``value`` if it is of the field's kind and in its range or choices, else raise.

    The check of one field of :func:`check_inputs`, for a caller that must say *which* control
    holds the bad value (the book's live mode shows the message next to it).

    Parameters
    ----------
    meta : dict
        The field's metadata (:func:`input_fields`).
    value
        The value to check, in SI units.

    Raises
    ------
    GpucommError
        Naming the field by its label, the value and what is accepted.

    Examples
    --------
    >>> check_field({"label": "GPUs", "kind": "int", "unit": "GPUs", "min": 1, "max": 8}, 9)
    Traceback (most recent call last):
    gpucomm.GpucommError: GPUs 9 is not valid: expected an integer from 1 to 8 GPUs
    """
    label = meta["label"]
    if meta["kind"] in ("choice", "multi"):
        accepted = [v for _, v in meta["choices"]()]
        values = value if meta["kind"] == "multi" else (value,)
        if meta["kind"] == "multi" and not isinstance(value, tuple):
            raise GpucommError(f"{label} {value!r} is not valid: expected a tuple of {', '.join(map(str, accepted))}")
        for v in values:
            if v not in accepted:
                raise GpucommError(f"{label} {v!r} is not valid: expected one of {', '.join(map(str, accepted))}")
    elif meta["kind"] == "bool":
        if not isinstance(value, bool):
            raise GpucommError(f"{label} {value!r} is not valid: expected True or False")
    else:
        integer = meta["kind"] in ("int", "size")
        ok_type = (isinstance(value, int) if integer else isinstance(value, (int, float))) and not isinstance(value, bool)
        if not ok_type or (not integer and not math.isfinite(value)):
            raise GpucommError(f"{label} {value!r} is not valid: expected {_describe_range(meta)}")
        if (meta["min"] is not None and value < meta["min"]) or (meta["max"] is not None and value > meta["max"]):
            raise GpucommError(f"{label} {value!r} is not valid: expected {_describe_range(meta)}")
    return value


def with_inputs(inputs, **changes) -> Any:
    """``dataclasses.replace(inputs, **changes)``, checked by :func:`check_inputs`."""
    return check_inputs(dataclasses.replace(inputs, **changes))


# --- one update for both worlds: live FigureWidget and static slider steps ----------------------------

@dataclass(frozen=True)
class FigureUpdate:
    """New trace properties and layout of a calculator figure, plus a one-line summary.

    Attributes
    ----------
    data : dict
        ``{property: [value for each trace in traces]}``, e.g. ``{"y": [[...], [...]]}``.
    traces : tuple of int
        Indices of the traces ``data`` applies to, in order.
    layout : dict
        Layout properties by path (``{"title.text": "..."}``).
    summary : str
        The result in one line of plain text, for a status line.
    """

    data: dict[str, list]
    traces: tuple[int, ...]
    layout: dict[str, Any]
    summary: str = ""


def apply_update(fig, update: FigureUpdate) -> None:
    """Set the update's trace and layout properties on ``fig`` (a Figure or FigureWidget).

    Call it inside ``fig.batch_update()`` on a FigureWidget so the browser gets one message.
    """
    for key, values in update.data.items():
        for index, value in zip(update.traces, values):
            fig.data[index][key] = value
    for path, value in update.layout.items():
        fig.layout[path] = value


def update_spec(spec: dict, update: FigureUpdate) -> dict:
    """Set the update's trace and layout properties on a plain figure dict (``{"data": [...], "layout": {...}}``).

    :func:`apply_update` for a figure without plotly: layout paths such as ``"title.text"`` are
    walked through nested dicts, created where missing.

    Returns
    -------
    dict
        ``spec`` itself, changed in place.

    Examples
    --------
    >>> spec = {"data": [{"y": [1]}, {"y": [2]}], "layout": {}}
    >>> update_spec(spec, FigureUpdate({"y": [[3]]}, (1,), {"title.text": "t"}))
    {'data': [{'y': [1]}, {'y': [3]}], 'layout': {'title': {'text': 't'}}}
    """
    for key, values in update.data.items():
        for index, value in zip(update.traces, values):
            spec["data"][index][key] = value
    for path, value in update.layout.items():
        *parents, leaf = path.split(".")
        node = spec["layout"]
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return spec


def compact(value: Any, digits: int = 4) -> Any:
    """Round floats (also inside lists) to ``digits`` significant digits: smaller static figures.

    ``None`` and non-finite values become ``None`` (a gap in a plotly line).

    Examples
    --------
    >>> compact([1234.5678, None, 0.000123456])
    [1235.0, None, 0.0001235]
    """
    if isinstance(value, (list, tuple)):
        return [compact(v, digits) for v in value]
    if isinstance(value, bool) or not isinstance(value, float):
        return value
    if not math.isfinite(value):
        return None
    return float(f"{value:.{digits}g}")


def step_args(update: FigureUpdate, digits: int = 4) -> list:
    """``args`` of a plotly slider step or dropdown button (method ``"update"``) for ``update``."""
    data = {key: [compact(v, digits) for v in values] for key, values in update.data.items()}
    return [data, dict(update.layout), list(update.traces)]


# --- catalog choices -------------------------------------------------------------------------------------

def collective_choices() -> list[tuple[str, str]]:
    """Collectives in torch.distributed spelling (:data:`gpucomm.model.collectives.COLLECTIVES`)."""
    from gpucomm.model.collectives import COLLECTIVES

    return [(c, c) for c in COLLECTIVES]


def algorithm_choices() -> list[tuple[str, str]]:
    """Algorithms of :data:`gpucomm.model.cost.ALGORITHMS` (``auto`` = NCCL-like choice)."""
    from gpucomm.model.cost import ALGORITHMS

    return [(a, a) for a in ALGORITHMS]


def protocol_choices() -> list[tuple[str, str]]:
    """``auto`` and the protocols of :data:`gpucomm.model.cost.PROTOCOLS`."""
    from gpucomm.model.cost import PROTOCOLS

    return [("auto", "auto")] + [(p, p) for p in PROTOCOLS]


def link_choices() -> list[tuple[str, str]]:
    """Every link of :data:`gpucomm.model.hardware.LINKS`, by its name."""
    from gpucomm.model.hardware import LINKS

    return [(link.name, key) for key, link in LINKS.items()]


def network_choices() -> list[tuple[str, str]]:
    """Scale-out ports of :data:`gpucomm.model.hardware.NETWORKS`."""
    from gpucomm.model.hardware import NETWORKS

    return [(net.name, key) for key, net in NETWORKS.items()]


def network_or_system_choices() -> list[tuple[str, str]]:
    """``"system"`` (the preset system's own NICs) and every network port."""
    return [("the system's own NICs", "system")] + network_choices()


def gpu_choices() -> list[tuple[str, str]]:
    """GPUs of the catalog with dense FP16/BF16 FLOP/s, memory bandwidth and memory (roofline-ready)."""
    from gpucomm.model.hardware import GPUS

    return [(g.name, k) for k, g in GPUS.items()
            if g.has_roofline and g.mem_bytes]


def model_choices() -> list[tuple[str, str]]:
    """Transformer presets of :data:`gpucomm.model.tp.MODELS`."""
    from gpucomm.model.tp import MODELS

    return [(m.name, k) for k, m in MODELS.items()]


def dtype_choices() -> list[tuple[str, str]]:
    """Short dtype names of :data:`gpucomm.model.tp.DTYPE_BYTES` (the long aliases ``float16``... left out)."""
    from gpucomm.model.tp import DTYPE_BYTES

    return [(f"{k} ({b} B)", k) for k, b in DTYPE_BYTES.items() if not k.startswith(("float", "bfloat"))]


# --- interconnects: preset fabrics of the link catalog, by a short key ---------------------------------------

def _interconnect_name(fabric: Fabric) -> str:
    """Human name: ``"NVLink 4.0 via NVSwitch"``, ``"NVLink 4.0 P2P mesh of 8"``, ``"PCIe 4.0 x16, no P2P (via host memory)"``."""
    short = fabric.link.name.split(" (")[0]
    if fabric.link.kind == "pcie":
        return f"{short}, {'P2P' if fabric.p2p else 'no P2P (via host memory)'}"
    return f"{short} {'via NVSwitch' if fabric.topology == 'switch' else f'P2P mesh of {fabric.mesh_size}'}"


def interconnect_key(fabric: Fabric) -> str:
    """The short key of a preset fabric: ``"nvlink4:switch"``, ``"nvlink4:mesh8"``, ``"pcie4:p2p"``, ``"pcie4:no-p2p"``.

    Examples
    --------
    >>> interconnect_key(get_interconnect("nvlink4:mesh8"))
    'nvlink4:mesh8'
    """
    if fabric.link.kind == "pcie":
        return f"{fabric.link.key}:{'p2p' if fabric.p2p else 'no-p2p'}"
    return f"{fabric.link.key}:{'switch' if fabric.topology == 'switch' else f'mesh{fabric.mesh_size}'}"


def interconnect_choices() -> list[tuple[str, str]]:
    """Presets built from the link catalog: NVLink via NVSwitch or as a mesh of 8; PCIe with or without P2P.

    The mesh of 8 is the point-to-point board of NVIDIA's "P2P vs NVSwitch" comparison (NVIDIA
    Technical Blog, "NVIDIA NVLink and NVIDIA NVSwitch Supercharge Large Language Model Inference", Aug 2024).
    """
    from gpucomm.model.hardware import LINKS

    out = []
    for key, link in LINKS.items():
        options = ([make_fabric(key), make_fabric(key, topology="mesh", mesh_size=8)] if link.kind == "nvlink"
                   else [make_fabric(key), make_fabric(key, p2p=False)])
        out += [(_interconnect_name(f), interconnect_key(f)) for f in options]
    return out


def get_interconnect(key: str | Fabric) -> Fabric:
    """The preset :class:`~gpucomm.model.fabric.Fabric` of an interconnect key (see :func:`interconnect_key`).

    A fabric is returned unchanged. The preset's name (its :attr:`~gpucomm.model.fabric.Fabric.label`) is
    the one :func:`interconnect_choices` shows.

    Raises
    ------
    GpucommError
        For a key that is not ``<link>:switch``, ``<link>:mesh<N>``, ``<link>:p2p`` or ``<link>:no-p2p``.

    Examples
    --------
    >>> f = get_interconnect("nvlink4:mesh8")
    >>> f.topology, f.mesh_size, f.label
    ('mesh', 8, 'NVLink 4.0 P2P mesh of 8')
    """
    if isinstance(key, Fabric):
        return key
    from gpucomm.model.hardware import get_link

    link, _, how = str(key).partition(":")
    try:
        get_link(link)
    except GpucommError:
        how = None
    fabric = None
    if how in ("switch", "p2p"):
        fabric = make_fabric(link)
    elif how == "no-p2p":
        fabric = make_fabric(link, p2p=False) if get_link(link).kind == "pcie" else None
    elif how and how.startswith("mesh") and how[4:].isdigit() and int(how[4:]) >= 2:
        fabric = make_fabric(link, topology="mesh", mesh_size=int(how[4:])) if get_link(link).kind == "nvlink" else None
    if fabric is None:
        raise GpucommError(f"interconnect {key!r} is not valid: expected <link>:switch, <link>:mesh<N>, <link>:p2p or "
                           f"<link>:no-p2p, e.g. nvlink4:switch, nvlink4:mesh8, pcie4:no-p2p")
    return fabric.replace(name=_interconnect_name(fabric))


# --- whole systems of the catalog as a collective sees them ------------------------------------------------

def system_choices() -> list[tuple[str, str]]:
    """Catalog systems the cost model represents (NVSwitch boxes, PCIe boxes, NVLink-bridged pairs), plus ``custom``.

    A system is offered when :func:`gpucomm.model.fabric.system_fabric` describes it: the hybrid cube-mesh
    (DGX-1) is left out, since some of its GPU pairs have no NVLink, which neither the switch, the even-mesh
    nor the pairs model describes.
    """
    from gpucomm.model.hardware import SYSTEMS

    # Checking every system's fabric costs about 1 ms (several in the browser's Pyodide) and a live update asks
    # several times (the field checks, the compare traces): the answer is kept for this catalog's entries.
    entries = tuple((key, id(spec)) for key, spec in SYSTEMS.items())
    if _SYSTEM_CHOICES[0] != entries:
        out = [("custom (choose the link)", "custom")]
        for key, spec in SYSTEMS.items():
            try:
                system_fabric(key)
            except GpucommError:
                continue
            out.append((spec.name, key))
        _SYSTEM_CHOICES[:] = [entries, out]
    return list(_SYSTEM_CHOICES[1])


_SYSTEM_CHOICES: list = [None, None]
"""The last answer of :func:`system_choices` and the catalog entries (key, object id) it was computed for."""


def nodes_for(system: str, num_ranks: int) -> int | None:
    """Fewest nodes of ``system`` that hold ``num_ranks`` GPUs evenly, or None if none does.

    Examples
    --------
    >>> nodes_for("dgx_h100", 64), nodes_for("gb200_nvl72", 64), nodes_for("dgx_h100", 12)
    (8, 1, 2)
    """
    from gpucomm.model.hardware import get_system

    per_node_max = get_system(system).num_gpus
    for nodes in range(max(1, -(-num_ranks // per_node_max)), num_ranks + 1):
        if num_ranks % nodes == 0 and num_ranks // nodes <= per_node_max:
            return nodes
    return None
