"""The one rule for every file and folder a ``gpucomm`` verb writes (``--out``, ``--plot``, ``--out-dir``).

Checked before any work starts (a sweep must not run for minutes and then refuse its output), so a
bad path costs one line and exit status 2:

- the path is a file name: not empty, not an existing folder, not ``-`` (``/dev/stdout`` is standard output);
- it is never one of the verb's inputs (``gpucomm parse run.log --out run.log`` would replace the log);
- its folder exists: a missing folder is refused with its name, never created (a typo in
  ``--out /scratch/rsults/x.jsonl`` would otherwise leave folders wherever it points). Only a path
  ``gpucomm`` chose itself (``gpucomm bench``'s default ``results/...``) has its folder created;
- an existing regular file is refused unless ``--force``, as nccl-tests opens its ``-J`` file with
  ``"wx"`` (``src/common.cu``, v2.19.6); a FIFO, a pipe or a device (``/dev/stdout``) holds no
  data to lose and is written as it is;
- a new file must be creatable there: tried with a temporary file (permission bits say nothing
  to root, nor about a read-only mount).

:func:`check_output_file` applies it to a file, :func:`check_output_folder` to a folder of
several files (``gpucomm doctor --out-dir``), :func:`check_results_path` keeps the looser rule of
the Python API (``run_sweep(out=...)``: folders created, a file replaced). Standard library only.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from gpucomm import GpucommError

__all__ = ["check_output_file", "check_output_folder", "check_results_path", "is_regular_file", "same_path"]


def is_regular_file(path: str | os.PathLike) -> bool:
    """True where ``path`` exists and is a regular file (symbolic links followed): data that writing would replace.

    Examples
    --------
    >>> is_regular_file("/dev/null"), is_regular_file("/")
    (False, False)
    """
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):  # missing, or a name the system cannot hold (a NUL byte)
        return False


def same_path(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True where ``a`` and ``b`` name the same file: the same inode where both exist, else the same absolute path.

    Examples
    --------
    >>> same_path("/tmp/../tmp/x.log", "/tmp/x.log")
    True
    """
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def _folder_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot hold a new file (missing, a file, not writable), or None."""
    if not folder.exists():
        return "does not exist"
    if not folder.is_dir():
        return "is a file, not a folder"
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".gpucomm-write-test-"):
            pass
    except OSError as exc:
        return f"is not writable ({exc.strerror or type(exc).__name__})"
    return None


def _existing_file_problem(path: Path) -> str | None:
    """Why the existing ``path`` cannot be written, or None; never opens a FIFO (that would wait for a reader)."""
    if not is_regular_file(path):
        return None if os.access(path, os.W_OK) else "is not writable"
    try:
        with open(path, "a", encoding="utf-8"):  # appending nothing leaves the file as it is
            return None
    except OSError as exc:
        return f"is not writable ({exc.strerror or type(exc).__name__})"


def check_output_file(path: str | os.PathLike, *, flag: str = "--out", force: bool = False,
                      inputs: Iterable[str | os.PathLike] = (), example: str = "results/sweep.jsonl",
                      create_folder: bool = False) -> Path:
    """Refuse an output file that would lose data or land where the user did not say, before any work.

    Parameters
    ----------
    path : str or Path
        The file the verb will write (``--out FILE``, ``--plot FILE``).
    flag : str
        How the error names it (``--out``, ``--plot``).
    force : bool
        ``--force``: an existing regular file may be replaced.
    inputs : iterable of str or Path
        The files the verb reads (``-`` for standard input is ignored): the output may be none of them.
    example : str
        A file name shown in the error where ``path`` is not a file name.
    create_folder : bool
        True only for a path gpucomm chose itself: its missing folders will be created.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    GpucommError
        One line naming the path and what is wrong: not a file name (empty, ``-``, a folder), one of the
        inputs, a folder that does not exist or is a file or cannot be written, an existing file
        without ``force``, a file that cannot be written.

    Examples
    --------
    >>> check_output_file("/dev/null")
    PosixPath('/dev/null')
    >>> check_output_file("", flag="--plot", example="fit.html")
    Traceback (most recent call last):
    gpucomm.GpucommError: --plot '' is not a file name: expected a file name such as fit.html
    """
    text = os.fspath(path)
    where = f"{flag} {text!r}"
    if not text.strip() or "\0" in text or Path(text).is_dir():
        raise GpucommError(f"{where} is not a file name: expected a file name such as {example}")
    if text == "-":  # would be a file named "-" in the current folder, where standard output was meant
        raise GpucommError(f"{where} is not a file name: expected a file name such as {example}, or /dev/stdout for "
                           "standard output")
    target = Path(text)
    for source in inputs:
        if os.fspath(source) != "-" and same_path(target, source):
            raise GpucommError(f"{where} is also an input of this command: writing it would replace what is read; "
                               "expected another file name")
    if target.exists():
        if is_regular_file(target) and not force:
            raise GpucommError(f"{where} already exists: expected a new file name, or --force to replace it")
        problem = _existing_file_problem(target)
        if problem:
            raise GpucommError(f"{where} {problem}: expected a file this user can write")
        return target
    folder = target.parent
    if create_folder:  # the nearest folder that exists must take the new ones
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
    problem = _folder_problem(folder)
    if problem == "does not exist":
        raise GpucommError(f"{where}: folder {str(folder)!r} does not exist: expected a file in an existing folder "
                           "(create it first)")
    if problem:
        raise GpucommError(f"{where}: folder {str(folder)!r} {problem}: expected a file in a folder this user can "
                           "write to")
    return target


def check_output_folder(path: str, *, flag: str = "--out-dir", force: bool = False, names: Iterable[str] = (),
                        patterns: Iterable[str] = ()) -> Path:
    """Refuse an output folder before any work; create it (only it: its parent must exist).

    Parameters
    ----------
    path : str
        The folder (``--out-dir DIR``); an existing one is used as it is.
    flag : str
        How the error names it.
    force : bool
        ``--force``: files of an earlier run in the folder may be replaced.
    names, patterns : iterable of str
        The files the verb writes into the folder, by name and by glob pattern: an existing one
        is refused without ``force``.

    Returns
    -------
    Path
        The folder, absolute, created if it was missing.

    Raises
    ------
    GpucommError
        Empty, a file, a missing parent folder, not writable, or holding files of an earlier run
        without ``force``.
    """
    if not path.strip() or "\0" in path:
        raise GpucommError(f"{flag} {path!r} is not a folder name: expected a folder such as ./gpucomm-doctor")
    out = Path(path).expanduser().absolute()
    if out.exists() and not out.is_dir():
        raise GpucommError(f"{flag} {path} is a file: expected a folder (new or existing)")
    if not out.exists() and not out.parent.is_dir():
        what = "is a file, not a folder" if out.parent.exists() else "does not exist"
        raise GpucommError(f"{flag} {path}: its parent folder {out.parent} {what}: expected an existing parent folder "
                           "(create it first)")
    if out.is_dir() and not force:
        earlier = sorted({p.name for p in (out / n for n in names) if p.exists()}
                         | {p.name for pattern in patterns for p in out.glob(pattern)})
        if earlier:
            raise GpucommError(f"{flag} {path} already holds {', '.join(earlier)} of an earlier run: expected a new "
                               "folder, or --force to replace them")
    try:
        out.mkdir(exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".gpucomm-write-test-"):
            pass  # a real write: permission bits say nothing to root, nor about read-only mounts
    except OSError as exc:
        raise GpucommError(f"{flag} {path} is not writable ({exc.strerror or type(exc).__name__}): expected a "
                           "folder this user can write to") from None
    return out


def check_results_path(path: str | os.PathLike) -> None:
    """The Python API's rule (``run_sweep(out=...)``, ``run_tp_layer(out=...)``): raise unless a results file can be written.

    Looser than :func:`check_output_file`, which the ``gpucomm`` verbs apply first: an existing
    file is replaced and missing folders are created (by
    :class:`~gpucomm.measure.results.ResultsWriter`), as a script asked. The file must not be a
    folder, and either exist and be writable, or the nearest folder on its path that exists must
    take a new file. Checked before any rank starts.

    Raises
    ------
    GpucommError
        One line: what is in the way, and ``expected --out in a folder you can write to, or --no-out``.
    """
    text = os.fspath(path)
    fix = "expected --out in a folder you can write to, or --no-out"
    target = Path(text)
    if target.is_dir():
        raise GpucommError(f"results file {text!r} is a folder: expected a file name such as "
                           f"{str(target / 'sweep.jsonl')!r}, or --no-out")
    if target.exists():
        problem = _existing_file_problem(target)
        if problem:
            raise GpucommError(f"results file {text!r} cannot be written: it {problem}: {fix}")
        return
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    problem = _folder_problem(folder)
    if problem == "is a file, not a folder":
        raise GpucommError(f"results file {text!r} cannot be written: {str(folder)!r} is a file, not a folder: {fix}")
    if problem:
        raise GpucommError(f"results file {text!r} cannot be written: {str(folder)!r} {problem}: {fix}")
