"""``gpucomm.model.chapters.scale_out``: every value the page glues, and its claims follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import scale_out
from gpucomm.model.hardware import calibration as cal


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``scale_out.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(scale_out.numbers)


def test_numbers_cover_the_page_and_are_finite(values, check_page_numbers):
    from gpucomm.measure.logs.nccl_tests import read_bundled_log

    check_page_numbers("scale_out", {**values, **scale_out.sweep_numbers(read_bundled_log("C08").out_of_place())})


def test_multi_node_busbw_is_read_against_the_node_nic_total(values):
    """A ring reaches about the node's NIC total (not one NIC's); NVLSTree goes beyond it; A3 Mega's run too."""
    assert values["ib_ndr_gbps"] < values["ring2_busbw"] <= values["node_nic_gbps"]
    assert values["h2_nccl_busbw"] > values["node_nic_gbps"] and values["h2_nccl_algo"] == "NVLSTree"
    assert values["c08_ring_busbw"] < values["c08_node_nic_gbps"] < values["c08_busbw"]
    rows = scale_out.picks_table()
    assert len(rows) == 9 and {r["nodes"] for r in rows} == {2, 8, 32}


def test_the_ring_word_follows_the_model(monkeypatch, scale_parameter):
    """The network at a tenth of its efficiency: NVLSTree's lead over a ring changes, and the glued phrase with it."""
    base = scale_out.numbers()["nccl_vs_ring"]
    scale_parameter(vars(cal), "NET_EFFICIENCY", 0.1)
    monkeypatch.setattr(claims, "require", lambda ok, claim: None)
    assert scale_out.numbers()["nccl_vs_ring"] != base


def test_a_slow_network_stops_the_page(monkeypatch, scale_parameter):
    """The network at a tenth of its efficiency: the ring no longer reaches far above one NIC, and the page stops."""
    scale_out.numbers()
    scale_parameter(vars(cal), "NET_EFFICIENCY", 0.1)
    with pytest.raises(claims.ClaimError):
        scale_out.numbers()
    broken: list = []
    monkeypatch.setattr(claims, "require", lambda ok, claim: None if ok else broken.append(claim))
    scale_out.numbers()
    assert any("a plain ring's busbw is far above one NIC" in claim for claim in broken), broken
