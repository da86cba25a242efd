"""Read ``nvidia-smi topo -m``: what each code means, and a parser from the printed matrix to data (text only,
standard library, so the model can build a fabric from it: :mod:`gpucomm.model.topo_fabric`).

``nvidia-smi topo -m`` prints, for every pair of devices (GPUs, and NICs when present), the
"closest" path between them, followed by a legend. Current drivers print::

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks

Older drivers (2016-2017) printed ``SOC`` ("the SMP link between CPU sockets (e.g. QPI)")
instead of ``SYS``, had no ``NODE``, and said "PCIe switch" where newer ones say "PCIe bridge".

NCCL does its own topology detection (sysfs + NVML, when a communicator is created), but its
path types carry the same names (``src/include/graph.h``): PATH_LOC, PATH_NVL, PATH_PIX,
PATH_PXB, PATH_PHB, PATH_SYS. By default NCCL uses the P2P transport (direct GPU-to-GPU copies)
up to PATH_PXB and falls back to staging through host memory (SHM) for PHB and SYS
(``p2pLevel = PATH_PXB`` in ``src/graph/paths.cc``; ``NCCL_P2P_LEVEL`` changes it; AMD CPUs
with at most two GPUs default to PATH_SYS).

References
----------
Legend as printed by current drivers: https://github.com/stas00/ml-engineering/blob/master/network/README.md
NCCL path types: https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/graph.h
NCCL P2P default: https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/paths.cc
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpucomm import GpucommError


@dataclass(frozen=True)
class TopoCode:
    """One code of the ``nvidia-smi topo -m`` legend.

    Attributes
    ----------
    code : str
        As printed (``"PIX"``; ``"NV#"`` stands for ``NV1``, ``NV2``, ... ``NV18``).
    meaning : str
        The current driver's legend text (``SOC``: the 2017 driver's text).
    hops : str
        What the traffic crosses, in plain words.
    nccl_path : str
        Closest NCCL path type (``src/include/graph.h``).
    nccl_p2p_by_default : bool
        Whether NCCL's P2P transport is used at this distance by default (P2P level PXB).
    rank : int
        Order from closest (0) to farthest; used to colour and sort.
    """

    code: str
    meaning: str
    hops: str
    nccl_path: str
    nccl_p2p_by_default: bool
    rank: int


TOPO_CODES: dict[str, TopoCode] = {c.code: c for c in (
    TopoCode("X", "Self", "the device itself", "PATH_LOC", True, 0),
    TopoCode("NV#", "Connection traversing a bonded set of # NVLinks", "# NVLinks, directly or into an NVSwitch",
             "PATH_NVL", True, 1),
    TopoCode("PIX", "Connection traversing at most a single PCIe bridge",
             "one PCIe switch (both devices below the same switch)", "PATH_PIX", True, 2),
    TopoCode("PXB", "Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)",
             "several PCIe switches, but not the CPU", "PATH_PXB", True, 3),
    TopoCode("PHB", "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
             "the CPU's root complex (host bridge)", "PATH_PHB", False, 4),
    TopoCode("NODE", "Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node",
             "two host bridges of the same CPU socket", "PATH_PHB (no separate NCCL type)", False, 5),
    TopoCode("SYS", "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)",
             "the link between CPU sockets (QPI/UPI, Infinity Fabric)", "PATH_SYS", False, 6),
    TopoCode("SOC", "Connection traversing PCIe as well as the SMP link between CPU sockets(e.g. QPI)",
             "the link between CPU sockets (old name of SYS, drivers of 2016-2017)", "PATH_SYS", False, 6),
)}
"""Every legend code, closest first. ``SOC`` is the old drivers' name for ``SYS``."""

_NV_RE = re.compile(r"^NV(\d{1,2})$")
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
ACCEPTED_CODES = "X, NV<n> (NV1..NV18...), PIX, PXB, PHB, NODE, SYS or SOC"


def describe_cell(cell: str) -> tuple[TopoCode, int]:
    """Look up one matrix cell: its legend entry and its number of NVLinks (0 if not NVLink).

    Parameters
    ----------
    cell : str
        A cell as printed (``"NV12"``, ``"PIX"``, ``" X "``); surrounding spaces are ignored.

    Returns
    -------
    (TopoCode, int)

    Raises
    ------
    GpucommError
        If the cell is not a known code.

    Examples
    --------
    >>> code, links = describe_cell("NV12")
    >>> code.code, links, code.nccl_path
    ('NV#', 12, 'PATH_NVL')
    >>> describe_cell("SOC")[0].nccl_p2p_by_default
    False
    """
    text = str(cell).strip().upper()
    match = _NV_RE.match(text)
    if match and int(match.group(1)) >= 1:
        return TOPO_CODES["NV#"], int(match.group(1))
    if text in TOPO_CODES and text != "NV#":
        return TOPO_CODES[text], 0
    raise GpucommError(f"unknown topology code {cell!r}: expected one of {ACCEPTED_CODES}")


