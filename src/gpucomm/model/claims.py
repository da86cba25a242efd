"""Words for the course's comparative sentences, chosen from the numbers they compare.

A page that says "TP=8 is faster than TP=4" must say "slower" the day the model says so, and a page that states
a ranking ("NVLink gains, both PCIe cases lose") must stop the book build the day the ranking changes. The
helpers here do both: :func:`compare_word` and :func:`change_phrase` give the word or phrase a sentence takes
(glued into the page with MyST-NB's ``glue``), and :func:`require` raises :class:`ClaimError` with the sentence
itself when the numbers no longer support it (a page's hidden cell calls it; an exception in a cell fails the
build, ``nb_execution_raise_on_error``).

Nothing here is a model parameter: the functions only read the numbers they are given.
"""

from __future__ import annotations

import math

from gpucomm import GpucommError

__all__ = ["ClaimError", "change_phrase", "compare_word", "require"]


class ClaimError(AssertionError):
    """A page's sentence that its own numbers no longer support (the message quotes the sentence)."""


def _check_finite(**values: float) -> None:
    for name, value in values.items():
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise GpucommError(f"{name} must be a finite number, got {value!r}")


def compare_word(value: float, reference: float, *, higher: str, lower: str, same: str | None = None,
                 rel_tol: float = 0.0) -> str:
    """The word that says how ``value`` compares with ``reference``.

    Parameters
    ----------
    value, reference : float
        The two numbers, in the same unit (e.g. two speed-ups, two times in s).
    higher : str
        The word when ``value`` is above ``reference`` (e.g. ``"faster"`` for speed-ups, ``"slower"`` for times).
    lower : str
        The word when ``value`` is below ``reference``.
    same : str, optional
        The word when the two are within ``rel_tol`` of each other; without it, a tie raises.
    rel_tol : float
        Relative difference, ``|value / reference - 1|``, at or below which the two count as the same (default 0).

    Returns
    -------
    str
        ``higher``, ``lower`` or ``same``.

    Raises
    ------
    GpucommError
        If a number is not finite, ``reference`` is 0 with ``rel_tol`` > 0, or the two tie and ``same`` is not given.

    Examples
    --------
    >>> compare_word(2.48, 2.20, higher="faster", lower="slower")
    'faster'
    >>> compare_word(99.0, 100.0, higher="more", lower="less", same="about as much", rel_tol=0.05)
    'about as much'
    """
    _check_finite(value=value, reference=reference, rel_tol=rel_tol)
    if rel_tol > 0 and reference == 0:
        raise GpucommError("reference must be non-zero when rel_tol > 0")
    if value == reference or (rel_tol > 0 and abs(value / reference - 1) <= rel_tol):
        if same is None:
            raise GpucommError(f"{value!r} and {reference!r} are the same: give the word for a tie (same=...)")
        return same
    return higher if value > reference else lower


def change_phrase(value: float, reference: float, *, higher: str, lower: str, same: str = "about the same",
                  rel_tol: float = 0.005) -> str:
    """``"13 % faster"`` or ``"5 % slower"``: the relative change from ``reference`` to ``value`` in words.

    Parameters
    ----------
    value, reference : float
        The new and the old number, same unit, ``reference`` > 0.
    higher, lower : str
        The word after the percentage when ``value`` is above (below) ``reference``.
    same : str
        The phrase when the change rounds to within ``rel_tol`` (default ``"about the same"``).
    rel_tol : float
        Relative change at or below which :data:`same` is returned (default 0.5 %, the rounding of the percentage).

    Returns
    -------
    str
        ``"<p> % <word>"`` with ``p`` the rounded absolute change in percent, or ``same``.

    Raises
    ------
    GpucommError
        If a number is not finite or ``reference`` is not positive.

    Examples
    --------
    >>> change_phrase(2.48, 2.20, higher="faster", lower="slower")
    '13 % faster'
    >>> change_phrase(1.9, 2.0, higher="more", lower="less")
    '5 % less'
    """
    _check_finite(value=value, reference=reference)
    if reference <= 0:
        raise GpucommError(f"reference must be positive, got {reference!r}")
    change = value / reference - 1
    if abs(change) <= rel_tol:
        return same
    return f"{abs(change) * 100:.0f} % {higher if change > 0 else lower}"


def require(condition: bool, claim: str) -> None:
    """Stop the page when its numbers no longer support the sentence ``claim``.

    Parameters
    ----------
    condition : bool
        What the sentence asserts, computed from the numbers the page shows.
    claim : str
        The sentence (or its gist), quoted in the error so that the build log says which prose to rewrite.

    Returns
    -------
    None

    Raises
    ------
    ClaimError
        If ``condition`` is false: an :class:`AssertionError` whose message is ``claim``.

    Examples
    --------
    >>> require(2.48 > 2.20, "TP=8 is faster than TP=4 for Llama-3-8B decode")
    """
    if not condition:
        raise ClaimError(f"the page says {claim!r}, but its numbers no longer do: rewrite the sentence")
