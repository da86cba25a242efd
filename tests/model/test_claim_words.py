"""The course's claim helpers: the word follows the numbers, a false claim stops the page."""

import pytest

from gpucomm import GpucommError
from gpucomm.model.claims import ClaimError, change_phrase, compare_word, require


@pytest.mark.parametrize(("value", "reference", "word"), [(2.0, 1.0, "faster"), (1.0, 2.0, "slower")])
def test_compare_word_follows_the_order(value, reference, word):
    assert compare_word(value, reference, higher="faster", lower="slower") == word


def test_compare_word_tie_needs_a_word():
    with pytest.raises(GpucommError, match="same"):
        compare_word(1.0, 1.0, higher="a", lower="b")
    assert compare_word(1.0, 1.04, higher="a", lower="b", same="c", rel_tol=0.05) == "c"
    assert compare_word(1.0, 1.06, higher="a", lower="b", same="c", rel_tol=0.05) == "b"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "1"])
def test_compare_word_refuses_non_numbers(bad):
    with pytest.raises(GpucommError, match="finite"):
        compare_word(bad, 1.0, higher="a", lower="b")


def test_change_phrase_rounds_and_names_the_direction():
    assert change_phrase(2.48, 2.20, higher="faster", lower="slower") == "13 % faster"
    assert change_phrase(2.0, 2.2, higher="faster", lower="slower") == "9 % slower"
    assert change_phrase(1.001, 1.0, higher="faster", lower="slower") == "about the same"
    with pytest.raises(GpucommError, match="positive"):
        change_phrase(1.0, 0.0, higher="a", lower="b")


def test_require_quotes_the_sentence():
    require(True, "anything")
    with pytest.raises(ClaimError, match="TP=8 is faster") as err:
        require(False, "TP=8 is faster")
    assert isinstance(err.value, AssertionError)
