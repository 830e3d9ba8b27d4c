"""Any argument that resolves into the person's key directory (`~/.config/vacant`): the class
behind the shell forms that name the key path without a plain `cat KEY` (hot path, stdlib only).

A word reaches the key directory when, with `~`, `$HOME` and `${HOME}` put in, it

- holds the key directory's path anywhere in it: `dd if=…`, `curl file://…`, `git --work-tree=…`,
  `sqlite3 "select readfile('…')"`, `python3 -c 'open("…")'`;
- is a relative operand of a program told to work in a directory (`tar -C DIR`, `git -C DIR`,
  `make -C DIR`) that lands in it: `tar -C ~/.config -cf - vacant`;
- is an ancestor of it given to a program that reads a whole tree (`grep -r`, `cp -r`, `rsync`,
  `zip -r`, `tar`, `scp -r`, `find … -exec`, `git --work-tree=… add`): `find ~ -name key -exec cat {} +`.

Listing a directory (`ls ~/.config`) or naming the home directory to a program that does not
read trees stays free.
"""

from __future__ import annotations

import os

from vacant.core.wall import inside
from vacant.core.lazyre import Lazy

_HOME_REF = Lazy(r"\$\{HOME\}|\$HOME\b|(?<![\w.~-])~(?=/|$|['\":])")
CHDIR_OPTIONS = {"tar": ("-C", "--directory"), "git": ("-C",), "make": ("-C", "--directory"), "bsdtar": ("-C",)}
ALWAYS_TREE = {"tar", "bsdtar", "rsync", "cpio", "pax", "7z", "rclone", "restic", "borg"}
TREE_WITH_FLAG = {"grep": ("-r", "-R", "--recursive", "-rn", "-rl", "-Rn", "-ri"), "rg": (), "ag": (),
                  "cp": ("-r", "-R", "-a", "--recursive", "--archive"), "scp": ("-r",),
                  "zip": ("-r", "--recurse-paths"), "chmod": ("-R",), "ln": ()}
_EMBEDDED = Lazy(r"/[^\s'\"(),;<>|`]*")
FIND_ACTIONS = ("-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls")


def expand_home(text: str, home: str | None) -> str:
    return _HOME_REF.sub(lambda _m: home, text) if home else text


def _reads_trees(program: str, texts: list[str]) -> bool:
    if program in ALWAYS_TREE or program in ("rg", "ag"):
        return True
    if program == "find":
        return any(text in FIND_ACTIONS for text in texts)
    if program == "git":
        return any(text.startswith(("--work-tree", "--git-dir")) for text in texts)
    flags = TREE_WITH_FLAG.get(program)
    if not flags:
        return False
    return any(text in flags or (text.startswith("-") and not text.startswith("--")
                                 and any(f[1] in text[1:] for f in flags if len(f) == 2)) for text in texts)


def key_reference(program: str, texts: list[str], cwd: str | None, home: str | None, key_dirs: list[str]) -> str | None:
    """The key-directory path an argument list reaches, else None. `texts`: the words after the
    program, quotes removed; `key_dirs`: the key directory as configured and as resolved."""
    expanded = [expand_home(text, home) for text in texts]
    for text in expanded:
        for embedded in _EMBEDDED.findall(text):  # every absolute path inside the word, normalised
            path = os.path.normpath(embedded) if embedded.startswith("/") else ""
            if path and any(inside(path, key_dir) for key_dir in key_dirs):
                return path
    base = cwd
    chdir = CHDIR_OPTIONS.get(program, ())
    tree = _reads_trees(program, texts)
    take_dir = False
    for text in expanded:
        if take_dir:
            base = os.path.normpath(os.path.join(base or "/", text))
            take_dir = False
            continue
        if text in chdir:
            take_dir = True
            continue
        value = text.split("=", 1)[1] if text.startswith("--") and "=" in text else text
        if value.startswith("-") or not value or base is None and not value.startswith("/"):
            continue
        path = os.path.normpath(os.path.join(base or "/", value))
        for key_dir in key_dirs:
            if inside(path, key_dir) and (base != cwd or value.startswith("/")):
                return path  # a relative operand that lands in it after `-C DIR`, or an absolute one
            if tree and inside(key_dir, path):
                return path  # an ancestor handed to a program that reads the whole tree
    return None
