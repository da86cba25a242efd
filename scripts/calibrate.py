"""Fit the model's free parameters jointly and write ``src/gpucomm/model/data/calibration.json``.

Usage: ``python scripts/calibrate.py [--check]``. Runs :func:`gpucomm.model.calibrate.calibrate` (the joint fit over
every bundled sweep and case, the leave-one-out refits, the prediction band) and writes its result with the date, so
that the model reads the new values on its next import. ``--check`` writes nothing and exits 1 when the committed file
differs from a fresh fit (beyond the values' 4 significant digits). Deterministic: the same data give the same file
but for the date.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

from gpucomm.model.calibrate import calibrate

OUT = Path(__file__).resolve().parent.parent / "src" / "gpucomm" / "model" / "data" / "calibration.json"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file, write nothing")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    result = calibrate()
    committed = json.loads(OUT.read_text())
    if args.check:
        same = all(committed["parameters"][k]["value"] == p["value"] for k, p in result["parameters"].items())
        print("calibration.json matches a fresh fit" if same else "calibration.json differs from a fresh fit")
        return 0 if same else 1
    result = {"date": datetime.date.today().isoformat(), "script": "scripts/calibrate.py", **result}
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {OUT} in {time.perf_counter() - t0:.0f} s")
    for k, p in result["parameters"].items():
        print(f"  {k:32s} {p['value']:.4g}")
    print("errors:", json.dumps(result["errors"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
