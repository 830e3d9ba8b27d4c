"""`python -m vacant.daemon ROOT [--idle SECONDS]`: run the workspace's daemon in the foreground
(`vacant daemon start` and the hook clients start it detached)."""

from __future__ import annotations

import sys
from pathlib import Path

from vacant.daemon.lifecycle import Daemon


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m vacant.daemon ROOT [--idle SECONDS]", file=sys.stderr)
        return 2
    idle = float(argv[argv.index("--idle") + 1]) if "--idle" in argv else None
    return Daemon(Path(argv[0]), idle).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
