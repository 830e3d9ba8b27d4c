"""Plain-text forms the shell reader unfolds before it applies the rules (docs/GATE.md, "Forms").

- a shell's own script: `-c` after any options (`bash -o errexit -c …`, `bash -c -- …`, `sh -ec …`),
  `su … -c`, `script -qc …`, a here-string or here-document fed to a shell, and literal text piped
  into one (`echo 'git push' | sh`, `printf …`);
- more wrappers that run their operand (`npx`, `uv run`, `nix-shell --run`, `chroot DIR`, …);
- git aliases: `git -c alias.p=push p` and aliases configured in the repository's config, the
  user's `~/.gitconfig` / `$XDG_CONFIG_HOME/git/config` and `/etc/gitconfig` (with `include`s);
- `vacant` verbs only the person may use (PERSON_VERBS), in every form the reader sees;
- where a command writes (`tee`, `dd of=`, `truncate`, `cp`/`mv`/`install` destinations, `sed -i`,
  redirections) and where a symlink made in the same line points.

Out of reach (documented as limits): anything a variable or an interpreter computes at run time.
Stdlib only (hot path); every file read is capped and skips anything that is not a regular file.
"""

from __future__ import annotations

import os
import re
import stat

from vacant.policy.gate import shellwords
from vacant.policy.gate.argv import git_subcommand, program, skip_options
from vacant.core.lazyre import Lazy

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "mksh", "busybox", "rbash", "yash", "posh",
                    "tcsh", "csh", "elvish", "oksh", "loksh", "pdksh"})
# options of a shell that take the next word as their argument
_SHELL_ARG_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file", "-C", "--init-command"})
# programs with a `-c CMD` / `--command CMD` option anywhere in their arguments
COMMAND_OPTION = frozenset({"su", "script", "runuser", "sg", "nix-shell", "flatpak-spawn"})
# `PROGRAM SUB … CMD`: a sub-command that runs the rest as a command
TWO_WORD_WRAPPERS = {
    "uv": {"run", "tool"}, "poetry": {"run"}, "pipenv": {"run"}, "pdm": {"run"}, "hatch": {"run"},
    "rye": {"run"}, "pipx": {"run"}, "bundle": {"exec"}, "npm": {"exec", "x"}, "pnpm": {"exec", "dlx"}, "yarn": {"exec", "dlx"},
    "bun": {"x"}, "direnv": {"exec"}, "aws-vault": {"exec"}, "op": {"run"}, "conda": {"run"}, "mamba": {"run"},
    "micromamba": {"run"}, "pixi": {"run"}, "devbox": {"run"}, "nix": {"shell", "develop", "run"},
    "dotenvx": {"run"}, "doppler": {"run"}, "infisical": {"run"}, "mise": {"exec", "x"}, "asdf": {"exec"},
    "rtx": {"exec"}, "toolbox": {"run"}, "distrobox": {"enter"}, "firejail": set(), "systemd-run": set(),
}
# one-word wrappers not in shellscan.WRAPPERS: program -> options that take a separate argument
MORE_WRAPPERS = {
    "npx": {"-p", "--package", "-c", "--call"}, "bunx": set(), "pnpx": set(), "uvx": {"--from", "--with"},
    "dotenv": {"-e", "-f", "-v", "-c"}, "chroot": set(), "unshare": set(), "nsenter": {"-t"},
    "fakeroot": set(), "eatmydata": set(), "nocorrect": set(), "noglob": set(), "proxychains": {"-f"},
    "proxychains4": {"-f"}, "torsocks": set(), "strace": {"-o", "-e", "-p", "-s"}, "ltrace": {"-o", "-e"},
    "valgrind": set(), "pkexec": {"--user"}, "firejail": set(), "systemd-run": {"-p", "--unit", "-u"},
    "catchsegv": set(), "ssh-agent": set(), "dbus-run-session": set(), "xvfb-run": {"-s", "-n", "-a"},
    "faketime": set(), "numactl": set(), "prlimit": set(), "cpulimit": {"-l", "-p"}, "trickle": {"-d", "-u"},
    "sem": set(), "parallel": set(), "entr": set(), "retry": {"-t", "-d"}, "with-contenv": set(),
}
MORE_WITH_OPERAND = {"chroot": 1, "faketime": 1, "sem": 0}
# `vacant` verbs that speak for the person: refused from an agent's tool call
PERSON_VERBS = frozenset({"approve", "decline", "unflag", "uninstall", "flag"})
# functions of vacant's Python API that do what those verbs do (named in interpreter code)
PERSON_FUNCTIONS = Lazy(r"\b(?:answer|withdraw|add_flag|uninstall|approve|decline|unflag)\s*\(")
MAX_CONFIG_BYTES = 1 << 20
MAX_INCLUDES = 8
GIT_BUILTINS = frozenset("""
add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore check-mailmap
check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column commit commit-graph
commit-tree config count-objects credential describe diff diff-files diff-index diff-tree difftool fetch
fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch fsck gc get-tar-commit-id grep
gui hash-object help http-push index-pack init instaweb interpret-trailers log ls-files ls-remote ls-tree
mailinfo mailsplit maintenance merge merge-base merge-file merge-index merge-tree mktag mktree mv name-rev
notes pack-objects pack-refs prune pull push range-diff read-tree rebase reflog remote repack replace
request-pull rerere reset restore rev-list rev-parse revert rm send-email send-pack shortlog show show-branch
show-ref sparse-checkout stash status stripspace submodule svn switch symbolic-ref tag unpack-objects
update-index update-ref verify-commit verify-pack verify-tag version whatchanged worktree write-tree lfs p4
subtree
""".split())
# -- shells -----------------------------------------------------------------------------------------


