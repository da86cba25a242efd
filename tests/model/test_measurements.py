"""Published measurements bundled with the package: one CSV reader, one data path (gpucomm.model.measurements)."""
from __future__ import annotations

from gpucomm.model.measurements import bundled_data, case, mleng_h200_sweep, read_bundled_csv


def test_mleng_sweep():
    rows = mleng_h200_sweep()
    assert len(rows) == 20 and rows[0]["msg_bytes"] == 32 * 2**10
    assert rows[-1]["busbw_bytes_per_s"] / 1e9 == 482.26
    assert all(r["time_s"] > 0 for r in rows)


def test_one_reader_for_every_bundled_csv():
    for name in ("mleng_8xH200_torch_allreduce.csv", "azure_a100_allreduce_busbw.csv"):
        rows, source = read_bundled_csv(name)
        assert rows and source.startswith("https://"), name  # a sweep names its source in a comment line
        assert not any(k.startswith("#") for k in rows[0])
    rows, _ = read_bundled_csv("cases.csv")  # one source per row instead
    assert all(r["source_url"].startswith("http") for r in rows)
    assert case("C13")["bytes"] == str(mleng_h200_sweep()[-1]["msg_bytes"])
    assert bundled_data("nccl_logs", "C04.txt").read_text().startswith("# source:")