@dataclass(frozen=True)
class TopoMatrix:
    """A parsed ``nvidia-smi topo -m`` matrix.

    Attributes
    ----------
    devices : tuple of str
        Row (and column) names in printed order: ``GPU0``..., ``NIC0``/``mlx5_0``...
    cells : tuple of tuple of str
        ``cells[i][j]``: code between ``devices[i]`` and ``devices[j]`` (``"X"`` on the diagonal).
    affinity : dict
        Per device, the trailing columns (``"CPU Affinity"``, ``"NUMA Affinity"``...) by header name.
    legend : dict
        Legend lines as printed, code -> text (empty if the output had no legend).
    nic_legend : dict
        ``NIC0`` -> ``mlx5_0`` etc. (newer drivers).
    """

    devices: tuple[str, ...]
    cells: tuple[tuple[str, ...], ...]
    affinity: dict[str, dict[str, str]] = field(default_factory=dict)
    legend: dict[str, str] = field(default_factory=dict)
    nic_legend: dict[str, str] = field(default_factory=dict)

    @property
    def gpus(self) -> tuple[str, ...]:
        """Device names that are GPUs (``GPU<n>``)."""
        return tuple(d for d in self.devices if re.fullmatch(r"GPU\d+", d))

    def cell(self, a: str, b: str) -> str:
        """Code between devices ``a`` and ``b``.

        Parameters
        ----------
        a, b : str
            Device names of :attr:`devices` (``"GPU0"``, ``"NIC1"``).

        Returns
        -------
        str
            The cell as printed (``"NV18"``, ``"PIX"``, ``"X"``).

        Raises
        ------
        GpucommError
            If either name is not a device of the matrix.
        """
        for name in (a, b):
            if name not in self.devices:
                raise GpucommError(f"unknown device {name!r}: expected one of {', '.join(self.devices)}")
        return self.cells[self.devices.index(a)][self.devices.index(b)]

    def as_dict(self) -> dict[str, dict[str, str]]:
        """The matrix as plain data.

        Returns
        -------
        dict of str to dict of str to str
            ``{row: {column: code}}``.
        """
        return {a: dict(zip(self.devices, row)) for a, row in zip(self.devices, self.cells)}

    def peers(self, device: str, codes: tuple[str, ...] = ("NV#",)) -> tuple[str, ...]:
        """Other devices whose path from ``device`` has one of ``codes`` (legend codes; ``"NV#"`` = any NVLink).

        Parameters
        ----------
        device : str
            A device name of :attr:`devices`.
        codes : tuple of str
            Legend codes of :data:`TOPO_CODES`.

        Returns
        -------
        tuple of str
            The matching devices, in printed order.

        Raises
        ------
        GpucommError
            Unknown device or code.

        Examples
        --------
        >>> m = parse_topo_matrix(DGX1_P100_TOPO)
        >>> m.peers("GPU0")
        ('GPU1', 'GPU2', 'GPU3', 'GPU4')
        >>> m.peers("GPU0", codes=("PIX",))
        ('mlx5_0',)
        """
        for code in codes:
            if code not in TOPO_CODES:
                raise GpucommError(f"unknown topology code {code!r}: expected one of {', '.join(TOPO_CODES)}")
        return tuple(b for b in self.devices
                     if b != device and describe_cell(self.cell(device, b))[0].code in codes)

    def gpu_pairs(self) -> dict[str, list[tuple[str, str]]]:
        """GPU pairs grouped by the code between them.

        Returns
        -------
        dict of str to list of (str, str)
            Each cell as printed (NVLink codes kept as ``NV18``) -> the GPU pairs with it, each pair once (``a`` before
            ``b`` in printed order).
        """
        out: dict[str, list[tuple[str, str]]] = {}
        gpus = self.gpus
        for i, a in enumerate(gpus):
            for b in gpus[i + 1:]:
                out.setdefault(self.cell(a, b), []).append((a, b))
        return out


def _split_fields(line: str) -> list[str]:
    return line.split()