def shell_c(argv: list) -> str | None:
    """The `-c` script of a shell, with options before it (`-o errexit`, `-e`, `--norc`) or a `--`
    between `-c` and the script; None when the shell runs a file or reads stdin."""
    seen_c = False
    index = 1
    while index < len(argv):
        text = argv[index].text
        if text == "--":
            index += 1
            break
        if text in ("--command",):
            return argv[index + 1].text if index + 1 < len(argv) else None
        if text in _SHELL_ARG_OPTIONS:
            index += 2
            continue
        if text.startswith("--"):
            index += 1
            continue
        if len(text) > 1 and text[0] in "-+":
            letters = text[1:]
            seen_c |= text[0] == "-" and "c" in letters
            index += 1 + sum(1 for letter in letters if letter in "oO")  # -euo pipefail: o takes a word
            continue
        break
    if seen_c and index < len(argv):
        return argv[index].text
    return None


def command_option(argv: list) -> str | None:
    """`su -c CMD user`, `su user -c CMD`, `script -qc CMD`, `nix-shell --run CMD`: the command."""
    for index, word in enumerate(argv[1:], start=1):
        text = word.text
        nxt = argv[index + 1].text if index + 1 < len(argv) else None
        if text in ("--command", "--run", "--session-command"):
            return nxt
        for prefix in ("--command=", "--run="):
            if text.startswith(prefix):
                return text[len(prefix):]
        if len(text) > 1 and text[0] == "-" and not text.startswith("--") and text.endswith("c"):
            return nxt
    return None


def shell_reads_stdin(argv: list) -> bool:
    """A shell with no `-c` and no script file operand: it runs what it reads on stdin."""
    if shell_c(argv) is not None:
        return False
    index = 1
    while index < len(argv):
        text = argv[index].text
        if text == "--":
            return index + 1 >= len(argv)
        if text in _SHELL_ARG_OPTIONS:
            index += 2
            continue
        if len(text) > 1 and text[0] in "-+":
            if text[0] == "-" and "s" in text[1:] and not text.startswith("--"):
                return True  # `sh -s args`: the script is stdin
            index += 1
            continue
        return text == "-"
    return True


def piped_text(argv: list) -> str | None:
    """The literal text `echo`/`printf` writes (None when an expansion hides it)."""
    if not argv or program(argv[0].text) not in ("echo", "printf"):
        return None
    words = argv[1:]
    if program(argv[0].text) == "echo":
        while words and re.fullmatch(r"-[neE]+", words[0].text):
            words = words[1:]
    if any(word.expands for word in words):
        return None
    text = " ".join(word.text for word in words)
    return text.replace("\\n", "\n").replace("%s", " ")


def unwrap_more(argv: list) -> list:
    """argv without the wrappers shellscan does not know (`npx x`, `uv run x`, `chroot DIR x`)."""
    for _ in range(8):
        if not argv or argv[0].expands:
            return argv
        name = program(argv[0].text)
        if name in TWO_WORD_WRAPPERS and len(argv) > 1 and argv[1].text in TWO_WORD_WRAPPERS[name]:
            argv = skip_options(argv[2:], set())
            continue
        if name in MORE_WRAPPERS:
            argv = skip_options(argv[1:], MORE_WRAPPERS[name])
            argv = argv[MORE_WITH_OPERAND.get(name, 0):]
            continue
        if name == "busybox" and len(argv) > 1:
            argv = argv[1:]
            continue
        return argv
    return argv


