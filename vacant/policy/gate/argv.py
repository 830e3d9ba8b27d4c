"""A simple command's words (its argv) read the one way the gate's shell reader, its forms and the record guard share.

What each of them needs of an argv, written once: the program's name, options skipped (with the
ones that take the next word), the operands, git's global options and its sub-command, find's
starting points and the commands its `-exec` runs, and where a deletion of a path lands (whether a
path is inside a directory: vacant/core/wall.py `inside`). Words are shellwords.Word; nothing here
expands or resolves a word (shellscan does). Stdlib only (hot path).
"""

from __future__ import annotations

import os

from vacant.policy.gate.shellwords import Word

# git's global options that take the next word as their argument (`git -C DIR push`)
GIT_OPTIONS_WITH_ARG = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                                  "--config-env", "--super-prefix", "--list-cmds"})
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_FOLLOW = frozenset({"-H", "-L"})
_FIND_LEADING = frozenset({"-H", "-L", "-P", "-D"})


def program(text: str) -> str:
    """The program a command word names (`/usr/bin/rm` is `rm`)."""
    return os.path.basename(text)


def deletion_lands(path: str) -> str:
    """Where a deletion of `path` lands: the parent's symlinks resolved (the last part itself is removed)."""
    if path.endswith(os.sep) or os.path.basename(path) in ("", ".", ".."):
        return os.path.realpath(path)
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def skip_options(argv: list, takes: set | frozenset) -> list:
    """`argv` (changed in place) without its leading options, the argument of each one in `takes`
    too; a `--` ends them (and goes), a lone `-` is an operand."""
    while argv and argv[0].text.startswith("-") and argv[0].text != "-":
        option = argv.pop(0).text
        if option == "--":
            break
        if option in takes and argv:
            argv.pop(0)
    return argv


def operands(argv: list) -> list:
    """The words after the program that are not options (`--` ends the options)."""
    out, options = [], True
    for word in argv[1:]:
        if options and word.text == "--":
            options = False
        elif options and word.text.startswith("-") and len(word.text) > 1:
            continue
        else:
            out.append(word)
    return out


def git_subcommand(argv: list) -> tuple[int, dict[str, str]]:
    """Where git's sub-command is in `argv` (`len(argv)` when there is none), past the global
    options, and the configuration given inline with `-c key=value` (keys lower-cased)."""
    index, inline = 1, {}
    while index < len(argv):
        text = argv[index].text
        if text in GIT_OPTIONS_WITH_ARG:
            value = argv[index + 1].text if index + 1 < len(argv) else ""
            if text == "-c" and "=" in value:
                key, _, val = value.partition("=")
                inline[key.lower()] = val
            index += 2
            continue
        if text.startswith("-"):
            index += 1
            continue
        break
    return min(index, len(argv)), inline


def find_starts(argv: list) -> tuple[list, bool]:
    """find's starting points (`.` when it names none) and whether it follows links there
    (`-H`, `-L` or `-follow`)."""
    words, follow = list(argv[1:]), False
    while words and (words[0].text in _FIND_LEADING or words[0].text.startswith("-O")):
        follow |= words[0].text in _FIND_FOLLOW
        words = words[2:] if words[0].text == "-D" else words[1:]
    follow |= any(word.text == "-follow" for word in argv)
    starts = []
    for word in words:
        if word.text.startswith("-") or word.text in ("(", "!"):
            break
        starts.append(word)
    return starts or [Word(".", ".", False, ())], follow


def find_exec(argv: list) -> list[list]:
    """The commands find's `-exec`/`-execdir`/`-ok`/`-okdir` run (their words up to `;` or `+`)."""
    nested: list[list] = []
    current: list | None = None
    for word in argv[1:]:
        if current is None:
            if word.text in FIND_EXEC:
                current = []
            continue
        if word.text in (";", "+"):
            nested.append(current)
            current = None
            continue
        current.append(word)
    if current:
        nested.append(current)
    return nested
