"""`python -m vacant.gendocs [--write]`: every generated doc under docs/, checked or rewritten.

The one list of generated docs. Without `--write` it exits 1 naming each doc that drifted from
its source; a test runs the same check for every entry.
"""

from __future__ import annotations

import sys

from vacant.attribute import report_shape
from vacant.core import events, exitcodes, levels, trustenv
from vacant.core.docgen import COMMAND, GeneratedDoc, check_or_write
from vacant.policy import asks, contract
from vacant.share import records as share_records
from vacant.show import shapes

ALL_DOCS: list[GeneratedDoc] = [events.DOC, exitcodes.DOC, levels.DOC, asks.DOC, report_shape.DOC, contract.DOC,
                               shapes.DOC, share_records.DOC, trustenv._doc()]


def main(argv: list[str]) -> int:
    stale = check_or_write(ALL_DOCS, write=argv[:1] == ["--write"])
    for name in stale:
        print(f"docs/{name} is out of date: run `{COMMAND}`", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
