"""A page's comparative sentences follow the model: the words are computed, and a flipped claim stops the build.

The pages take the words of their comparisons from :mod:`gpucomm.model.claims` (``change_phrase``, ``compare_word``,
glued into the prose) and state the rest with ``require``, which raises in the page's hidden cell, so that
``jupyter-book build`` (``raise_on_error``) fails. These tests run a page's code cells in this process, with MyST-NB's
``glue`` recorded instead of displayed, change one model parameter the way a recalibration would, and show:

* the word a sentence takes changes with the numbers (``faster`` becomes ``slower``), and always agrees with them;
* a sentence that the new numbers contradict raises :class:`~gpucomm.model.claims.ClaimError`, naming the sentence;
* chapters other than the validation chapter carry no case or sweep ids (C22t, S16, P06...) in their prose.

No book build is needed: the cells are plain Python over the package.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpucomm.model import claims
from gpucomm.model.hardware import calibration as cal

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)


def code_cells(page: Path) -> list[str]:
    """The source of each ``{code-cell}`` of a MyST page, in order, without its ``:tags:`` option lines."""
    cells = []
    for body in CELL.findall(page.read_text(encoding="utf-8")):
        lines = body.split("\n")
        while lines and lines[0].startswith(":"):
            lines.pop(0)
        cells.append("\n".join(lines))
    return cells


def run_page(page: Path, monkeypatch, *, record_claims: list | None = None) -> dict:
    """Execute every code cell of ``page`` in one namespace; return what it glued, by name.

    With ``record_claims`` a list, a false ``require`` appends its sentence there instead of raising, so that a test
    can read the words glued after it.
    """
    glued: dict = {}
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=True: glued.__setitem__(name, value))
    if record_claims is not None:
        monkeypatch.setattr(claims, "require", lambda ok, claim: None if ok else record_claims.append(claim))
    namespace: dict = {"__name__": "__page__"}
    for i, source in enumerate(code_cells(page)):
        exec(compile(source, f"{page.name}[cell {i}]", "exec"), namespace)  # noqa: S102 - the book's own cells
    return glued


def test_tp_inference_runs_and_its_claims_hold(monkeypatch):
    glued = run_page(BOOK / "tp_inference.md", monkeypatch)
    # the TP=4 -> TP=8 sentence says what the glued speed-ups say
    word = glued["s8_tp8_vs_tp4"]
    assert word.endswith("faster" if glued["s8_h100_tp8"] > glued["s8_h100_tp4"] else "slower"), word


def test_tp8_word_flips_with_the_model(monkeypatch, scale_parameter):
    """More NVLink latency per step makes TP=8 (14 ring steps) lose to TP=4 (6): the sentence says 'slower'."""
    base = run_page(BOOK / "tp_inference.md", monkeypatch)["s8_tp8_vs_tp4"]
    factor = 20.0 if base.endswith("faster") else 0.05
    scale_parameter(cal.TUNER_LATENCY_SCALE, "nvlink4", factor)
    broken: list = []
    glued = run_page(BOOK / "tp_inference.md", monkeypatch, record_claims=broken)
    flipped = glued["s8_tp8_vs_tp4"]
    assert flipped.split()[-1] != base.split()[-1], (base, flipped)
    assert flipped.endswith("faster" if glued["s8_h100_tp8"] > glued["s8_h100_tp4"] else "slower"), flipped
    assert broken, "so large a change of the NVLink latency leaves every other sentence of the page true"


def test_a_flipped_ranking_stops_the_page(monkeypatch, scale_parameter):
    """Host-staged PCIe at half its measured efficiency: the RTX 4090s (no P2P) now gain less from TP=2 in prefill than
    the H100 PCIe cards, and the page refuses to say the opposite."""
    scale_parameter(vars(cal), "HOST_STAGED_EFFICIENCY", 0.5)
    with pytest.raises(claims.ClaimError, match="gain less than the RTX 4090s"):
        run_page(BOOK / "tp_inference.md", monkeypatch)


def test_pcie_staging_claim_stops_the_page(monkeypatch, scale_parameter):
    """Staging through host memory as efficient as P2P: 'P2P gets about twice what staging does' is false, the page stops."""
    run_page(BOOK / "pcie.md", monkeypatch)
    scale_parameter(vars(cal), "HOST_STAGED_EFFICIENCY", 1.8)
    with pytest.raises(claims.ClaimError, match="P2P gets about twice what staging does"):
        run_page(BOOK / "pcie.md", monkeypatch)


def test_nvswitch_nvls_claim_stops_the_page(monkeypatch, scale_parameter):
    """NVLS at 60 % of its fitted efficiency loses to the ring at 1 GiB: 'NVLS is faster than the ring' stops the page."""
    run_page(BOOK / "nvswitch.md", monkeypatch)
    scale_parameter(vars(cal), "NVLS_EFFICIENCY", 0.6)
    with pytest.raises(claims.ClaimError, match="NVLS is faster than the ring"):
        run_page(BOOK / "nvswitch.md", monkeypatch)


def test_training_network_claim_stops_the_page(monkeypatch, scale_parameter):
    """The network at a tenth of its fitted efficiency: EDR's DP all_reduce is no longer small next to the compute."""
    run_page(BOOK / "training.md", monkeypatch)
    scale_parameter(vars(cal), "NET_EFFICIENCY", 0.1)
    with pytest.raises(claims.ClaimError, match="EDR's DP all_reduce is still small"):
        run_page(BOOK / "training.md", monkeypatch)


