#!/usr/bin/env bash
# All benchmarks, one command: prints figures (they are not tests).
#
#   benchmarks/run_all.sh            model, calculators, runner overhead, CPU sweep, book build,
#                                    page weight of the built book (needs Debian's chromium)
#   benchmarks/run_all.sh --tests    ... and the wall time of the whole test suite (make test)
#
# Run it on a quiet machine: other processes inflate every figure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=.venv/bin/python
export PATH="$PWD/.venv/bin:$PATH"

seconds() {  # seconds LABEL COMMAND...: wall time of one run of COMMAND
  local label=$1; shift
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  $PY -c "import sys; print(f\"{sys.argv[1]:<46} {float(sys.argv[3]) - float(sys.argv[2]):8.1f} s\")" "$label" "$start" "$end"
}

echo "== machine: $(nproc) cores, $(uname -m), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "== model evaluation";           $PY benchmarks/bench_model.py
echo "== calculator live updates";    $PY benchmarks/bench_calculators.py
echo "== runner overhead vs bare dist.all_reduce"; $PY benchmarks/bench_runner_overhead.py
echo "== wall times"
seconds "CPU sweep: gpucomm bench, 2 ranks, 8 B..64 MiB" gpucomm bench --ranks 2 -b 8 -e 64M --no-out --no-progress
seconds "book build, forced (every page executed)" make book
seconds "book build, incremental (nothing changed)" make book BOOK_FLAGS=
echo "== page weight of the built book (cold cache, headless Chromium)"
# Not fatal: without chromium it says so, and the other figures are still worth having.
$PY benchmarks/bench_page_weight.py || echo "page weight: not measured (see the message above)"
echo "== live calculator in the browser (Pyodide; cold, offline, headless Chromium)"
$PY benchmarks/bench_live_calculator.py || echo "live calculator: not measured (see the message above)"
if [[ ${1:-} == --tests ]]; then
  seconds "test suite (make test, book already built)" make test
fi
