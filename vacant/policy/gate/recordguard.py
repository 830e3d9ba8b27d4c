"""The `record-delete` rule: a shell command that would delete vacant's records or the agent's
hook settings is ACT (held for the person's answer).

Kept apart from the rest of the gate's shell reader (vacant.policy.gate.shellscan calls `hits` once
per simple command) so that it stays one small, removable rule (`remove = ["record-delete"]`).

What it reads, from plain text only (like the rest of the gate):
* `rm`/`rmdir`/`unlink`/`shred`/`mv` of a guarded path or of any directory above one;
* `find DIR … -delete` or `-exec rm …` when DIR holds a guarded path and the expression's name
  tests (`-name`, `-iname`, `-path`, `-ipath`, `-wholename`) could match it (an expression with
  `!`, `-not` or `-o` is taken as matching);
* `git clean` with `-d`, `-x` or `-X` (not `-n`), over a pathspec (default: the current
  directory) that holds a guarded path;
* `git stash` with `-u`, `--include-untracked`, `-a` or `--all` (untracked and ignored files go).

Guarded paths: the state directory, the hook settings files of every registered platform in the
workspace and in the home directory, and the files the install record names; only those that exist.
Stdlib only (hot path).
"""

from __future__ import annotations

import fnmatch
import os

from vacant.core.locations import read_install
from vacant.core.wall import inside
from vacant.policy.gate.argv import deletion_lands, find_exec, find_starts, git_subcommand, operands
from vacant.policy.gate.argv import program as program_of
from vacant.core.platform_facts import settings_paths

RULE = "record-delete"
WHY = "vacant's records or the agent's hook settings (deleted, so the run would go unrecorded)"
DELETERS = frozenset({"rm", "rmdir", "unlink", "shred", "srm", "trash", "trash-put", "mv"})
NAME_TESTS = {"-name": False, "-iname": True, "-path": False, "-ipath": True, "-wholename": False,
              "-iwholename": True}
# What a guarded directory holds, by name (a find's name tests are matched against these).
STATE_NAMES = ("events.jsonl", "run.json", "head", "lock", "index", "index.overlay", "install.json", "errors.log",
               "ledger.jsonl", "spent.jsonl", "ask-1.json", "f-0123abcd.json", "report.json", "stop.json", "next",
               "gate-policy.json", "0123456789abcdef0123456789abcdef", "0001.json", "vacant.js")


def guarded(root: str, state: str, home: str | None) -> list[str]:
    """The guarded paths that exist (real paths). Every registered platform's hook settings
    (vacant/core/platform_facts.py); none registered raises, and the gate fails closed."""
    in_workspace, in_home = settings_paths()
    paths = [state] + [os.path.join(root, rel) for rel in in_workspace]
    if home:
        paths += [os.path.join(home, rel) for rel in in_home]
    record = read_install(root, state) or {}  # type: ignore[arg-type]  # str paths: it joins them
    for entry in (record.get("hooks") or {}).values():
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            paths.append(entry["path"])
    return sorted({os.path.realpath(p) for p in paths if os.path.lexists(p)})


def hits(scan, program: str, argv: list) -> list[str]:
    """What `argv` (already unwrapped) would delete of the guarded paths, as hit reasons."""
    if program not in DELETERS and program not in ("find", "git"):
        return []
    protect = guarded(scan.root, scan.state, scan.home)
    if not protect:
        return []
    if program in DELETERS:
        return _deleter(scan, program, argv, protect)
    if program == "find":
        return _find(scan, argv, protect)
    return _git(scan, argv, protect)


def _reaches(scan, words: list, protect: list[str]) -> list[str]:
    found = []
    for word in words:
        paths = scan.resolve(word)
        if paths is None:
            continue  # an expansion vacant cannot read: delete-outside-workspace speaks for it
        for path in paths:
            real = deletion_lands(path)
            found += [f"{WHY}: {g}" for g in protect if inside(g, real) or inside(real, g)]
    return found


def _deleter(scan, program: str, argv: list, protect: list[str]) -> list[str]:
    words = operands(argv)
    if program == "mv":
        words = words[:-1]  # the last operand is where things go
    return _reaches(scan, words, protect)


def _find(scan, argv: list, protect: list[str]) -> list[str]:
    texts = [w.text for w in argv[1:]]
    deletes = "-delete" in texts or any(program_of(nested[0].text) in DELETERS for nested in find_exec(argv) if nested)
    if not deletes:
        return []
    starts, _follow = find_starts(argv)
    tests, loose = [], any(t in ("!", "-not", "-o", "-or", ",") for t in texts)
    for i, text in enumerate(texts[:-1]):
        if text in NAME_TESTS:
            tests.append((text, texts[i + 1]))
    found = []
    for word in starts:
        for path in scan.resolve(word) or []:
            start = os.path.realpath(path)
            for g in protect:
                if inside(start, g):  # starting inside a guarded directory: whatever matches is the record
                    found.append(f"{WHY}: {g}")
                    continue
                if not inside(g, start):
                    continue
                targets = [g] + ([os.path.join(g, "runs", "r", name) for name in STATE_NAMES] if os.path.isdir(g) else [])
                if loose or any(_could_match(tests, word.text, start, target) for target in targets):
                    found.append(f"{WHY}: {g}")
    return found


def _could_match(tests: list[tuple[str, str]], start_text: str, start: str, target: str) -> bool:
    """Whether every name test holds for the target or a directory between the start and it."""
    if not tests:
        return True
    rel = os.path.relpath(target, start).split(os.sep)
    for depth in range(1, len(rel) + 1):
        shown = os.path.join(start_text, *rel[:depth])
        name = rel[depth - 1]
        if all(_test(kind, pattern, name, shown) for kind, pattern in tests):
            return True
    return False


def _test(kind: str, pattern: str, name: str, shown: str) -> bool:
    subject = name if kind in ("-name", "-iname") else shown
    if NAME_TESTS[kind]:
        subject, pattern = subject.lower(), pattern.lower()
    return fnmatch.fnmatchcase(subject, pattern)


def _git(scan, argv: list, protect: list[str]) -> list[str]:
    words = argv[git_subcommand(argv)[0]:]
    if not words:
        return []
    sub, rest = words[0].text, [w.text for w in words[1:]]
    short = "".join(t[1:] for t in rest if t.startswith("-") and not t.startswith("--"))
    if sub == "stash":
        if "-u" in rest or "--include-untracked" in rest or "--all" in rest or "u" in short or "a" in short:
            inside_root = [g for g in protect if inside(g, scan.root)]
            return [f"{WHY}: {g} (untracked files are stashed away)" for g in inside_root]
        return []
    if sub != "clean" or "n" in short or "--dry-run" in rest:
        return []
    if not any(flag in short for flag in "dxX"):
        return []
    specs = [w for w in words[1:] if not w.text.startswith("-")]
    if not specs:
        if scan.cwd is None:
            return [f"{WHY} (git clean from a directory vacant cannot follow)"]
        specs = [type(argv[0])(".", ".", False, ())]
    found = []
    for word in specs:
        for path in scan.resolve(word) or []:
            base = os.path.realpath(path)
            found += [f"{WHY}: {g}" for g in protect if inside(g, base) and inside(g, scan.root)]
    return found
