"""``gpucomm.model.chapters.ep_below_nccl``: every number the page glues, and its words follow the model."""

from __future__ import annotations

import pytest

from gpucomm.model import claims
from gpucomm.model.chapters import ep_below_nccl


@pytest.fixture(scope="module")
def values(committed_numbers):
    """``ep_below_nccl.numbers()`` with the committed model, computed once for the tests that change nothing."""
    return committed_numbers(ep_below_nccl.numbers)


def test_numbers_give_every_key_the_page_reads(values, check_page_numbers):
    check_page_numbers("ep_below_nccl", values, numbers="positive")


def test_words_agree_with_the_latency_shares(values):
    for tag in ("dec", "pre"):
        assert values[f"{tag}_bound"] == ("mostly latency" if values[f"{tag}_lat_pct"] > 50 else "mostly transfer")
    assert values["dec_tokens"] < values["cross_tokens"] < values["pre_tokens"]
    assert values["slots_ratio"] == pytest.approx(values["experts"] / values["topk"])


def test_a_slower_nic_stops_the_decode_claim(monkeypatch):
    """A NIC at a fifth of its rate: DeepEP's normal kernels would put more on the network than one NIC carries."""
    real = ep_below_nccl.get_network

    def slow(key):
        nic = real(key)
        return type(nic)(**{**vars(nic), "bw_bytes_per_s": nic.bw_bytes_per_s / 5}) if key == "ib_ndr" else nic

    monkeypatch.setattr(ep_below_nccl, "get_network", slow)
    with pytest.raises(claims.ClaimError, match="close to, and below, one NIC's rate"):
        ep_below_nccl.numbers()
