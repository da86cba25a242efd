"""The line classifier of the nccl-tests parser: what kind of line each line of a log is, and where runs start.

A log is nccl-tests' table with whatever came with it: the header lines nccl-tests prints (version,
``nThread ...``, device list, column titles, footer), a command line, NCCL_DEBUG=INFO lines, launcher
prefixes. :func:`strip_prefix` removes the prefixes; :func:`classify` names the kind of what is left
(:data:`COMMENT_KINDS` for ``#`` lines, then ``column_titles``, ``comment``, ``command_part``,
``command_end``, ``command_line``, ``row``, ``other``), which :mod:`gpucomm.measure.logs.nccl_tests_parse` hands to one
handler per kind. :func:`run_spans` splits a log holding several runs. Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpucomm.measure.logs.nccl_tests_layouts import layout_from_header, looks_like_row

__all__ = ["Line", "classify", "strip_prefix", "is_run_start", "run_spans", "row_key", "COMMENT_KINDS"]

PREFIXES = (
    # Open MPI --tag-output ([1,0]<stdout>:), Intel MPI / MPICH -l and -prepend-rank ([0]), a timestamp
    # ([2024-05-01 10:00:00]): a bracketed tag, written directly before the text or after spaces
    re.compile(r"^\s*\[[^\]\n]{1,80}\](?:<(?:stdout|stderr)>)?:?[ \t]?"),
    re.compile(r"^\s*\d{1,6}:\s"),                        # srun --label
    re.compile(r"^\s*>\s?"),                              # Markdown quote (logs pasted into READMEs)
)
RANK_MARKER_RE = re.compile(r"\[\d{1,6}(?:,\d{1,6})?\](?:<(?:stdout|stderr)>)?:?")
"""A launcher's rank marker (``[0]``, ``[1,0]<stdout>:``) inside a line: mpirun tags each chunk a rank writes, and
nccl-tests writes a row in several ``printf`` calls (``writeBenchmarkLinePreamble``, ``writeBenchmarkLineBody``,
``src/util.cu``), so markers land between its columns (``... -1[0]    1626.5    0.64 ...``, as posted in NCCL issue
threads). A bus id (``[0x18]``, ``[0000:18:00]``) is not one."""
MAX_PREFIXES = 4  # launchers nest (srun --label around mpirun --tag-output, then a timestamp): strip up to 4
HEADER_RE = re.compile(r"nThread\s+(\d{1,9})\s+nGpus\s+(\d{1,9})\s+minBytes\s+(\d{1,20})\s+maxBytes\s+(\d{1,20})"
                        r"(?:\s+step:\s+(\d{1,20})\((factor|bytes)\))?")
HEADER_KEYS = (("warmup iters", "warmup_iters"), ("agg iters", "agg_iters"), ("iters", "iters"),
                ("validation", "validation"), ("graph", "graph"), ("unalign", "unalign"))
DEVICE_RE = re.compile(r"^#?\s*Rank\s+(\d{1,9})\s+(?:Group\s+\d{1,9}\s+)?Pid\s+\d{1,12}\s+on\s+(\S+)\s+device\s+(\d{1,6})"
                        r"\s+\[([^\]]{0,40})\]\s*(.*)$")
VERSION_RE = re.compile(r"nccl-tests version\s+(\S+)")
LIBRARY_RE = re.compile(r"nccl-library=(\d{1,9})")
NCCL_VERSION_RE = re.compile(r"NCCL version\s+(\d{1,3}\.\d{1,3}\.\d{1,3})")
PERF_RE = re.compile(r"(?:^|[/\s])([a-z_]+)_perf(?:\s|$)")
AVG_RE = re.compile(r"Avg bus bandwidth\s*:\s*(\S+)")
REDUCED_RE = re.compile(r"Reducing maxBytes to\s+(\d{1,20})")
OOB_RE = re.compile(r"Out of bounds values\s*:\s*(\d{1,12})\s*(\w*)")
COMMAND_START_RE = re.compile(r"(?:^|[\s/])(?:mpirun|mpiexec|srun|torchrun|[a-z_]+_perf)(?:\s|$)")
COLLECTIVE_START_RE = re.compile(r"Collective test starting:\s*([a-z_]+?)(?:_perf)?\s*$")
NOT_MEASURED_RE = re.compile(r"^(out-of-place|in-place)\s*:\s*not measured\b", re.IGNORECASE)
# the first line of gpucomm bench's table (gpucomm.measure.results._sweep_comments)
GPUCOMM_HEADER_RE = re.compile(r"^gpucomm\.measure\s+([a-z_]{1,40}):\s+(\d{1,9})\s+ranks\b")
GPUCOMM_BACKEND_RE = re.compile(r"\bbackend\s+([a-z]{1,20})\b")
# its '# time: one operation, the maximum over ranks (-a 3; ...)' line (_OVER_RANKS of gpucomm.measure.results)
GPUCOMM_TIMING_RE = re.compile(r"^time: one operation, [^(]{0,80}\(-a ([0-3])\b")
# nccl-tests' note when -R asks for more than the NCCL it runs on has (src/common.cu, v2.19.6)
REGISTRATION_NOTE_RE = re.compile(r"^Option -R.{0,40}not supported before NCCL [\d.]{1,10}\.\s*(Defaulting to local|Ignoring)")
GPUCOMM_ITERS_RE = re.compile(r"\biters\s+(\d{1,9})(?:\s+x\s+\d{1,9}\s+blocks)?,\s+warm-up\s+(\d{1,9}),\s+check\s+([01])\b")


SOURCE_RE = re.compile(r"^source:\s*(.*)$", re.IGNORECASE)  # a '# source: <URL>' line (bundled logs, the test corpus)
COMMAND_RE = re.compile(r"^command:\s*(.*)$", re.IGNORECASE)  # a '# command: ...' line

COMMENT_KINDS = (
    ("source", SOURCE_RE), ("command", COMMAND_RE), ("run_header", HEADER_RE), ("max_bytes_reduced", REDUCED_RE),
    ("gpucomm_header", GPUCOMM_HEADER_RE), ("not_measured", NOT_MEASURED_RE), ("device", DEVICE_RE),
    ("version", VERSION_RE), ("collective_start", COLLECTIVE_START_RE), ("average", AVG_RE), ("out_of_bounds", OOB_RE),
    ("gpucomm_timing", GPUCOMM_TIMING_RE),
)
"""The kinds of ``#`` line, each with the pattern that recognises it (searched in the body after ``#``), in the order
tried: the first that matches names the line."""


@dataclass(frozen=True)
class Line:
    """One classified line of a log.

    Attributes
    ----------
    number : int
        1-based line number in the text.
    kind : str
        A kind of :data:`COMMENT_KINDS`, ``column_titles``, ``comment`` (any other ``#`` line),
        ``command_part`` (a command continued on the next line), ``command_end``, ``registration_note``, ``command_line``,
        ``row`` (a result row, maybe cut or garbled), ``other`` (an NCCL INFO line, anything else).
    text : str
        The line without its launcher prefixes (columns where nccl-tests put them).
    body : str
        ``#`` lines: what follows the ``#`` signs, stripped; other lines: ``text`` stripped.
    match : re.Match or None
        The match of the kind's pattern, for the kinds of :data:`COMMENT_KINDS`.
    """

    number: int
    kind: str
    text: str
    body: str
    match: re.Match | None = None


def classify(number: int, raw: str, pending_command: bool = False) -> Line | None:
    """The kind of one line of a log (None for a blank line).

    Parameters
    ----------
    number : int
        Its 1-based line number.
    raw : str
        The line as read.
    pending_command : bool
        Whether the line before it was a command continued by a backslash.

    Returns
    -------
    Line or None
        The line, its kind and what its kind needs.

    Examples
    --------
    >>> [classify(1, s).kind for s in ("# Avg bus bandwidth : 224.8", "[1,0]<stdout>:  8  2  float  sum  -1  1.0  0.01  0.01  0",
    ...                               "mpirun -np 8 ./build/all_reduce_perf -b 8", "NCCL INFO comm 0x1 rank 0")]
    ['average', 'row', 'command_line', 'other']
    """
    text = strip_prefix(raw)
    stripped = text.strip()
    if not stripped:
        return None
    if stripped.startswith("#"):
        body = stripped.lstrip("#").strip()
        for kind, pattern in COMMENT_KINDS:
            match = pattern.search(body)
            if match:
                return Line(number, kind, text, body, match)
        return Line(number, "column_titles" if layout_from_header(body.split()) is not None else "comment", text, body)
    if RANK_MARKER_RE.search(stripped):
        unmarked = RANK_MARKER_RE.sub(" ", text)
        if looks_like_row(unmarked.split()):
            text, stripped = unmarked, unmarked.strip()
    if stripped.endswith("\\") and (pending_command or COMMAND_START_RE.search(stripped)):
        return Line(number, "command_part", text, stripped)
    if pending_command:
        return Line(number, "command_end", text, stripped)
    note = REGISTRATION_NOTE_RE.search(stripped)
    if note:
        return Line(number, "registration_note", text, stripped, note)
    is_row = looks_like_row(stripped.split())
    if "_perf" in stripped and PERF_RE.search(stripped) and not is_row:
        return Line(number, "command_line", text, stripped)
    return Line(number, "row" if is_row else "other", text, stripped)


def strip_prefix(line: str) -> str:
    """``line`` without the launcher prefixes of :data:`PREFIXES` in front of it (several, nested)."""
    for _ in range(MAX_PREFIXES):
        for pattern in PREFIXES:
            stripped = pattern.sub("", line, count=1)
            if stripped != line:
                line = stripped
                break
        else:
            return line
    return line



def is_run_start(stripped: str) -> bool:
    """A line that begins an invocation of an nccl-tests binary: its version, test name, header or command."""
    if stripped.startswith("#"):
        body = stripped.lstrip("#").strip()
        return bool(HEADER_RE.search(body) or VERSION_RE.search(body) or COLLECTIVE_START_RE.search(body)
                    or GPUCOMM_HEADER_RE.match(body) or body.lower().startswith("command:"))
    if looks_like_row(stripped.split()):
        return False
    return bool(COMMAND_START_RE.search(stripped) or ("_perf" in stripped and PERF_RE.search(stripped)))


def _restarts(keys: list[tuple[int, str, str]]) -> list[int]:
    """Where a sweep starts again among the rows of one invocation (row keys: size, type, redop).

    ``-d all`` and ``-o all`` sweep each type or operation in turn, and two runs can be printed one after the other
    without a header between them: the size falls back to the start with another type or operation, or to the first
    size of the sweep. A fall to any other size is a shuffled sweep, kept as one (a ``unordered_sizes`` warning).
    """
    starts = [0]
    for k in range(1, len(keys)):
        size, kind = keys[k][0], keys[k][1:]
        before, first = keys[k - 1], keys[starts[-1]]
        if size < before[0] and (kind != before[1:] or size <= first[0]):
            starts.append(k)
    return starts


def run_spans(numbered: list[tuple[int, str]]) -> list[tuple[list[int], list[int]]]:
    """Split numbered lines into runs: per run, (indices of its lines, indices of its result rows).

    Invocations are cut at a :func:`is_run_start` line that follows result rows; inside one, sweeps are
    cut where a sweep starts again (:func:`_restarts`; each sweep keeps the invocation's lines before its
    first row and after its last one), unless the invocation is several interleaved single-process runs.

    Parameters
    ----------
    numbered : list of (int, str)
        The log's lines with their 1-based numbers.

    Returns
    -------
    list of (list of int, list of int)
        Per run, the indices (into ``numbered``) of its lines and of its result rows; runs without a row are left out.
    """
    invocations: list[list[int]] = [[]]
    has_rows = False
    for i, (_, raw) in enumerate(numbered):
        stripped = strip_prefix(raw).strip()
        if has_rows and is_run_start(stripped):
            invocations.append([])
            has_rows = False
        invocations[-1].append(i)
        if row_key(raw) is not None:
            has_rows = True
    spans: list[tuple[list[int], list[int]]] = []
    for lines in invocations:
        rows = [i for i in lines if row_key(numbered[i][1]) is not None]
        if not rows:
            continue
        pre = [i for i in lines if i < rows[0]]
        post = [i for i in lines if i > rows[-1]]
        headers = sum(1 for i in pre if HEADER_RE.search(strip_prefix(numbered[i][1])))
        ranks = [m.group(1) for i in pre for m in [DEVICE_RE.match(strip_prefix(numbered[i][1]).strip().lstrip("#").strip())]
                 if m]
        interleaved = headers > 1 or len(set(ranks)) != len(ranks)
        starts = [0] if interleaved else _restarts([row_key(numbered[i][1]) for i in rows])
        for a, b in zip(starts, [*starts[1:], len(rows)]):
            first, last = rows[a], rows[b - 1]
            body = [i for i in lines if first <= i <= last]
            spans.append((pre + body + post, rows[a:b]))
    return spans


def row_key(raw: str) -> tuple[int, str, str] | None:
    """A result row's size, type and redop (empty when the layout has none); None for any other line.

    Parameters
    ----------
    raw : str
        The line as read.

    Returns
    -------
    tuple or None
        ``(size_bytes, type, redop)``.
    """
    line = classify(0, raw)
    if line is None or line.kind != "row":
        return None
    tokens = line.body.split()
    redop = tokens[3] if len(tokens) > 3 and not tokens[3][:1].isdigit() and tokens[3][:1] != "-" else ""
    return int(tokens[0]), tokens[2], redop
