"""Fuzz the whole ``gpucomm`` command in-process: no traceback ever, exit status 0, 1, 2 or 130 only.

Every verb gets arguments generated from its own parser (so a new flag is fuzzed without editing this
file): a mix of catalog names, numbers (huge, negative, not numbers), sizes with known and unknown
units, and arbitrary text; the files it reads are generated too: bundled nccl-tests and NCCL INFO logs
whole, cut, with a token replaced, two runs concatenated, UTF-16, gzip, random bytes, empty, and
results files with a field made a string, negative, huge, NaN or a list. Output flags get the paths
that lost data in issue 24: the input itself, an existing file, ``/dev/full``, a missing folder, ``''``.

Measuring verbs (``bench``, ``copybw``, ``doctor``) must not measure here: each argv carries one
argument they refuse before any work, and a sentinel stops them at their first step of work, which
fails the test. Everything runs with ``gpucomm.cli.main([...])`` in a fresh temporary folder; the
number of examples comes from the hypothesis profile (``tests/conftest.py``: ``fast`` or ``full``).

After every run: the exit status is 0, 1, 2 or 130; stderr holds no traceback and a status 2 ends
in ``gpucomm VERB: error: ...``; the input files are unchanged, an existing file is unchanged unless
``--force`` was given, and no missing folder was created.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gzip
import io
import json
import re
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from gpucomm.cli import VERBS, build_parser, main
from gpucomm.measure.logs.nccl_tests import bundled_log_names, bundled_log_text
from gpucomm.model import hardware
from gpucomm.model.collectives import COLLECTIVES
from gpucomm.model.cost import ALGORITHMS, PROTOCOLS
from gpucomm.model.measurements import bundled_data
from gpucomm.model.tp import MODELS

EXIT_STATUSES = {0, 1, 2, 130}
MEASURING = ("bench", "copybw", "doctor")
OUTPUT_DESTS = {"out", "plot", "out_dir"}

# --- the files ---------------------------------------------------------------------------------------------------

NCCL_TESTS_LOGS = [bundled_log_text(name) for name in bundled_log_names()[:6]]
INFO_LOGS = [p.read_text() for p in sorted(bundled_data("nccl_info_logs").iterdir(), key=lambda p: p.name)
             if p.name.endswith(".txt")][:6]
LOGS = NCCL_TESTS_LOGS + INFO_LOGS


def _results_lines() -> list[str]:
    """A real results file (gpucomm parse of a bundled log), as lines: the base of the mutated ones."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "base.log"
        path.write_text(bundled_log_text("C04"))
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["parse", str(path), "--out", str(Path(folder) / "base.jsonl")]) == 0
        return (Path(folder) / "base.jsonl").read_text().splitlines()


RESULTS_LINES = _results_lines()
WEIRD_JSON = [None, True, "8", "", -1, 0, 1e308, 10**400, float("nan"), float("inf"), [], {}, [8], {"a": 1}, "nan"]

NAMES = sorted({*COLLECTIVES, *hardware.LINKS, *hardware.SYSTEMS, *hardware.GPUS, *hardware.NETWORKS,
                *hardware.INTER_SOCKET_LINKS, *ALGORITHMS, *PROTOCOLS, *MODELS, "auto", "nccl", "gloo", "mesh", "switch",
                "pairs", "prefill", "decode", "float32", "bfloat16", "sum", "prod", "fp16", "fp8", "host_torch",
                "h2d_pinned", "2.18.5", "2.30.7", "-", "--help"})
words = st.sampled_from(NAMES)
small_ints = st.integers(0, 300).map(str)
plain_sizes = st.builds(lambda n, unit: f"{n}{unit}", st.integers(1, 2**34),
                        st.sampled_from(["", "B", "KiB", "MiB", "GiB", "K", "M", "G", "KB", "MB"]))
numbers = st.one_of(st.integers(-10**30, 10**30).map(str), st.floats().map(repr),
                    st.sampled_from(["0", "1", "2", "7", "8", "-1", "1e400", "nan", "inf", "0x10", "1_000", "2.5",
                                     " 3 ", "\uff11", "9" * 400]))
