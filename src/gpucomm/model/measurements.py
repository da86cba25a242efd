"""Published measurements bundled with the package (``gpucomm/model/data``), each with its source.

Pages quote measured numbers through this module, so that a number in prose is read
from one sourced file instead of typed by hand.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from gpucomm import GpucommError

if TYPE_CHECKING:  # Python 3.11+; only an annotation here
    from importlib.resources.abc import Traversable


@dataclass(frozen=True)
class Measurement:
    """One published value in SI units (s, bytes, bytes/s, counts) with where it comes from."""

    key: str
    value: float
    unit: str
    description: str
    source: str


PCIE5_H2D_COPY = Measurement(
    "pcie5_h2d_copy_bytes_per_s", 55.4e9, "bytes/s",
    "host-to-device copy over PCIe 5.0 x16 on an 8x H200 server (the packet overhead of PCIe, ~88 % of 63 GB/s)",
    "https://github.com/stas00/ml-engineering/blob/master/network/README.md")
"""A measured PCIe 5.0 x16 copy rate, for the chapters (not a model input)."""


def bundled_data(*parts: str) -> Traversable:
    """A file or folder of the data bundled with the package (``gpucomm/model/data``).

    Parameters
    ----------
    *parts : str
        Path inside the data folder, one name per level (``"nccl_logs", "C04.txt"``); none for the folder.

    Returns
    -------
    importlib.resources.abc.Traversable
        Readable with ``read_text()`` or ``iterdir()`` whether the package is installed as files or zipped.

    Examples
    --------
    >>> bundled_data("cases.csv").name
    'cases.csv'
    """
    return resources.files("gpucomm.model").joinpath("data", *parts)


def read_bundled_csv(name: str) -> tuple[list[dict], str]:
    """Rows and source of one bundled CSV file: the only reader of the package's CSV data.

    Parameters
    ----------
    name : str
        File name in the data folder (``"cases.csv"``).

    Returns
    -------
    (list of dict, str)
        One dict per row, keyed by the header, values as text; and the URL of the first ``# source:``
        comment line ("" when the file has none). Lines starting with ``#`` and empty lines are skipped.

    Examples
    --------
    >>> rows, source = read_bundled_csv("mleng_8xH200_torch_allreduce.csv")
    >>> rows[0]["n_gpus"], source.startswith("https://")
    ('8', True)
    """
    text = bundled_data(name).read_text()
    comments = [line for line in text.splitlines() if line.startswith("#")]
    source = next((c.split("source:", 1)[1].strip().split()[0] for c in comments if "source:" in c), "")
    rows = list(csv.DictReader(line for line in text.splitlines() if line and not line.startswith("#")))
    return rows, source


@cache
def llama70b_tp4_4xa100() -> dict[str, Measurement]:
    """Llama-3-70B TP=4 on 4x A100: nccl-tests all_reduce and vLLM prefill times, by key.

    From Baobao Algorithm Notes' article on NVLink and Llama-3-70B inference (English translation:
    "Why NVLink Supercharges Llama 3 70B Inference: A Deep Performance Breakdown", besthub.dev; undated,
    measured with vLLM v0.6.6); the file's ``source`` line gives the URL.

    Examples
    --------
    >>> llama70b_tp4_4xa100()["all_reduce_nvlink3_s"].value
    0.000603
    """
    rows, source = read_bundled_csv("llama70b_tp4_4xa100.csv")
    return {r["key"]: Measurement(r["key"], float(r["value"]), r["unit"], r["description"], source) for r in rows}


@cache
def cases() -> dict[str, dict]:
    """Rows of ``cases.csv`` (single published data points with context), by id (``"C04"``)."""
    rows, _ = read_bundled_csv("cases.csv")
    return {r["id"]: r for r in rows}


def case(case_id: str) -> dict:
    """One row of ``cases.csv``; raise a clear error for an unknown id.

    Parameters
    ----------
    case_id : str
        A case id of ``cases.csv`` (``C04``); letter case matters.

    Returns
    -------
    dict
        The row, as :func:`cases` gives it.

    Raises
    ------
    GpucommError
        If no case has that id; the message lists the ids.
    """
    table = cases()
    if case_id not in table:
        raise GpucommError(f"unknown measurement case {case_id!r}: expected one of {', '.join(table)}")
    return table[case_id]


def mleng_h200_sweep() -> list[dict]:
    """The bundled 8x H200 torch.distributed all_reduce sweep (case C13) as result records.

    Returns
    -------
    list of dict
        ``record`` (``"result"``), ``collective``, ``num_ranks``, ``msg_bytes``, ``time_s`` (derived:
        bytes / algbw), ``algbw_bytes_per_s``, ``busbw_bytes_per_s``, by increasing size: the records
        :meth:`gpucomm.measure.logs.nccl_tests.ParsedLog.as_results` gives for an nccl-tests log.

    Examples
    --------
    >>> rows = mleng_h200_sweep()
    >>> rows[-1]["msg_bytes"] == 16 * 2**30, rows[-1]["busbw_bytes_per_s"] / 1e9
    (True, 482.26)
    """
    rows, _ = read_bundled_csv("mleng_8xH200_torch_allreduce.csv")
    out = []
    for r in rows:
        size, algbw = int(r["bytes"]), float(r["algbw_GBps"]) * 1e9
        out.append({"record": "result", "collective": "all_reduce", "num_ranks": int(r["n_gpus"]), "msg_bytes": size,
                    "time_s": size / algbw, "algbw_bytes_per_s": algbw,
                    "busbw_bytes_per_s": float(r["busbw_GBps"]) * 1e9})
    return sorted(out, key=lambda r: r["msg_bytes"])


NVIDIA_BLOG_URL = ("https://developer.nvidia.com/blog/"
                   "nvidia-nvlink-and-nvidia-nvswitch-supercharge-large-language-model-inference/")
"""NVIDIA Technical Blog, "NVIDIA NVLink and NVIDIA NVSwitch Supercharge Large Language Model Inference", Aug 2024."""

NVIDIA_BLOG_TP2_THROUGHPUT = {1: (25, 26), 2: (44, 47), 4: (66, 76), 8: (87, 110), 16: (103, 142), 32: (112, 168)}
"""Table 3 of :data:`NVIDIA_BLOG_URL`: batch -> (point-to-point, NVSwitch) throughput in tokens/s per GPU.

Llama 3.1 70B on H200, TP=2, ISL/OSL = 8K/256, "throughput modeled using internal measurements". The
point-to-point system is hypothetical: 8 GPUs whose 900 GB/s (both directions) is split into seven
128 GB/s (both directions) links, one to each other GPU."""