def parse_topo_matrix(text: str) -> TopoMatrix:
    """Parse the text printed by ``nvidia-smi topo -m`` into a :class:`TopoMatrix`.

    The rows define the devices; the header is only checked (it may have lost the tabs between
    names, as in some copied outputs: ``GPU0GPU1GPU2...``). Trailing columns (CPU and NUMA
    affinity) are kept per device; the legend and NIC legend, when present, are parsed too.

    Parameters
    ----------
    text : str
        The command's output (header line, one line per device, optional legend).

    Returns
    -------
    TopoMatrix

    Raises
    ------
    GpucommError
        With the line number, when there is no matrix, a row is short, a cell is not a legend
        code, the diagonal is not ``X``, the matrix is not symmetric, a device name repeats, or
        the header does not list the row devices in order.

    Examples
    --------
    >>> m = parse_topo_matrix('''
    ...         GPU0    GPU1    CPU Affinity    NUMA Affinity
    ... GPU0     X      NV4     0-31            0
    ... GPU1    NV4      X      0-31            0
    ... ''')
    >>> m.devices, m.cell("GPU0", "GPU1"), m.affinity["GPU1"]["CPU Affinity"]
    (('GPU0', 'GPU1'), 'NV4', '0-31')
    """
    if not isinstance(text, str):
        raise GpucommError(f"topology text must be a string, got {type(text).__name__}")
    lines = [_ANSI_RE.sub("", line.rstrip("\r")) for line in text.splitlines()]
    numbered = [(i + 1, line) for i, line in enumerate(lines)]
    # the matrix block: from the first non-blank line to the first blank line or "Legend"
    start = next((k for k, (_, line) in enumerate(numbered) if line.strip()), None)
    if start is None:
        raise GpucommError("no topology matrix found: the text is empty; expected the output of `nvidia-smi topo -m`")
    header_no, header = numbered[start]
    rows: list[tuple[int, list[str]]] = []
    end = len(numbered)
    for k in range(start + 1, len(numbered)):
        no, line = numbered[k]
        if not line.strip() or line.strip().lower().startswith("legend"):
            end = k
            break
        rows.append((no, _split_fields(line)))
    if not rows:
        raise GpucommError(f"no topology matrix found below the header on line {header_no}: expected one line per device, "
                           "like 'GPU0  X  NV4 ...'")
    devices = [fields[0] for _, fields in rows]
    n = len(devices)
    seen: set[str] = set()
    for (no, _), name in zip(rows, devices):
        if name in seen:
            raise GpucommError(f"line {no}: device {name!r} appears twice: expected each device on one row")
        seen.add(name)
    # header: the device names in row order (tabs may be missing), then the extra column names
    squeezed = "".join(header.split())
    if not squeezed.startswith("".join(devices)):
        raise GpucommError(f"line {header_no}: header {header.strip()!r} does not list the row devices "
                           f"{', '.join(devices)} in order: expected a square matrix as `nvidia-smi topo -m` prints it")
    pos = 0
    for name in devices:
        pos = header.index(name, pos) + len(name)
    extra_names = [s.strip() for s in re.split(r"\t+| {2,}", header[pos:]) if s.strip()]
    cells: list[tuple[str, ...]] = []
    affinity: dict[str, dict[str, str]] = {}
    for (no, fields), name in zip(rows, devices):
        values = fields[1:]
        if len(values) < n:
            raise GpucommError(f"line {no} ({name}): {len(values)} cells for {n} devices: expected one code per device "
                               f"({', '.join(devices)})")
        row = tuple(values[:n])
        for col, cell in zip(devices, row):
            try:
                describe_cell(cell)
            except GpucommError:
                raise GpucommError(f"line {no}, row {name}, column {col}: unknown code {cell!r}: expected one of "
                                   f"{ACCEPTED_CODES}") from None
        cells.append(row)
        extras = values[n:]
        if extras:
            names = extra_names if len(extra_names) == len(extras) else [f"column {k + 1}" for k in range(len(extras))]
            affinity[name] = dict(zip(names, extras))
    for i, (no, _) in enumerate(rows):
        if cells[i][i].upper() != "X":
            raise GpucommError(f"line {no}: {devices[i]}'s own cell is {cells[i][i]!r}: expected X on the diagonal")
        for j in range(i):
            if cells[i][j].upper() != cells[j][i].upper():
                raise GpucommError(f"line {no}: {devices[i]}-{devices[j]} is {cells[i][j]} but {devices[j]}-{devices[i]} "
                                   f"is {cells[j][i]}: expected a symmetric matrix")
    legend, nic_legend = _parse_legends(lines[numbered[end][0] - 1:] if end < len(numbered) else [])
    return TopoMatrix(tuple(devices), tuple(cells), affinity, legend, nic_legend)


