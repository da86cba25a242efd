"""``python -m gpucomm.bench``: one rank under torchrun, or a local launcher (``--ranks N``)."""

import sys

from gpucomm.bench.cli import main

if __name__ == "__main__":
    sys.exit(main())
