"""The nccl-tests text parser's loop: each line classified (:mod:`gpucomm.measure.logs.nccl_tests_lines`), then one handler per kind.

:func:`parse_lines` walks the numbered lines of a log (or of one run of it), hands each to the handler
of its kind (:data:`HANDLERS`), which fills a :class:`ParseState`, and then completes what the
lines say (command, devices, format warnings) and hands the records to
:func:`gpucomm.measure.logs.nccl_tests_checks.finish_log`. Standard library and :mod:`gpucomm.model` only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from gpucomm import GpucommError
from gpucomm.measure.logs.nccl_tests_checks import finish_log
from gpucomm.measure.logs.nccl_tests_header import (
    ranks_from_devices,
    read_command,
    read_device,
    read_gpucomm_header,
    read_gpucomm_timing,
    read_registration_note,
    read_run_header,
    read_version,
)
from gpucomm.measure.logs.nccl_tests_layouts import (
    HALF_WIDTH,
    LAYOUTS,
    SIGNED_INT_RE,
    TIMESTAMP_RE,
    WRONG_MARK,
    Layout,
    blank_half,
    infer_layout,
    layout_from_header,
    parse_float,
    parse_half,
    split_fused,
    title_half_ends,
)
from gpucomm.measure.logs.nccl_tests_lines import NCCL_VERSION_RE, Line, classify
from gpucomm.measure.logs.nccl_tests_records import PERF_BINARY_TO_COLLECTIVE, LogWarning, ParsedLog, Record
from gpucomm.measure.logs.nccl_tests_shape import old_gather_scatter

__all__ = ["ParseState", "HANDLERS", "parse_lines", "line_list"]

HalfEnds = tuple[tuple[int, ...], tuple[int, ...]]
LAYOUTS_BY_NAME = {layout.name: layout for layout in LAYOUTS.values() if not layout.per_iteration}

NO_ROWS = ("no nccl-tests result rows found: expected lines such as '  1073741824  268435456  float  sum  -1  7163.5  "
           "149.89  224.84  0  7161.8  149.93  224.89  0' (size, count, type, [redop, root,] then time, algbw, busbw, "
           "#wrong or error for out-of-place and in-place), as all_reduce_perf prints them")
"""The start of the error for a text without a single result row."""


@dataclass
class ParseState:
    """What the handlers have read so far from the lines of one log (or one run).

    Attributes
    ----------
    meta, warnings, records
        The :class:`ParsedLog`'s metadata, warnings and records being built.
    layout : Layout or None
        The layout of the first row read (or of the column titles).
    header_layout : Layout or None
        The layout the last column-title line gives; rows of another width are refused.
    pending_command : str
        A command continued by a backslash, waiting for its next line.
    devices, commands : list
        The device-list entries and command lines seen.
    seen_headers : int
        ``nThread ...`` header lines seen (more than one: interleaved runs).
    legacy_rows : list of int
        Indices into ``records`` of old-layout rows (their ``error`` column).
    incomplete, unplaced, bad : list of int
        Line numbers of rows with too few columns, of those with one half where nothing places it, and of
        rows that are not numbers.
    not_measured : bool or None
        The half a ``# in-place: not measured`` line names (True: in-place).
    half_ends : tuple or None
        Where each half's columns end (:func:`gpucomm.measure.logs.nccl_tests_layouts.title_half_ends`).
    """

    meta: dict = field(default_factory=dict)
    warnings: list[LogWarning] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    layout: Layout | None = None
    header_layout: Layout | None = None
    pending_command: str = ""
    devices: list[dict] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    seen_headers: int = 0
    legacy_rows: list[int] = field(default_factory=list)
    incomplete: list[int] = field(default_factory=list)
    unplaced: list[int] = field(default_factory=list)
    bad: list[int] = field(default_factory=list)
    not_measured: bool | None = None
    half_ends: HalfEnds | None = None


# ----------------------------------------------------------------------------------------------- '#' lines

def _on_source(state: ParseState, line: Line) -> None:
    state.meta.setdefault("source", line.match.group(1).strip())


def _on_command(state: ParseState, line: Line) -> None:
    state.commands.append(line.match.group(1).strip())


def _on_run_header(state: ParseState, line: Line) -> None:
    state.seen_headers += 1
    read_run_header(line.body, line.match, state.meta)


def _on_max_bytes_reduced(state: ParseState, line: Line) -> None:
    # printed after the header line when the GPUs cannot hold 2 or 3 buffers of maxBytes (src/common.cu):
    # the sweep ends at this size on purpose
    meta, reduced = state.meta, int(line.match.group(1))
    meta.setdefault("requested_max_bytes", meta.get("maxBytes"))
    meta["maxBytes"] = reduced
    state.warnings.append(LogWarning(
        "max_bytes_reduced", f"line {line.number}: nccl-tests reduced maxBytes to {reduced} B "
        + (f"(from {meta['requested_max_bytes']} B) " if meta.get("requested_max_bytes") else "")
        + "because GPU memory cannot hold the buffers: the sweep ends there by design, not by a crash"))


def _on_gpucomm_header(state: ParseState, line: Line) -> None:
    read_gpucomm_header(line.body, line.match, state.meta)


def _on_not_measured(state: ParseState, line: Line) -> None:
    half = line.match.group(1).lower()
    state.not_measured = half == "in-place"
    state.meta["not_measured"] = half


def _on_device(state: ParseState, line: Line) -> None:
    state.devices.append(read_device(line.match))


def _on_version(state: ParseState, line: Line) -> None:
    read_version(line.body, line.match, state.meta)


def _on_collective_start(state: ParseState, line: Line) -> None:
    stem = line.match.group(1)
    state.meta.setdefault("collective", PERF_BINARY_TO_COLLECTIVE.get(stem, stem))
    state.meta.setdefault("collective_source", "log")


def _on_average(state: ParseState, line: Line) -> None:
    try:
        value = parse_float(line.match.group(1))
    except ValueError:
        value = None
    if value is not None:
        state.meta.setdefault("avg_busbw_gbps", value)


def _on_out_of_bounds(state: ParseState, line: Line) -> None:
    count, verdict = int(line.match.group(1)), line.match.group(2)
    state.meta.setdefault("out_of_bounds", count)
    if count or verdict.upper() == "FAILED":
        state.warnings.append(LogWarning("out_of_bounds", f"line {line.number}: '{line.body}': the data check failed "
                                                          "(values out of bounds); the bandwidth is not trustworthy"))


def _on_column_titles(state: ParseState, line: Line) -> None:
    found = layout_from_header(line.body.split())
    old = state.header_layout
    if old is not None and (old.name, old.width) != (found.name, found.width):
        state.warnings.append(LogWarning("interleaved_runs", f"line {line.number}: a second table header with a "
                                                             "different layout: several runs are mixed"))
    state.header_layout = state.layout = found
    state.half_ends = title_half_ends(line.text, found) or state.half_ends


# ----------------------------------------------------------------------------------------------- other lines

def _on_command_part(state: ParseState, line: Line) -> None:
    state.pending_command += line.body[:-1] + " "  # a command continued on the next line


def _on_command_end(state: ParseState, line: Line) -> None:
    command, state.pending_command = state.pending_command + line.body, ""
    if "_perf" in command:
        state.commands.append(command)


def _on_command_line(state: ParseState, line: Line) -> None:
    state.commands.append(line.body)


def _ignore(state: ParseState, line: Line) -> None:
    """Lines that say nothing the parser reads (comments, NCCL INFO lines)."""


def _row_layout(state: ParseState, tokens: list[str], text: str) -> tuple[Layout | None, bool | None]:
    """The layout of a row and, for a row printing one half, which half is blank (True: in-place)."""
    header = state.header_layout
    if header is not None:
        layout = header if len(tokens) == header.width else None
    else:
        layout = infer_layout(tokens)
    if layout is not None:
        return layout, None
    one_half = (header if header is not None and len(tokens) == header.width - header.half_width
                else infer_layout(tokens, halves=1) if header is None else None)
    blank = blank_half(text, state.half_ends, state.not_measured) if one_half is not None else None
    return (one_half if blank is not None else None), blank


def _read_row(tokens: list[str], layout: Layout, blank: bool | None, number: int, timestamp: str | None) -> list[Record]:
    """The records of one row (one per printed half); ValueError or IndexError when its values are not numbers."""
    size, count, dtype = int(tokens[0]), int(tokens[1]), tokens[2]
    k = 3
    redop = None
    if layout.has_redop:
        redop = tokens[k]
        k += 1
    root = None
    if layout.has_root:
        if not SIGNED_INT_RE.match(tokens[k]):
            raise ValueError(tokens[k])
        root = int(tokens[k])
        k += 1
    placements = (False, True) if blank is None else (not blank,)
    half = layout.half_width
    halves = [parse_half(tokens[k + half * i:k + half * (i + 1)], layout.check) for i in range(len(placements))]
    return [Record(size, count, dtype, redop, root, in_place, time_us, algbw, busbw, wrong, err, size, number,
                   timestamp=timestamp, **iters)
            for in_place, (time_us, algbw, busbw, wrong, err, iters) in zip(placements, halves)]


def _row_end(tokens: list[str], text: str) -> tuple[list[str], str, str | None]:
    """A row without what follows its values: nccl-tests' ``-S 1`` timestamp (returned) and gpucomm bench's ``WRONG``."""
    timestamp = None
    if len(tokens) > 5 and TIMESTAMP_RE[0].match(tokens[-2]) and TIMESTAMP_RE[1].match(tokens[-1]):
        timestamp = f"{tokens[-2]} {tokens[-1]}"
        tokens, text = tokens[:-2], text[:text.rindex(tokens[-2])]
    if tokens[-1] == WRONG_MARK:
        tokens, text = tokens[:-1], text[:text.rindex(WRONG_MARK)]
    return tokens, text, timestamp


def _on_row(state: ParseState, line: Line) -> None:
    tokens, text, timestamp = _row_end(line.body.split(), line.text)
    layout, blank = _row_layout(state, tokens, text)
    expected = state.header_layout.width if state.header_layout is not None else LAYOUTS_BY_NAME["current"].width
    if layout is None:
        split = split_fused(tokens, expected)  # two numbers printed without a space between them
        if split is not tokens:
            layout, blank = _row_layout(state, split, text)
            tokens = split if layout is not None else tokens
    if layout is None:
        (state.incomplete if len(tokens) < expected else state.bad).append(line.number)
        half = state.header_layout.half_width if state.header_layout is not None else HALF_WIDTH
        if len(tokens) == expected - half:
            state.unplaced.append(line.number)
        return
    try:
        records = _read_row(tokens, layout, blank, line.number, timestamp)
    except (ValueError, IndexError):
        state.bad.append(line.number)
        return
    if state.layout is None:
        state.layout = layout
    if blank is None and state.half_ends is None:
        half = layout.half_width
        ends = [w.end() for w in re.finditer(r"\S+", text)][-2 * half:]
        state.half_ends = (tuple(ends[:half]), tuple(ends[half:]))  # no title line: a full row says
    for record in records:
        if layout.check == "error":
            state.legacy_rows.append(len(state.records))
        state.records.append(record)


HANDLERS: dict[str, Callable[[ParseState, Line], None]] = {
    "source": _on_source, "command": _on_command, "run_header": _on_run_header,
    "max_bytes_reduced": _on_max_bytes_reduced, "gpucomm_header": _on_gpucomm_header, "not_measured": _on_not_measured,
    "device": _on_device, "version": _on_version, "collective_start": _on_collective_start, "average": _on_average,
    "out_of_bounds": _on_out_of_bounds, "column_titles": _on_column_titles, "comment": _ignore,
    "command_part": _on_command_part, "command_end": _on_command_end, "command_line": _on_command_line,
    "row": _on_row, "other": _ignore,
    "gpucomm_timing": lambda state, line: read_gpucomm_timing(line.match, state.meta),
    "registration_note": lambda state, line: read_registration_note(line.match, state.meta),
}
"""The handler of each kind of line (:func:`gpucomm.measure.logs.nccl_tests_lines.classify`)."""


# ----------------------------------------------------------------------------------------------- the loop

def line_list(numbers: list[int]) -> str:
    """``"3, 4, 5, 6, 7 and 2 more"``: line numbers for a warning, the first five shown."""
    shown = ", ".join(str(n) for n in numbers[:5])
    return shown + (f" and {len(numbers) - 5} more" if len(numbers) > 5 else "")


def _no_rows_error(state: ParseState) -> GpucommError:
    unplaced = (f" ({len(state.unplaced)} of them print one half, and no '# out-of-place: not measured' (or in-place) "
                "line or column-title line says which half is blank)" if state.unplaced else "")
    return GpucommError(NO_ROWS + (f"; {len(state.incomplete)} line(s) looked like cut rows" if state.incomplete else "")
                        + unplaced)


def _format_warnings(state: ParseState) -> None:
    """Warnings about the lines themselves: interleaved headers, cut rows, rows that are not numbers."""
    warnings = state.warnings
    if state.seen_headers > 1 and not any(w.code == "interleaved_runs" for w in warnings):
        warnings.append(LogWarning("interleaved_runs", f"{state.seen_headers} 'nThread ... nGpus' header lines: several "
                                                       "runs are printed together (or a run without MPI=1 under mpirun)"))
    old_gather_scatter(state.records, state.legacy_rows, state.meta, warnings)
    if state.incomplete:
        warnings.append(LogWarning("incomplete_row", f"line(s) {line_list(state.incomplete)}: result row(s) with too few "
                                                     "columns (cut off?"
                                                     + (", or one half blank where neither a '# out-of-place: not "
                                                        "measured' line nor the column titles say which"
                                                        if state.unplaced else "") + "): skipped"))
    if state.bad:
        warnings.append(LogWarning("bad_row", f"line(s) {line_list(state.bad)}: result row(s) with values that are not "
                                              "numbers or an unknown number of columns: skipped"))


def parse_lines(numbered: list[tuple[int, str]], collective: str | None, num_ranks: int | None) -> ParsedLog:
    """:func:`gpucomm.measure.logs.nccl_tests.parse_nccl_tests` of some numbered lines of a log (all of it, or one run).

    Parameters
    ----------
    numbered : list of (int, str)
        The lines with their 1-based numbers in the whole text.
    collective, num_ranks : optional
        As for :func:`gpucomm.measure.logs.nccl_tests.parse_nccl_tests`.

    Returns
    -------
    ParsedLog
        The records, warnings and metadata of those lines.

    Raises
    ------
    GpucommError
        When the lines hold no result row.
    """
    state = ParseState()
    for number, raw in numbered:
        line = classify(number, raw, bool(state.pending_command))
        if line is None:
            continue
        if not line.text.lstrip().startswith("#"):
            version = NCCL_VERSION_RE.search(line.body)
            if version:
                state.meta.setdefault("nccl_version", version.group(1))
        HANDLERS[line.kind](state, line)
    if not state.records:
        raise _no_rows_error(state)
    meta = state.meta
    meta["layout"] = state.layout.name if state.layout is not None else "current"
    command = next((c.strip() for c in state.commands if "_perf" in c), None)
    if command is not None:
        meta.setdefault("command", command)
        read_command(meta["command"], meta, state.warnings)
    ranks_from_devices(state.devices, meta, state.warnings)
    _format_warnings(state)
    return finish_log(state.records, meta, state.warnings, collective=collective, num_ranks=num_ranks)