# -- git aliases ----------------------------------------------------------------------------------


def git_alias_line(argv: list, cwd: str | None, root: str, home: str | None, env: dict) -> str | None:
    """The command line a git alias stands for (`!cmd` runs in a shell), or None when the
    sub-command is a built-in or no alias of that name is configured."""
    index, inline = git_subcommand(argv)
    if index >= len(argv) or argv[index].expands:
        return None
    sub = argv[index].text
    if sub in GIT_BUILTINS:
        return None
    value = inline.get(f"alias.{sub.lower()}")
    if value is None:
        value = configured_aliases(cwd or root, root, home, env).get(sub.lower())
    if value is None:
        return None
    rest = " ".join(word.norm for word in argv[index + 1:])
    if value.startswith("!"):
        return f"{value[1:]} {rest}".strip()
    options = " ".join(word.norm for word in argv[1:index])
    return f"git {options} {value} {rest}".strip()


def configured_aliases(start: str, root: str, home: str | None, env: dict) -> dict[str, str]:
    files = []
    if env.get("GIT_CONFIG_SYSTEM") or os.path.exists("/etc/gitconfig"):
        files.append(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    if env.get("GIT_CONFIG_GLOBAL"):
        files.append(env["GIT_CONFIG_GLOBAL"])
    elif home:
        xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        files += [os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")]
    files += _repo_configs(start, root)
    aliases: dict[str, str] = {}
    budget = [MAX_INCLUDES]
    for path in files:
        _read_config(path, home, aliases, budget)
    return aliases


def _repo_configs(start: str, root: str) -> list[str]:
    here = os.path.realpath(start)
    for _ in range(64):
        dot_git = os.path.join(here, ".git")
        if os.path.isdir(dot_git):
            return [os.path.join(dot_git, "config")]
        if os.path.isfile(dot_git):  # a worktree: `gitdir: …`, with the shared config in commondir
            text = _read_small(dot_git) or ""
            match = re.match(r"gitdir:\s*(.+)", text.strip())
            if not match:
                return []
            gitdir = os.path.join(here, match.group(1).strip())
            common = (_read_small(os.path.join(gitdir, "commondir")) or "").strip()
            found = [os.path.join(gitdir, "config.worktree")]
            return found + [os.path.join(gitdir, common or ".", "config")]
        parent = os.path.dirname(here)
        if parent == here:
            return []
        here = parent
    return []


def _read_small(path: str) -> str | None:
    """A small regular file's text (never a FIFO or device; capped)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONFIG_BYTES:
            return None
        with open(path, "rb") as handle:
            return handle.read(MAX_CONFIG_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


def _read_config(path: str, home: str | None, aliases: dict[str, str], budget: list[int]) -> None:
    text = _read_small(path)
    if text is None:
        return
    section = ""
    for line in _logical_lines(text):
        header = re.match(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]\s*(.*)$', line)
        if header:
            section = header.group(1).lower()
            line = header.group(2)
            if not line.strip():
                continue
        match = re.match(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$", line)
        if not match:
            continue
        key, value = match.group(1).lower(), _config_value(match.group(2) or "")
        if section == "alias":
            aliases[key] = value
        elif section in ("include", "includeif") and key == "path" and budget[0] > 0:
            budget[0] -= 1  # includeIf conditions are not evaluated: every include counts
            target = os.path.expanduser(value) if not home else value.replace("~", home, 1) if value.startswith("~") else value
            _read_config(os.path.join(os.path.dirname(path), target), home, aliases, budget)


def _logical_lines(text: str) -> list[str]:
    return text.replace("\\\n", "").splitlines()


def _config_value(raw: str) -> str:
    out, quoted, index = [], False, 0
    while index < len(raw):
        char = raw[index]
        if char == '"':
            quoted = not quoted
        elif char == "\\" and index + 1 < len(raw):
            index += 1
            out.append({"n": "\n", "t": "\t"}.get(raw[index], raw[index]))
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        index += 1
    return "".join(out).strip()


# -- vacant's person-only verbs --------------------------------------------------------------------


def person_verb(argv: list) -> str | None:
    """The person-only `vacant` verb this simple command runs, if any: `vacant unflag …`,
    `/path/to/vacant approve …`, `python -m vacant[.cli] decline …`, `uvx vacant …`, an unknown
    program (`$V unflag`) given a person-only verb, or interpreter code naming vacant's API."""
    texts = [word.text for word in argv]
    name = program(texts[0])
    rest = texts[1:]
    if re.match(r"^(?:python|pypy)[0-9.]*$", name) and "-c" in rest and any("vacant" in t for t in rest):
        code = rest[rest.index("-c") + 1] if rest.index("-c") + 1 < len(rest) else ""
        return "python -c" if PERSON_FUNCTIONS.search(code) else None
    if re.match(r"^(?:python|pypy)[0-9.]*$", name) and len(rest) >= 2 and "-m" in rest:
        at = rest.index("-m")
        if at + 1 < len(rest) and rest[at + 1].split(".")[0] == "vacant":
            rest = rest[at + 2:]
        else:
            return None
    elif name in ("uvx", "pipx", "pipx-run"):
        rest = [t for t in rest if t not in ("run", "vacant", "--")]
    elif not (name == "vacant" or name.startswith("vacant.") or name == "vacant-cli"):
        if argv[0].expands and rest and rest[0] in PERSON_VERBS:
            return rest[0]  # `$VACANT unflag f1`: the program is hidden, the verb is not
        return None
    operands = [t for t in rest if not t.startswith("-")]
    return operands[0] if operands and operands[0] in PERSON_VERBS else None


# -- writes and links -----------------------------------------------------------------------------


def write_targets(argv: list) -> list:
    """The words a command writes to (beyond redirections): `tee F`, `dd of=F`, `truncate … F`,
    `touch F`, the destination of `cp`/`mv`/`install`/`rsync`/`ln`, the files of `sed -i`."""
    name = program(argv[0].text)
    args = argv[1:]
    operands = [w for w in args if not (w.text.startswith("-") and len(w.text) > 1)]
    if name in ("tee", "touch", "truncate"):
        skip = {"-s", "--size", "-r", "--reference", "-d", "-t"}
        out, index = [], 0
        while index < len(args):
            if args[index].text in skip:
                index += 2
                continue
            if not args[index].text.startswith("-") or args[index].text == "-":
                out.append(args[index])
            index += 1
        return [w for w in out if w.text != "-"]
    if name == "dd":
        return [_suffix(w, "of=") for w in args if w.text.startswith("of=")]
    if name in ("cp", "mv", "install", "rsync", "ln", "scp"):
        for index, word in enumerate(args):
            if word.text in ("-t", "--target-directory") and index + 1 < len(args):
                return [args[index + 1]]
            if word.text.startswith("--target-directory="):
                return [_suffix(word, "--target-directory=")]
        return operands[-1:] if len(operands) >= 2 else []
    if name == "sed" and any(w.text.startswith("-i") or w.text.startswith("--in-place") for w in args):
        has_e = any(w.text in ("-e", "--expression", "-f", "--file") for w in args)
        files = [w for w in operands]
        return files if has_e else files[1:]
    return []


def _suffix(word, prefix: str):
    text = word.text[len(prefix):]
    return shellwords.Word(text, text, word.expands, word.subs)


def symlink_made(argv: list) -> tuple | None:
    """`ln -s TARGET LINK` (also -sf, -sfn, --symbolic): (target word, link word); LINK defaults
    to the target's name in the current directory."""
    if program(argv[0].text) != "ln":
        return None
    args = argv[1:]
    symbolic = any(w.text == "--symbolic" or (re.fullmatch(r"-[a-zA-Z]*s[a-zA-Z]*", w.text) is not None) for w in args)
    operands = [w for w in args if not w.text.startswith("-")]
    if not symbolic or not operands:
        return None
    if len(operands) == 1:
        name = os.path.basename(operands[0].text.rstrip("/"))
        return operands[0], shellwords.Word(name, name, False, ())
    return operands[0], operands[-1]


TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero")


def harmless_outside(path: str, env: dict) -> bool:
    """Outside the workspace, yet not ACT to write: temp directories (except what lies in the
    user's home, wherever that is) and the terminal's streams."""
    if path in DEVICES or path.startswith(("/dev/fd/", "/proc/self/fd/", "/dev/pts/")):
        return True
    home = env.get("HOME")
    if home and (path == home or path.startswith(os.path.realpath(home).rstrip("/") + "/")
                 or path.startswith(home.rstrip("/") + "/")):
        return False
    temps = list(TEMP_DIRS) + [env.get("TMPDIR") or "/tmp"]
    for base in temps:
        for variant in {base, os.path.realpath(base)}:
            if path == variant or path.startswith(variant.rstrip("/") + "/"):
                return True
    return False