units = st.sampled_from(["", "B", "KiB", "MiB", "GiB", "TiB", "PiB", "K", "M", "G", "KB", "MB", "GB", "kb", "XB",
                         "MiBs", " MiB", "e3", "b", "bytes"])
sizes = st.builds(lambda n, unit: f"{n}{unit}", st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=True)), units)
text = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=24)
weird = st.one_of(numbers, sizes, text)
plausible = st.one_of(words, small_ints, plain_sizes)
values = st.sampled_from([False] * 2 + [True]).flatmap(lambda odd: weird if odd else plausible)
"""An option's value: two times in three a name, a small count or a size a user would type, else anything
(a choice drawn first: ``one_of`` would lean to the odd values)."""


def _replace_token(log: str, index: int, new: str) -> str:
    tokens = re.split(r"(\s+)", log)
    tokens[index % len(tokens)] = new
    return "".join(tokens)


def _mutate_results(line: int, key_index: int, value: object, cut: int | None) -> str:
    lines = list(RESULTS_LINES)
    record = json.loads(lines[line % len(lines)])
    keys = sorted(record)
    record[keys[key_index % len(keys)]] = value
    lines[line % len(lines)] = json.dumps(record)
    text = "\n".join(lines) + "\n"
    return text if cut is None else text[:cut]


results_texts = st.one_of(
    st.just("\n".join(RESULTS_LINES) + "\n"),
    st.builds(_mutate_results, st.integers(0, 100), st.integers(0, 100), st.sampled_from(WEIRD_JSON),
              st.none() | st.integers(0, 3000)),
    st.builds(lambda n: "[" * n + "]" * n + "\n", st.integers(1, 5000)),
)

def file_bytes(texts: st.SearchStrategy[str]) -> st.SearchStrategy[bytes]:
    """A file's bytes: mostly ``texts`` (what the verb reads), else empty, random, UTF-16 or gzip."""
    return st.one_of(
        texts.map(str.encode), texts.map(str.encode), texts.map(str.encode),
        st.just(b""),
        st.binary(max_size=300),
        st.sampled_from(LOGS).map(lambda t: t.encode("utf-16")),
        st.sampled_from(LOGS).map(lambda t: gzip.compress(t.encode())),
    )


def _variants(bases: list[str]) -> st.SearchStrategy[str]:
    """Logs as posted: whole, cut anywhere, a token replaced, two concatenated."""
    return st.one_of(
        st.sampled_from(bases),
        st.builds(lambda log, cut: log[:cut], st.sampled_from(bases), st.integers(0, 4000)),
        st.builds(_replace_token, st.sampled_from(bases), st.integers(0, 10**6), values),
        st.builds(lambda a, b: a + "\n" + b, st.sampled_from(bases), st.sampled_from(LOGS)),
    )


FILES = {"parse": file_bytes(_variants(NCCL_TESTS_LOGS)), "diagnose": file_bytes(_variants(INFO_LOGS)),
         "fit": file_bytes(results_texts)}
"""What each reading verb's input file holds."""


# --- the folder each run starts in --------------------------------------------------------------------------------

KEPT = "kept: a file the user had\n"
INPUT = "input.log"
OUTPUT_PATHS = ["new.jsonl", "new.html", "existing.jsonl", "existing.html", INPUT, "/dev/full", "/dev/null",
                "missing/dir/x.jsonl", "missing/x.html", "", " ", "-", "folder", "a_file/x.jsonl", "earlier"]
output_paths = st.sampled_from(OUTPUT_PATHS)


def _prepare(folder: Path, content: bytes) -> None:
    (folder / INPUT).write_bytes(content)
    for name in ("existing.jsonl", "existing.html", "a_file"):
        (folder / name).write_text(KEPT)
    (folder / "folder").mkdir()
    (folder / "earlier").mkdir()
    (folder / "earlier" / "report.json").write_text(KEPT)


