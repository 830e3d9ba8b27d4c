"""cProfile of the scans measured by bench_scan.py, to see where the time goes.

    python bench/profile_scan.py [--tree bench/out/tree] [--top 10] [--sort tottime]

Profiles, in one warm interpreter with a page cache warmed by a first pass: a first full scan
with the object store, the same without it, a no-change incremental scan, and a scoped scan of
one rewritten file (that one in a fresh interpreter, as a hook runs it, so lazy imports show;
sorted by cumulative time). The rewritten file gets its content back at the end.

It also times the filesystem's floor for a store of one file per blob: creating as many small
files as the tree has (temp file + rename, fanned out over 256 directories, no Python-level
work besides the syscalls), so the object store's share can be judged against what the disk
allows.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import cProfile, pstats, sys
from pathlib import Path
root, rel, top, sort = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
profile = cProfile.Profile()
profile.enable()
from vacant.store.states import open_scanner
result = open_scanner(root).scan([rel])
profile.disable()
print(f"changed={len(result.changed)}")
pstats.Stats(profile).sort_stats(sort).print_stats(top)
"""


def show(title: str, profile: cProfile.Profile, top: int, sort: str) -> None:
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.strip_dirs().sort_stats(sort).print_stats(top)
    print(f"\n=== {title} ===")
    print(trim(out.getvalue()))


def trim(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    keep = [line for line in lines if not line.lstrip().startswith(("Ordered by", "List reduced"))]
    return "\n".join(keep)


def profiled(call) -> tuple[cProfile.Profile, object]:
    profile = cProfile.Profile()
    profile.enable()
    try:
        value = call()
    finally:
        profile.disable()
    return profile, value


def create_floor(directory: Path, count: int) -> float:
    import time

    for fan in range(256):
        os.makedirs(directory / f"{fan:02x}")
    os.sync()
    data = b"x" * 4096
    started = time.perf_counter()
    for number in range(count):
        temp, final = f"{directory}/{number % 256:02x}/.tmp{number}", f"{directory}/{number % 256:02x}/{number}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o444)
        os.write(fd, data)
        os.close(fd)
        os.replace(temp, final)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=HERE / "out" / "tree")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--sort", default="tottime", help="pstats sort key: tottime, cumulative, ...")
    args = parser.parse_args(argv)
    tree = args.tree.resolve()
    if not (tree / ".git" / "vacant-bench-tree.json").exists():
        print(f"no generated tree at {tree}: run `python bench/gen_tree.py {tree}` first", file=sys.stderr)
        return 2
    (HERE / "out").mkdir(exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="vacant-profile-", dir=HERE / "out"))
    from vacant.store.hasher import Index, Scanner
    from vacant.store.states import open_scanner

    def scanner(state: Path, store: bool) -> Scanner:
        os.environ["VACANT_STATE_DIR"] = str(state)
        return open_scanner(tree) if store else Scanner(tree, Index.load(state / "index"), None, state)

    rel = None
    original = None
    try:
        warm = base / "warm"
        warm.mkdir()
        scanner(warm, False).scan()  # warm the page cache (and pathspec's import)
        for store in (True, False):
            state = base / f"first-{store}"
            state.mkdir()
            profile, result = profiled(lambda: scanner(state, store).scan())
            show(f"first full scan, {'with' if store else 'without'} object store "
                 f"({result.files} files, {result.hashed} hashed)", profile, args.top, args.sort)
        state = base / "first-True"
        profile, result = profiled(lambda: scanner(state, True).scan())
        show(f"incremental full scan, no change (open index + scan; {result.reused} reused, "
             f"{result.hashed} hashed)", profile, args.top, args.sort)
        tracked = subprocess.run(["git", "-C", str(tree), "ls-files"], check=True, capture_output=True, text=True)
        rel = next(line for line in tracked.stdout.splitlines() if line.count("/") >= 3 and line.endswith(".py"))
        original = (tree / rel).read_bytes()
        (tree / rel).write_bytes(b"# profile edit\n" + original)
        env = {**os.environ, "VACANT_STATE_DIR": str(state)}
        child = subprocess.run([sys.executable, "-c", CHILD, str(tree), rel, str(args.top), "cumulative"],
                               env=env, capture_output=True, text=True, check=True)
        print(f"\n=== scoped scan of one rewritten file, fresh interpreter (imports included; {rel}) ===")
        print(trim(child.stdout))
        print(f"\n=== filesystem floor: {result.files} files of 4 KB, temp + rename, 256 dirs ===")
        print(f"{create_floor(base / 'floor', result.files):.2f} s")
    finally:
        if rel is not None and original is not None:
            (tree / rel).write_bytes(original)
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
