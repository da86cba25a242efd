"""gpucomm.model.machine: a node's fabric from plain facts (GPU keys, topology codes, P2P, CPU), and the band a healthy
all_reduce falls in (the doctor's model; the doctor's reading of the machine is tested in tests/measure/test_doctor.py)."""

from __future__ import annotations

import pytest

from gpucomm.model.cost import collective_cost
from gpucomm.model.fabric import make_fabric
from gpucomm.model.hardware import INTER_SOCKET_LINKS
from gpucomm.model.machine import inter_socket_key, machine_fabric, model_band
from gpucomm.model.validation import SMALL_MESSAGE_MAX_BYTES

MiB = 2**20
SOCKETS = {"PXB": "PXB", "PIX": "PIX", "SYS": "SYS"}  # pcie_4gpu_two_sockets: GPU0-1 PXB, GPU2-3 PIX, the rest SYS


@pytest.mark.parametrize("cpu, key", [
    ("AMD EPYC 7742 64-Core Processor", "xgmi_zen2"),       # Rome: last digit 2
    ("AMD EPYC 7763 64-Core Processor", "xgmi_zen4"),       # Milan: Zen 3 grouped with Zen 4
    ("AMD EPYC 9654 96-Core Processor", "xgmi_zen4"),
    ("AMD EPYC 9755 128-Core Processor", "xgmi_zen5"),
    ("Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz", "upi_skylake"),
    ("Intel(R) Xeon(R) Platinum 8480+", "upi_sapphire_rapids"),
    ("Intel(R) Xeon(R) Platinum 8592+", "upi_emerald_rapids"),
    ("Intel(R) Xeon(R) CPU E5-2698 v4 @ 2.20GHz", "qpi_broadwell"),
    ("Intel(R) Xeon(R) CPU E7-8890 v4 @ 2.20GHz", "qpi_broadwell"),
    ("Apple M2", None),
    ("", None),
])
def test_inter_socket_key_guesses_from_the_model_number(cpu, key):
    assert inter_socket_key(cpu) == key
    assert key is None or key in INTER_SOCKET_LINKS


def test_nvlink_everywhere_is_the_gpus_nvlink_through_a_switch():
    fabric, label = machine_fabric(["h100_sxm5"] * 2, {"NV18": "NV#"}, [[True, True], [True, True]], "x")
    assert (fabric.link.key, fabric.topology, fabric.gpu) == ("nvlink4", "switch", "h100_sxm5") and label == fabric.label
    # no topology read: an SXM part's NVLink is assumed
    assert machine_fabric(["h100_sxm5"] * 8, None, None, "x")[0].link.key == "nvlink4"


def test_bridged_cards_are_pairs_over_pcie():
    fabric, _ = machine_fabric(["a40"] * 2, {"NV4": "NV#"}, None, "")
    assert fabric.topology == "pairs" and fabric.gpu == "a40"


def test_pcie_takes_p2p_from_the_matrix_and_the_socket_link_from_the_cpu():
    fabric, label = machine_fabric(["rtx_4090"] * 4, SOCKETS, [[True] * 4] * 4, "AMD EPYC 9654 96-Core")
    assert (fabric.link.key, fabric.p2p, fabric.inter_socket) == ("pcie4", True, "xgmi_zen4"), label
    no_p2p = [[i == j for j in range(4)] for i in range(4)]
    assert machine_fabric(["rtx_4090"] * 4, SOCKETS, no_p2p, "Intel(R) Xeon(R) Gold 6248")[0].p2p is False
    # under one socket the CPU does not matter
    assert machine_fabric(["rtx_4090"] * 2, {"PIX": "PIX"}, None, "Apple M2")[0].inter_socket is None
    # the old drivers' SOC is SYS
    assert machine_fabric(["rtx_4090"] * 2, {"SOC": "SOC"}, None, "AMD EPYC 9654")[0].inter_socket == "xgmi_zen4"


@pytest.mark.parametrize("gpus, kinds, cpu, reason", [
    (["rtx_4090"] * 4, SOCKETS, "Apple M2", "GPUs across sockets, and the CPU 'Apple M2' is not one the model knows"),
    (["v100_sxm2"] * 8, {"NV1": "NV#", "NV2": "NV#", "SYS": "SYS"}, "", "a mixed NVLink topology (NV1, NV2, SYS): not modelled"),
    (["h100_sxm5", "rtx_4090"], None, "", "mixed GPUs h100_sxm5, rtx_4090: not modelled"),
    ([], None, "", "no GPU"),
])
def test_what_the_model_does_not_cover_says_why(gpus, kinds, cpu, reason):
    assert machine_fabric(gpus, kinds, None, cpu) == (None, reason)


def test_model_band_is_the_cross_validated_band_around_the_model():
    fabric = make_fabric("nvlink4", gpu="h100_sxm5")
    sizes = [8, SMALL_MESSAGE_MAX_BYTES, SMALL_MESSAGE_MAX_BYTES + 1, 256 * MiB]
    band = model_band(sizes, 8, fabric)
    assert [b["msg_bytes"] for b in band] == sizes
    for b in band:
        cost = collective_cost("all_reduce", b["msg_bytes"], num_ranks=8, fabric=fabric)
        assert (b["time_s"], b["busbw_bytes_per_s"], b["algorithm"], b["protocol"]) == (
            cost.time_s, cost.busbw_bytes_per_s, cost.algorithm, cost.protocol)
    for b in band:  # the busbw band is the time band of the model's cross-validated errors, inverted
        cost = collective_cost("all_reduce", b["msg_bytes"], num_ranks=8, fabric=fabric)
        assert (b["low"], b["high"]) == pytest.approx((b["busbw_bytes_per_s"] * cost.time_s / cost.time_high_s,
                                                       b["busbw_bytes_per_s"] * cost.time_s / cost.time_low_s))
        assert b["low"] < b["busbw_bytes_per_s"] < b["high"]
    # small messages have a wider band than large ones; PCIe a wider one than NVLink at large sizes
    def width(b):
        return b["high"] / b["low"]

    assert width(band[0]) > width(band[-1])
    pcie = model_band([256 * MiB], 4, make_fabric("pcie4", gpu="rtx_4090"))[0]
    assert width(pcie) > width(band[-1])