class WorkStarted(Exception):
    """A measuring verb passed every check and would now measure: the generated argv was not refused."""


def _started(*args, **kwargs):
    raise WorkStarted


def invoke(argv: list[str], content: bytes = b"", stdin: bytes = b"") -> tuple[int, str, str]:
    """Run ``main(argv)`` in a fresh folder holding ``input.log`` (``content``) and check every invariant."""
    import gpucomm.cli.doctor as doctor_verb
    import gpucomm.measure.copy_bandwidth as copy_bandwidth
    import gpucomm.measure.results as results_module

    out, err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory() as name, pytest.MonkeyPatch.context() as patch:
        folder = Path(name)
        _prepare(folder, content)
        patch.chdir(folder)
        patch.setattr(results_module, "TableReporter", _started)  # bench: built just before its ranks start
        patch.setattr(copy_bandwidth, "copy_metadata", _started)  # copybw: after every check, before the first copy
        patch.setattr(doctor_verb, "require_torch", _started)  # doctor: right after its folder check
        patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
        patch.setenv("COLUMNS", "100")
        for variable in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"):
            patch.delenv(variable, raising=False)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # allowed, as long as its status is one of ours
                code = exc.code if isinstance(exc.code, int) else 1
            except WorkStarted:
                pytest.fail(f"gpucomm {' '.join(argv)} started measuring: a fuzzed measuring verb must be refused")
        stdout, stderr = out.getvalue(), err.getvalue()
        if currently_in_test_context():
            event(f"{argv[0]} status {code}")  # --hypothesis-show-statistics: how many runs got past validation
        where = f"gpucomm {argv!r}\nstatus {code}\nstderr: {stderr[-2000:]}"
        assert code in EXIT_STATUSES, where
        assert "Traceback" not in stderr, where
        if code == 2:
            assert re.match(r"^(gpucomm|usage)\b.*: error: ", stderr.strip().splitlines()[-1]), where
        assert (folder / INPUT).read_bytes() == content, f"the input was changed: {where}"
        if "--force" not in argv:
            for kept in ("existing.jsonl", "existing.html", "a_file", "earlier/report.json"):
                assert (folder / kept).read_text() == KEPT, f"{kept} was overwritten: {where}"
        assert not (folder / "missing").exists(), f"a missing folder was created: {where}"
        assert not (folder / "-").exists(), f"a file named '-' was written: {where}"
    return code, stdout, stderr


# --- the arguments, from each verb's own parser -------------------------------------------------------------------

@functools.cache
def verb_parser(verb: str) -> argparse.ArgumentParser:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return subparsers.choices[verb]


def _option_args(action: argparse.Action) -> st.SearchStrategy[list[str]]:
    """One option with a value for it (a path for an output flag, a choice or anything for the others)."""
    flag = st.sampled_from(action.option_strings)
    if action.nargs == 0:
        return flag.map(lambda f: [f])
    if action.dest in OUTPUT_DESTS:
        value = output_paths
    elif action.choices:
        value = st.one_of(st.sampled_from(sorted(action.choices)), values)
    else:
        value = values
    return st.one_of(st.builds(lambda f, v: [f, v], flag, value), st.builds(lambda f, v: [f"{f}={v}"], flag, value))


@functools.cache  # built once per (verb, exclude): hypothesis validates a new strategy object on every draw
def option_args(verb: str, exclude: frozenset = frozenset(), max_options: int = 6) -> st.SearchStrategy[list[str]]:
    """Up to ``max_options`` options of ``verb`` (none of ``exclude``'s dests), flattened into argv tokens."""
    actions = [a for a in verb_parser(verb)._actions
               if a.option_strings and a.dest not in exclude | {"help"} and not isinstance(a, argparse._HelpAction)]
    return st.lists(st.one_of([_option_args(a) for a in actions]), max_size=max_options).map(lambda parts: sum(parts, []))


def file_argument() -> st.SearchStrategy[str]:
    return st.sampled_from([INPUT] * 8 + ["-", "folder", "missing/x.log", "", "existing.jsonl"])


