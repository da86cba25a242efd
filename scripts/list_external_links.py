"""List every external URL the course cites, for checking online (the book is built and tested offline).

Usage: ``python scripts/list_external_links.py > external_links.txt``. Reads the pages (book/, notebooks/,
labs/) and the package (catalog and calibration sources), prints one URL per line with the files citing it.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

URL = re.compile(r"https?://[^\s<>\"'`)\]},]+")
ROOT = Path(__file__).resolve().parent.parent
GLOBS = ("book/*.md", "notebooks/*.ipynb", "labs/*.ipynb", "src/gpucomm/**/*.py", "src/gpucomm/model/data/**/*")


def main() -> int:
    cited: dict[str, set[str]] = defaultdict(set)
    for pattern in GLOBS:
        for path in sorted(ROOT.glob(pattern)):
            if not path.is_file():
                continue
            text = path.read_text(errors="replace")
            for url in URL.findall(text):
                cited[url.rstrip(".;:")].add(str(path.relative_to(ROOT)))
    for url in sorted(cited):
        print(f"{url}\t{', '.join(sorted(cited[url]))}")
    print(f"# {len(cited)} external URLs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
