"""Look-up by key in the package's catalogs, with one clear error for an unknown key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from gpucomm import GpucommError

T = TypeVar("T")


def lookup(table: Mapping[str, T], key: object, *, what: str, entry_type: type,
           aliases: Mapping[str, str] | None = None, dashes_as_underscores: bool = False) -> T:
    """Return ``table[key]`` for a case-insensitive key; an ``entry_type`` instance is returned unchanged.

    Parameters
    ----------
    table : mapping of str to entry
        The catalog.
    key : str or entry
        The key given by a user (spaces around it and letter case are ignored).
    what : str
        What the table holds, for the error message (``"link"``, ``"GPU"``).
    entry_type : type
        Entries of this type pass through untouched.
    aliases : mapping of str to str, optional
        Other accepted names for some keys.
    dashes_as_underscores : bool
        Accept ``h100-sxm5`` for ``h100_sxm5``.

    Returns
    -------
    entry
        ``table[key]`` (after the aliases), or ``key`` itself when it is already an ``entry_type``.

    Raises
    ------
    GpucommError
        If the key is unknown; the message names it and lists the accepted keys.

    Examples
    --------
    >>> lookup({"a": 1}, " A ", what="letter", entry_type=int)
    1
    >>> lookup({"a": 1}, "b", what="letter", entry_type=int)
    Traceback (most recent call last):
    ...
    gpucomm.GpucommError: unknown letter 'b': expected one of a
    """
    if isinstance(key, entry_type):
        return key
    name = str(key).strip().lower()
    if dashes_as_underscores:
        name = name.replace("-", "_")
    aliases = aliases or {}
    entry = table.get(aliases.get(name, name))
    if entry is None:
        raise GpucommError(f"unknown {what} {key!r}: expected one of {', '.join([*table, *aliases])}")
    return entry
