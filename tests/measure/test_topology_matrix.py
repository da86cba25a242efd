"""The ``nvidia-smi topo -m`` parser: matrices, legends, path classes and NCCL's P2P defaults (gpucomm.measure.topology)."""
from __future__ import annotations

import doctest
import subprocess
import sys

import pytest

import gpucomm.model.topology_text as topo  # the parser moved to the model layer (measure.topology re-exports it)
from gpucomm import GpucommError
from gpucomm.measure.topology import DGX1_P100_TOPO, TOPO_CODES, describe_cell, parse_topo_matrix
from gpucomm.model.hardware import get_gpu


def test_docstring_examples_run():
    result = doctest.testmod(topo, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_model_and_parser_import_no_plotly():
    code = ("import sys, gpucomm.model.scaling, gpucomm.measure.topology\n"
            "print(sorted(m for m in ('plotly', 'torch', 'ipywidgets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


MODERN = """\
\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV12\tNV12\tNV12\tPXB\t0-63,128-191\t0\t\tN/A
GPU1\tNV12\t X \tNV12\tNV12\tPXB\t0-63,128-191\t0\t\tN/A
GPU2\tNV12\tNV12\t X \tNV12\tSYS\t64-127,192-254\t1\t\tN/A
GPU3\tNV12\tNV12\tNV12\t X \tSYS\t64-127,192-254\t1\t\tN/A
NIC0\tPXB\tPXB\tSYS\tSYS\t X \t\t\t\t

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
"""


def test_parse_the_dgx1_example_with_its_garbled_header():
    m = parse_topo_matrix(DGX1_P100_TOPO)
    assert m.gpus == tuple(f"GPU{i}" for i in range(8))
    assert m.devices[8:] == ("mlx5_0", "mlx5_2", "mlx5_1", "mlx5_3")
    # hybrid cube mesh: every P100 uses its 4 NVLinks, 16 NVLink pairs, 12 cross-socket pairs
    assert all(len(m.peers(g)) == get_gpu("p100_sxm2").nvlink_links for g in m.gpus)
    assert {k: len(v) for k, v in m.gpu_pairs().items()} == {"NV1": 16, "SOC": 12}
    assert m.cell("GPU0", "mlx5_0") == "PIX" and m.cell("GPU0", "mlx5_1") == "PHB"
    assert m.affinity["GPU3"] == {"CPU Affinity": "1-1"} and "mlx5_0" not in m.affinity
    assert m.legend["SOC"].startswith("Connection traversing PCIe as well as the SMP link")
    d = m.as_dict()
    assert all(d[a][b] == d[b][a] for a in m.devices for b in m.devices)


def test_parse_a_modern_output_with_nic_legend_and_numa_columns():
    m = parse_topo_matrix(MODERN)
    assert m.devices == ("GPU0", "GPU1", "GPU2", "GPU3", "NIC0")
    assert m.affinity["GPU2"] == {"CPU Affinity": "64-127,192-254", "NUMA Affinity": "1", "GPU NUMA ID": "N/A"}
    assert m.nic_legend == {"NIC0": "mlx5_0"}
    assert set(m.legend) == {"X", "SYS", "NODE", "PHB", "PXB", "PIX", "NV#"}
    assert m.peers("GPU0", codes=("PXB",)) == ("NIC0",)
    assert m.gpu_pairs() == {"NV12": [("GPU0", "GPU1"), ("GPU0", "GPU2"), ("GPU0", "GPU3"), ("GPU1", "GPU2"),
                                      ("GPU1", "GPU3"), ("GPU2", "GPU3")]}


def test_parse_space_aligned_output_and_ansi_colours():
    text = ("        GPU0    GPU1    CPU Affinity    NUMA Affinity\n"
            "GPU0     X      \x1b[32mPHB\x1b[0m     0-11            N/A\n"
            "GPU1    PHB      X      0-11            N/A\n")
    m = parse_topo_matrix(text)
    assert m.cell("GPU1", "GPU0") == "PHB"
    assert m.affinity["GPU0"] == {"CPU Affinity": "0-11", "NUMA Affinity": "N/A"}


@pytest.mark.parametrize("text,match", [
    ("", "empty"),
    ("   \n\n", "empty"),
    ("\tGPU0\tGPU1\n", "no topology matrix"),
    ("\tGPU0\tGPU1\nGPU0\t X \tNVX\nGPU1\tNVX\t X \n", r"line 2, row GPU0, column GPU1: unknown code 'NVX'"),
    ("\tGPU0\tGPU1\nGPU0\t X \nGPU1\tPIX\t X \n", r"line 2 \(GPU0\): 1 cells for 2 devices"),
    ("\tGPU0\tGPU1\nGPU0\tPIX\tPIX\nGPU1\tPIX\t X \n", "own cell is 'PIX': expected X"),
    ("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPHB\t X \n", "GPU1-GPU0 is PHB but GPU0-GPU1 is PIX"),
    ("\tGPU0\tGPU2\nGPU0\t X \tPIX\nGPU1\tPIX\t X \n", "header .* does not list the row devices"),
    ("\tGPU0\tGPU0\nGPU0\t X \tPIX\nGPU0\tPIX\t X \n", "appears twice"),
    ("\tGPU0\tGPU1\nGPU0\t X \tNV0\nGPU1\tNV0\t X \n", "unknown code 'NV0'"),
])
def test_garbled_input_gives_a_clear_error(text, match):
    with pytest.raises(GpucommError, match=match):
        parse_topo_matrix(text)


def test_parse_rejects_non_text():
    with pytest.raises(GpucommError, match="string"):
        parse_topo_matrix(None)


def test_describe_cell_and_nccl_defaults():
    assert describe_cell("NV18") == (TOPO_CODES["NV#"], 18)
    assert describe_cell(" x ")[0].code == "X"
    p2p = {code: c.nccl_p2p_by_default for code, c in TOPO_CODES.items()}
    assert p2p == {"X": True, "NV#": True, "PIX": True, "PXB": True, "PHB": False, "NODE": False, "SYS": False,
                   "SOC": False}
    assert TOPO_CODES["SOC"].rank == TOPO_CODES["SYS"].rank
    ranks = [TOPO_CODES[c].rank for c in ("X", "NV#", "PIX", "PXB", "PHB", "NODE", "SYS")]
    assert ranks == sorted(ranks)
    with pytest.raises(GpucommError, match="expected one of"):
        describe_cell("QPI")


def test_matrix_lookups_reject_unknown_names():
    m = parse_topo_matrix(MODERN)
    with pytest.raises(GpucommError, match="unknown device"):
        m.cell("GPU0", "GPU9")
    with pytest.raises(GpucommError, match="unknown topology code"):
        m.peers("GPU0", codes=("NV12",))
