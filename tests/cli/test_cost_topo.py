"""``gpucomm cost --topo FILE`` and the network flags (``--net-transport``, ``--no-gdr``), in process."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from gpucomm.cli import main
from gpucomm.model.collectives import COLLECTIVES

DGX_H100 = str(resources.files("gpucomm.model.data").joinpath("topologies/dgx_h100.txt"))
TWO_SOCKETS = str(resources.files("gpucomm.model.data").joinpath("topologies/pcie_4gpu_two_sockets.txt"))


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(["cost", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("collective", list(COLLECTIVES))
def test_topo_file_prices_every_collective(capsys, collective):
    rc, out, err = _run(capsys, collective, "--topo", DGX_H100, "--gpu", "h100_sxm5", "--gpus", "16", "--nodes", "2",
                        "--network", "ib_ndr", "--size", "64MiB", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert (data["gpu"], data["gpus_per_node"], data["gdr"], data["net_transport"]) == ("h100_sxm5", 8, True, "rdma")


def test_topo_across_sockets_with_the_socket_link(capsys):
    rc, out, err = _run(capsys, "all_reduce", "--topo", TWO_SOCKETS, "--gpu", "l40s", "--inter-socket", "upi_skylake",
                        "--gpus", "4", "--size", "1GiB", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["inter_socket"] == "upi_skylake" and data["link"] == "pcie4"


def test_socket_transport_and_gdr_off_are_applied(capsys):
    base = ["all_reduce", "--system", "dgx_h100", "--gpus", "16", "--nodes", "2", "--size", "1GiB", "--json"]
    times = {}
    for name, extra in {"rdma": [], "no_gdr": ["--no-gdr"],
                        "socket": ["--network", "eth_400g", "--net-transport", "socket"]}.items():
        rc, out, err = _run(capsys, *base, *extra)
        assert rc == 0, err
        data = json.loads(out)
        times[name] = data["time_s"]
        assert data["gdr"] is (name == "rdma")
        assert data["net_transport"] == ("socket" if name == "socket" else "rdma")
    assert times["no_gdr"] > times["rdma"]


@pytest.mark.parametrize("argv,named", [
    (["--topo", DGX_H100, "--gpus", "8"], "--gpu"),
    (["--topo", "/no/such/file", "--gpu", "l4", "--gpus", "2"], "/no/such/file"),
    (["--topo", TWO_SOCKETS, "--gpu", "l40s", "--gpus", "4"], "--inter-socket"),
    (["--topo", DGX_H100, "--gpu", "h100_sxm5", "--topology", "mesh", "--gpus", "8"], "--topology"),
    (["--topo", DGX_H100, "--system", "dgx_h100", "--gpus", "8"], "--system"),
    (["--topo", DGX_H100, "--gpu", "h100_sxm5", "--gpus", "16"], "16 GPUs per node"),
    (["--link", "nvlink4", "--gpus", "8", "--net-transport", "tcp"], "tcp"),
    (["--link", "nvlink4", "--gpus", "8", "--net-transport", "socket"], "socket"),
    (["--link", "nvlink4", "--gpus", "8", "--no-gdr"], "GPUDirect RDMA"),
    (["--link", "nvlink4", "--gpus", "16", "--nodes", "2", "--network", "tcpxo_200g", "--net-transport", "socket"],
     "tcpxo_200g"),
])
def test_bad_or_conflicting_flags_give_one_line_and_exit_2(capsys, argv, named):
    rc, out, err = _run(capsys, "all_reduce", "--size", "1MiB", *argv)
    lines = err.strip().splitlines()
    assert rc == 2 and out == "" and len(lines) == 1 and lines[0].startswith("gpucomm cost: error: "), err
    assert named in lines[0], lines[0]
