"""`python -m vacant.gendocs [--write]`: every generated doc under docs/, checked or rewritten.

The one list of generated docs. Without `--write` it exits 1 naming each doc that drifted from
its source; a test runs the same check for every entry.
"""

from __future__ import annotations

import sys
from pathlib import Path

from vacant.attribute import report_shape
from vacant.core import events, exitcodes, levels, trustenv
from vacant.core.docgen import COMMAND, GeneratedDoc, check_or_write
from vacant.platforms import all_platforms
from vacant.policy import asks, contract, probe_reasons
from vacant.share import records as share_records
from vacant.show import shapes

ALL_DOCS: list[GeneratedDoc] = [events.DOC, exitcodes.DOC, levels.DOC, asks.DOC, report_shape.DOC, contract.DOC, probe_reasons.DOC,
                               shapes.DOC, share_records.DOC, trustenv._doc()]

PACKAGE = Path(__file__).resolve().parent
# Generated code: a region of a module that may import nothing of vacant's (the lean client),
# between a `# BEGIN generated …` line and `# END generated`.
CODE_REGIONS = {"vacant/daemon/client.py": all_platforms.client_table}
CODE_BEGIN, CODE_END = "# BEGIN generated", "# END generated"


def code_expected(current: str, render) -> str:
    head, begin, rest = current.partition(CODE_BEGIN)
    line, _, rest = rest.partition("\n")
    _, end, tail = rest.partition(CODE_END)
    if not begin or not end:
        raise ValueError(f"no {CODE_BEGIN!r} … {CODE_END!r} region")
    return f"{head}{begin}{line}\n{render()}{end}{tail}"


def check_or_write_code(write: bool, base: Path = PACKAGE.parent) -> list[str]:
    """The code regions that drifted (rewritten with `write`)."""
    stale = []
    for name, render in CODE_REGIONS.items():
        path = base / name
        current = path.read_text()
        expected = code_expected(current, render)
        if expected != current:
            if write:
                path.write_text(expected)
            else:
                stale.append(name)
    return stale


def main(argv: list[str]) -> int:
    write = argv[:1] == ["--write"]
    stale_code = check_or_write_code(write)
    for name in stale_code:
        print(f"{name}: its generated region is out of date: run `{COMMAND}`", file=sys.stderr)
    stale = check_or_write(ALL_DOCS, write=write)
    for name in stale:
        print(f"docs/{name} is out of date: run `{COMMAND}`", file=sys.stderr)
    return 1 if stale or stale_code else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
