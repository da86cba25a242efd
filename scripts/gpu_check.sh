#!/usr/bin/env bash
# The CUDA paths on a GPU node without the project's venv (e.g. a rented node's own Python with CUDA torch):
# what `make gpu-check` runs, with the package from src/. Usage: scripts/gpu_check.sh [OUT_DIR]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-/tmp/gpucomm-gpu-check}
mkdir -p "$out"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
$py -c 'import sys, torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count()); sys.exit(0 if torch.cuda.is_available() else 1)' || { echo "no CUDA GPU"; exit 1; }
status=0
$py -m pytest -q -rs -p no:cacheprovider -m gpu tests || status=1
$py -m pytest -q -rs -p no:cacheprovider -m "not gpu" tests/measure/test_runner.py tests/measure/test_collectives_bench.py \
  tests/measure/test_tp_layer.py tests/measure/test_copy_bandwidth.py -k "nccl or cuda or gpu or graph" || status=1
$py -c "
from gpucomm.measure import run_sweeps
r = run_sweeps(1, ['all_reduce', 'all_gather', 'broadcast', 'reduce_scatter', 'all_to_all'], min_bytes=8, max_bytes='64MiB', step_factor=8, iters=20, backend='nccl', print_table=False)
for c, res in r.items():
    print(c, res.meta['backend'], res.meta['nccl_version'], len(res), 'sizes, wrong', res.num_wrong, ', 8 B', round(res[0]['time_s'] * 1e6, 2), 'us')
" || status=1
$py -m gpucomm copybw -e 256MiB --out "$out/copybw.jsonl" --force || status=1
$py -m gpucomm doctor --out-dir "$out/doctor" --quick; rc=$?; [ $rc -le 1 ] || status=1
exit $status
