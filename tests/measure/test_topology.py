"""Bundled ``nvidia-smi topo -m`` examples, this machine's topology, peer access, and the TP-layer figure."""

from __future__ import annotations

import shutil

import pytest

from gpucomm import GpucommError
from gpucomm.measure.topology import describe_cell
from gpucomm.measure.topology_examples import (
    example_topology_context,
    example_topology_file,
    example_topology_names,
    example_topology_source,
    example_topology_text,
    local_topology_text,
    read_example_topology,
)

NAMES = example_topology_names()


def test_the_three_machines_are_bundled():
    assert NAMES == ["dgx1_v100", "dgx_h100", "pcie_4gpu_two_sockets"]


@pytest.mark.parametrize("name", NAMES)
def test_every_example_has_its_source_and_parses(name):
    first = example_topology_file(name).splitlines()[0]
    assert first.startswith("# source: https://github.com/")
    assert example_topology_source(name) == first.removeprefix("# source: ")
    assert example_topology_context(name)
    assert not example_topology_text(name).lstrip().startswith("#")
    m = read_example_topology(name)
    assert len(m.gpus) in (4, 8)
    for a in m.gpus:  # every GPU pair has a known code, symmetric
        for b in m.gpus:
            if a != b:
                describe_cell(m.cell(a, b))
                assert m.cell(a, b) == m.cell(b, a)


def test_what_the_examples_show():
    assert set(read_example_topology("dgx_h100").gpu_pairs()) == {"NV18"}
    v100 = read_example_topology("dgx1_v100")
    assert {k: len(v) for k, v in v100.gpu_pairs().items()} == {"NV1": 8, "NV2": 8, "SYS": 12}
    # each V100 has 6 NVLinks: NV1 + NV1 + NV2 + NV2
    for gpu in v100.gpus:
        assert sum(describe_cell(v100.cell(gpu, other))[1] for other in v100.gpus if other != gpu) == 6
    assert set(read_example_topology("pcie_4gpu_two_sockets").gpu_pairs()) == {"PIX", "PXB", "SYS"}


def test_unknown_example_is_one_clear_error():
    with pytest.raises(GpucommError, match="unknown example topology 'dgx_b200': expected one of dgx1_v100"):
        read_example_topology("dgx_b200")


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has nvidia-smi")
def test_no_nvidia_smi_means_none():
    assert local_topology_text() is None


def test_a_failing_nvidia_smi_means_none(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert local_topology_text() is None


def test_topo_examples_import_no_torch_or_plotly(fresh_process):
    ran = fresh_process["topology examples"]
    assert "gpucomm.measure.topology_examples" in ran.modules and ran.heavy(("torch", "plotly", "ipywidgets")) == []


def test_peer_access_matrix_shape():
    pytest.importorskip("torch")
    from gpucomm.measure.peers import peer_access_matrix

    m = peer_access_matrix()
    n = len(m["devices"])
    assert len(m["can_access"]) == n and all(len(row) == n for row in m["can_access"])
    assert all(m["can_access"][i][i] is None for i in range(n))


def test_tp_layer_figure_draws_the_result():
    pytest.importorskip("plotly")
    from gpucomm.viz.figures.tp_layer import tp_layer_figure

    r = dict(serial_compute_s=0.020, serial_layer_s=0.025, serial_comm_s=0.004, overlap=True, chunks=4,
             compute_s=0.021, exposed_comm_s=0.001, comm_s=0.006, num_ranks=2, backend="gloo", dtype="float32",
             hidden=1024, ffn=4096, tokens=256, msg_bytes=2**18)
    fig = tp_layer_figure({"MLP": r}, {"MLP": {"blocking": 0.024, "overlapped": 0.0215}})
    compute, exposed, alone, model = fig.data
    assert list(compute.y) == pytest.approx([20.0, 21.0])
    assert list(exposed.y) == pytest.approx([5.0, 1.0])
    assert list(alone.y) == pytest.approx([4.0, 6.0])
    assert list(model.y) == pytest.approx([24.0, 21.5])
    blocking_only = dict(r, overlap=False)
    assert len(tp_layer_figure({"MLP": blocking_only}).data[0].x) == 1
    with pytest.raises(GpucommError, match="missing 'serial_comm_s'"):
        tp_layer_figure({"MLP": {"serial_compute_s": 1.0, "serial_layer_s": 1.0}})