def _parse_legends(lines: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    legend: dict[str, str] = {}
    nic_legend: dict[str, str] = {}
    target = None
    for line in lines:
        stripped = line.strip()
        if stripped.lower().startswith("nic legend"):
            target = nic_legend
            continue
        if stripped.lower().startswith("legend"):
            target = legend
            continue
        if target is legend and "=" in stripped:
            code, _, meaning = stripped.partition("=")
            legend[code.strip()] = meaning.strip()
        elif target is nic_legend and ":" in stripped:
            nic, _, dev = stripped.partition(":")
            nic_legend[nic.strip()] = dev.strip()
    return legend, nic_legend


DGX1_P100_TOPO = (
    "\t    GPU0GPU1GPU2GPU3GPU4GPU5GPU6GPU7mlx5_0\tmlx5_2\tmlx5_1\tmlx5_3\tCPU Affinity\n"
    "GPU0\t X \tNV1\tNV1\tNV1\tNV1\tSOC\tSOC\tSOC\tPIX\tSOC\tPHB\tSOC\t1-1\n"
    "GPU1\tNV1\t X \tNV1\tNV1\tSOC\tNV1\tSOC\tSOC\tPIX\tSOC\tPHB\tSOC\t1-1\n"
    "GPU2\tNV1\tNV1\t X \tNV1\tSOC\tSOC\tNV1\tSOC\tPHB\tSOC\tPIX\tSOC\t1-1\n"
    "GPU3\tNV1\tNV1\tNV1\t X \tSOC\tSOC\tSOC\tNV1\tPHB\tSOC\tPIX\tSOC\t1-1\n"
    "GPU4\tNV1\tSOC\tSOC\tSOC\t X \tNV1\tNV1\tNV1\tSOC\tPIX\tSOC\tPHB\t1-1\n"
    "GPU5\tSOC\tNV1\tSOC\tSOC\tNV1\t X \tNV1\tNV1\tSOC\tPIX\tSOC\tPHB\t1-1\n"
    "GPU6\tSOC\tSOC\tNV1\tSOC\tNV1\tNV1\t X \tNV1\tSOC\tPHB\tSOC\tPIX\t1-1\n"
    "GPU7\tSOC\tSOC\tSOC\tNV1\tNV1\tNV1\tNV1\t X \tSOC\tPHB\tSOC\tPIX\t1-1\n"
    "mlx5_0\tPIX\tPIX\tPHB\tPHB\tSOC\tSOC\tSOC\tSOC\t X \tSOC\tPHB\tSOC\n"
    "mlx5_2\tSOC\tSOC\tSOC\tSOC\tPIX\tPIX\tPHB\tPHB\tSOC\t X \tSOC\tPHB\n"
    "mlx5_1\tPHB\tPHB\tPIX\tPIX\tSOC\tSOC\tSOC\tSOC\tPHB\tSOC\t X \tSOC\n"
    "mlx5_3\tSOC\tSOC\tSOC\tSOC\tPHB\tPHB\tPIX\tPIX\tSOC\tPHB\tSOC\t X\n"
    "\n"
    "Legend:\n"
    "\n"
    "  X   = Self\n"
    "  SOC  = Connection traversing PCIe as well as the SMP link between CPU sockets(e.g. QPI)\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe switches (without traversing the PCIe Host Bridge)\n"
    "  PIX  = Connection traversing a single PCIe switch\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n"
)
"""``nvidia-smi topo -m`` on a DGX-1 with 8 Tesla P100-SXM2-16GB (2017 driver: ``SOC``, no ``NODE``),
verbatim, including its header whose tabs were lost between GPU names. Source: University of
Sheffield RSE, "Lab 05: Multi-GPU and Benchmarking",
https://github.com/RSE-Sheffield/GPUComputing.github.io/blob/532a4f068de1f2d869745ab059a608cb9cdca401/education/intro_dl_sharc_dgx1/lab05.md
(the same lab prints ``Tesla P100-SXM2-16GB`` from ``caffe device_query``)."""

DGX1_P100_TOPO_SOURCE = ("https://github.com/RSE-Sheffield/GPUComputing.github.io/blob/"
                         "532a4f068de1f2d869745ab059a608cb9cdca401/education/intro_dl_sharc_dgx1/lab05.md")
