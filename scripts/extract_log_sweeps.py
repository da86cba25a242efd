"""Write ``gpucomm/model/data/nccl_log_sweeps.csv``: the in-place rows of the bundled nccl-tests logs that
``gpucomm.model.validation.SWEEPS`` names, read by the measure layer's parser (the model layer cannot import it).

Run after adding a log to SWEEPS: ``python scripts/extract_log_sweeps.py``; ``tests/measure/test_nccl_tests_log.py``
fails until the file matches.
"""

from gpucomm.measure.logs.nccl_tests import LOG_SWEEPS_CSV, log_sweeps_csv
from gpucomm.model.measurements import bundled_data
from gpucomm.model.validation import log_sweep_names

if __name__ == "__main__":
    path = bundled_data(LOG_SWEEPS_CSV)
    path.write_text(log_sweeps_csv(log_sweep_names()))
    print(f"wrote {path}")