FUZZ = settings(deadline=None)


def _maybe(plain: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Five times in six a value the flag takes, else anything (``one_of`` would lean to the odd values)."""
    return st.sampled_from([False] * 5 + [True]).flatmap(lambda odd: weird if odd else plain)


BASES = {
    "cost": st.tuples(_maybe(st.sampled_from(COLLECTIVES)),
                      st.one_of(st.tuples(st.just("--link"), _maybe(st.sampled_from(sorted(hardware.LINKS)))),
                                st.tuples(st.just("--system"), _maybe(st.sampled_from(sorted(hardware.SYSTEMS))))),
                      st.just("--gpus"), _maybe(st.sampled_from([2, 3, 4, 8, 8, 16, 64, 1000, 10**5]).map(str)),
                      st.just("--size"), _maybe(plain_sizes)).map(lambda t: [t[0], *t[1], *t[2:]]),
    "tp": st.tuples(st.just("--model"), _maybe(st.sampled_from(sorted(MODELS))), st.just("--tp"),
                    _maybe(st.sampled_from([1, 2, 4, 8, 3, 256]).map(str)),
                    st.just("--tokens"), _maybe(st.sampled_from([1, 7, 4096, 10**7]).map(str)), st.just("--link"),
                    _maybe(st.sampled_from(sorted(hardware.LINKS)))).map(list),
    "validate": st.just([]),
}
"""A command line each model verb runs, its values sometimes replaced by anything."""

BASE_DESTS = frozenset({"link", "system", "gpus", "size", "model", "tp", "tokens"})


@pytest.mark.parametrize("verb", ["cost", "tp", "validate"])
@FUZZ
@given(data=st.data())
def test_model_verbs_never_trace_back(verb, data):
    base = data.draw(BASES[verb], label="base")
    # the options leave the base's flags alone (_maybe fuzzes those), so a valid base reaches the model
    options = data.draw(option_args(verb, exclude=BASE_DESTS, max_options=3), label="options")
    invoke([verb, *base, *options])


@pytest.mark.parametrize("verb", ["parse", "diagnose", "fit"])
@FUZZ
@given(data=st.data())
def test_file_verbs_never_trace_back_nor_lose_a_file(verb, data):
    content = data.draw(FILES[verb], label="input.log")
    argv = [verb, data.draw(file_argument(), label="file"), *data.draw(option_args(verb, max_options=3), label="options")]
    invoke(argv, content=content, stdin=content)


REFUSED = {
    "bench": [["-c", "7"], ["-I", "2"], ["-a", "4"], ["--ranks", "0"], ["-t", "4"], ["-J", "x.json"],
              ["--collective", "nope"], ["--backend", "nope"], ["-d", "float7"], ["-b", "-5MiB"], ["-e", "7XB"],
              ["--out", "existing.jsonl"], ["--out", ""], ["--out", "missing/dir/x.jsonl"], ["--out", "folder"],
              ["--out", INPUT], ["--out", "a_file/x.jsonl"], ["--no-such-flag"]],
    "copybw": [["-f", "1"], ["-n", "0"], ["--blocks", "0"], ["--device", "-1"], ["-b", "1e400"], ["-e", "7XB"],
               ["-e", "1PiB"], ["--kinds", "nope"], ["--out", "existing.jsonl"], ["--out", ""],
               ["--out", "missing/dir/x.jsonl"], ["--out", "folder"], ["--no-such-flag"]],
    "doctor": [["--out-dir", ""], ["--out-dir", " "], ["--out-dir", "missing/dir/x"], ["--out-dir", "a_file"],
               ["--out-dir", "earlier"], ["--no-such-flag"]],
}
"""Per measuring verb: arguments refused before any work whatever else the command line holds (each goes last, and
the generated options never name its flag, nor ``--force``)."""


@pytest.mark.parametrize("verb", MEASURING)
@FUZZ
@given(data=st.data())
def test_measuring_verbs_refuse_before_any_work(verb, data):
    refused = data.draw(st.sampled_from(REFUSED[verb]), label="refused")
    parser = verb_parser(verb)
    flag_dests = {a.dest for a in parser._actions if set(a.option_strings) & {refused[0]}}
    options = data.draw(option_args(verb, exclude=frozenset(flag_dests | {"force"})), label="options")
    code, _, _ = invoke([verb, *options, *refused])
    assert code == 2


@pytest.mark.parametrize("verb", VERBS)
def test_help_of_every_verb(verb):
    code, out, _ = invoke([verb, "--help"])
    assert code == 0 and "usage: gpucomm" in out


# --- the findings of issue 24, each once ----------------------------------------------------------------------------

C04 = bundled_log_text("C04").encode()
BASE_RESULTS = ("\n".join(RESULTS_LINES) + "\n").encode()
REFUSED_FINDINGS = [
    (["parse", INPUT, "--out", INPUT], C04),
    (["parse", INPUT, "--out", INPUT, "--force"], C04),
    (["parse", INPUT, "--out", "/dev/full"], C04),
    (["parse", INPUT, "--out", "existing.jsonl"], C04),
    (["parse", INPUT, "--out", "missing/dir/x.jsonl"], C04),
    (["fit", INPUT], BASE_RESULTS.replace(b'"msg_bytes": ', b'"msg_bytes": "', 1).replace(b', "count"', b'", "count"', 1)),
    (["fit", INPUT], BASE_RESULTS.replace(b'"time_s": ', b'"time_s": -', 1)),
    (["fit", INPUT, "--plot", "existing.html"], BASE_RESULTS),
    (["fit", INPUT, "--plot", "missing/x.html"], BASE_RESULTS),
    (["fit", INPUT], b"[" * 100000 + b"\n"),
    (["fit", INPUT], BASE_RESULTS.replace(b'"msg_bytes": ', b'"msg_bytes": 1' + b"0" * 400 + b', "was": ', 1)),  # float overflow
    (["doctor", "--out-dir", ""], b""),
    (["bench", "--out", "missing/dir/x.jsonl"], b""),
    (["bench", "--out", "existing.jsonl"], b""),
    (["copybw", "--out", "existing.jsonl"], b""),
    (["cost", "all_reduce", "--link", "nvlink4", "--gpus", "8", "--size", "-5MiB"], b""),
    (["cost", "all_reduce", "--link", "nvlink4", "--gpus", "8", "--size", "7XB"], b""),
    (["cost", "all_reduce", "--link", "nvlink4", "--gpus", "99999999999999999999", "--size", "1e400"], b""),
]
"""Inputs of issue 24 that must be refused in one line (status 2)."""

ANY_STATUS = [
    (["parse", INPUT], bundled_log_text("C04").encode("utf-16")),
    (["parse", INPUT], gzip.compress(C04)),
    (["parse", "-", "--out", "new.jsonl"], C04),
    (["diagnose", INPUT], INFO_LOGS[0].encode("utf-16")),
    (["diagnose", INPUT], gzip.compress(INFO_LOGS[0].encode())),
    (["fit", INPUT, "--plot", "new.html", "--link", "nvlink4"], BASE_RESULTS),
    (["cost", "all_to_all", "--link", "nvlink4", "--gpus", "8", "--size", "7"], b""),  # a71e2e1: ZeroDivisionError
]
"""Inputs of issue 24 that may be read, or refused (the parser and the model are improved elsewhere): never a traceback."""


@pytest.mark.parametrize("argv, content", REFUSED_FINDINGS, ids=[" ".join(a) for a, _ in REFUSED_FINDINGS])
def test_the_findings_of_issue_24_are_refused_in_one_line(argv, content):
    code, _, err = invoke(argv, content=content)
    assert code == 2 and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("argv, content", ANY_STATUS, ids=[" ".join(a) for a, _ in ANY_STATUS])
def test_the_findings_of_issue_24_never_trace_back(argv, content):
    invoke(argv, content=content, stdin=content)
