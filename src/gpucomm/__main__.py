"""``python -m gpucomm VERB ...`` (and ``torchrun ... -m gpucomm bench ...``): the ``gpucomm`` command."""

import sys

from gpucomm.cli import main

if __name__ == "__main__":
    sys.exit(main())