def test_choosing_hardware_prefill_word_follows_the_model(monkeypatch, scale_parameter):
    """Host staging three times as efficient: TP=2 on two RTX 4090s stops slowing prefill, and the sentence says so."""
    base = run_page(BOOK / "choosing_hardware.md", monkeypatch)
    assert base["r4_pre_word"] == ("gets slower" if base["r4_pre_speedup"] < 1 else "gets faster too")
    scale_parameter(vars(cal), "HOST_STAGED_EFFICIENCY", 3.0 if base["r4_pre_speedup"] < 1 else 1 / 3)
    glued = run_page(BOOK / "choosing_hardware.md", monkeypatch, record_claims=[])
    assert glued["r4_pre_word"] != base["r4_pre_word"]
    assert glued["r4_pre_word"] == ("gets slower" if glued["r4_pre_speedup"] < 1 else "gets faster too")


def test_rack_scale_tree_claim_stops_the_page(monkeypatch, scale_parameter):
    """The network at a tenth of its efficiency: two nodes now lose more than the NIC ratio, and the page stops."""
    run_page(BOOK / "rack_scale.md", monkeypatch)
    scale_parameter(vars(cal), "NET_EFFICIENCY", 0.1)
    with pytest.raises(claims.ClaimError, match="two nodes lose less than the NIC ratio"):
        run_page(BOOK / "rack_scale.md", monkeypatch)


def test_why_communication_slower_than_one_gpu_follows_the_model(monkeypatch, scale_parameter):
    """Host staging 8x as efficient: TP=8 prefill without P2P beats one GPU; the sentence says so and quiz 4 stops."""
    base = run_page(BOOK / "why_communication.md", monkeypatch)
    assert base["sp_pre_nop2p_word"] == ("slower than one GPU" if base["sp_pre_nop2p"] < 1 else "still faster than one GPU")
    scale_parameter(vars(cal), "HOST_STAGED_EFFICIENCY", 8.0)
    broken: list = []
    glued = run_page(BOOK / "why_communication.md", monkeypatch, record_claims=broken)
    assert glued["sp_pre_nop2p"] > 1 and glued["sp_pre_nop2p_word"] == "still faster than one GPU"
    assert any("quiz 4" in claim for claim in broken), broken


def test_small_messages_vllm_crossover_stops_the_page(monkeypatch, scale_parameter):
    """Custom kernels 20x slower per step: their lines no longer cross where vLLM switches, and the page stops."""
    run_page(BOOK / "small_messages.md", monkeypatch)
    scale_parameter(vars(cal), "LL_STEP_LATENCY_S", 20.0)
    with pytest.raises(claims.ClaimError, match="cross about where vLLM switches"):
        run_page(BOOK / "small_messages.md", monkeypatch)


CASE_ID = re.compile(r"\b(?:case|sweep|point)s?\s+[CSP]\d{2}[a-z]?\b|\b[CSP]\d{2}t?(?:-[A-Za-z]+)?\b(?=[),;.:\s])")
PLAIN_PAGES = tuple(sorted(p.name for p in BOOK.glob("*.md") if p.name != "validation.md"))
"""Every chapter but the validation chapter, where case ids and fits belong."""


def prose(page: Path) -> str:
    """A page's text without its code cells and glue names (ids in code, where the page reads its data, are fine)."""
    return re.sub(r"\{glue(?::\w+)?\}`[^`]*`", "", CELL.sub("", page.read_text(encoding="utf-8")))


@pytest.mark.parametrize("name", PLAIN_PAGES)
def test_chapters_carry_no_case_ids(name):
    found = sorted(set(CASE_ID.findall(prose(BOOK / name))))
    assert not found, f"{name} names validation cases in its prose: {found} (they belong in validation.md)"
