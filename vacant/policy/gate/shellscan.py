"""The gate's shell reader: what a command line runs, deletes and writes, read from its text
(`shellwords` splits it). It sees plain text only; what a variable or an interpreter computes at
run time is out of reach (docs/GATE.md lists those forms). Stdlib only (hot path)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from vacant.core.wall import inside
from vacant.policy.gate.argv import deletion_lands, find_exec, find_starts, operands, skip_options
from vacant.policy.gate.argv import program as program_of
from vacant.policy.gate.keyrefs import key_reference
from vacant.policy.gate import forms, recordguard, shellwords
from vacant.policy.gate.modes import mode_of, read_head
from vacant.policy.gate.rules import (
    MAX_DEPTH,
    SCAN_BUDGET_S,
    Hit,
    Policy,
)
from vacant.policy.gate.scope import Scope, is_key, key_dirs, rule_matches
from vacant.core.lazyre import Lazy

# -- the shell ------------------------------------------------------------------------------------

SHELLS = forms.SHELLS
INTERPRETERS = SHELLS | frozenset({
    "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "ruby", "perl", "php", "lua",
    "luajit", "Rscript", "pwsh", "powershell", "osascript", "tsx", "ts-node", "awk", "gawk", "mawk", "tclsh",
    "julia", "elixir", "groovy", "swift", "go", "uv", "npx", "source", ".",
})
VIEWERS = frozenset({
    "cat", "less", "more", "head", "tail", "wc", "ls", "stat", "file", "grep", "egrep", "fgrep", "rg", "ag", "diff",
    "cmp", "md5sum", "sha1sum", "sha256sum", "sha512sum", "shasum", "b2sum", "cksum", "xxd", "hexdump", "od",
    "strings", "bat", "batcat", "nl", "tac", "sort", "uniq", "cut", "echo", "printf", "test", "[", "realpath",
    "readlink", "basename", "dirname", "shellcheck", "chmod", "tree", "du", "find", "fd", "jq", "yq", "column",
    "sed", "git", "colordiff", "vacant", "cd", "pushd", "popd", "mkdir",
})
GIT_WRITES = frozenset({"rm", "mv", "checkout", "restore", "reset", "clean", "apply", "am", "stash", "switch", "merge",
                        "rebase", "cherry-pick", "revert", "pull"})
DELETERS = frozenset({"rm", "rmdir", "unlink", "shred", "srm", "trash", "trash-put"})
WRAPPERS = {  # program -> options that take a separate argument
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"}, "doas": {"-u", "-C"},
    "env": {"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}, "nice": {"-n", "--adjustment"},
    "nohup": set(), "time": {"-f", "-o"}, "command": set(), "exec": {"-a"}, "builtin": set(),
    "stdbuf": {"-i", "-o", "-e"}, "ionice": {"-c", "-n", "-p"}, "chrt": set(), "taskset": set(),
    "unbuffer": set(), "caffeinate": set(), "setsid": set(), "xargs": {"-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"}, "watch": {"-n", "-d"}, "flock": {"-w", "-E"},
}
WITH_OPERAND = {"timeout": 1, "chrt": 1, "taskset": 1, "flock": 1}  # positional args before the command
KEYWORDS = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time",
                      "coproc"})
_ASSIGNMENT = Lazy(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
_GLOB = Lazy(r"[*?\[]")
_HOME_VAR = Lazy(r"^(?:\$HOME|\$\{HOME\})(/.*)?$")


class ScanBudget(Exception):
    """The command line took longer than SCAN_BUDGET_S to read: the gate denies it."""


def _unwrap(argv: list) -> list:
    """argv without leading assignments, keywords and wrappers (`sudo`, `env`, `npx`, `uv run` …)."""
    for _ in range(8):
        unwrapped = forms.unwrap_more(_unwrap_known(argv))
        if len(unwrapped) == len(argv):
            return unwrapped
        argv = unwrapped
    return argv


def _unwrap_known(argv: list) -> list:
    argv = list(argv)
    while argv:
        head = argv[0].text
        if _ASSIGNMENT.match(head) or head in KEYWORDS:
            argv.pop(0)
            continue
        name = program_of(head)
        if name not in WRAPPERS or argv[0].expands:
            break
        argv.pop(0)
        skip_options(argv, WRAPPERS[name])
        if name == "env":
            while argv and _ASSIGNMENT.match(argv[0].text):
                argv.pop(0)
        for _ in range(WITH_OPERAND.get(name, 0)):
            if argv:
                argv.pop(0)
    return argv


class ShellScan(Scope):
    """Everything one command line would do that the gate cares about."""

    def __init__(self, root: Path, cwd: str, policy: Policy, home: str | None, env: dict | None = None,
                 state: Path | None = None) -> None:
        super().__init__(root, cwd, policy, home, env, state)
        self.hits: list[Hit] = []
        self.arms: dict[str, str | None] = {}  # absolute arm path -> its mode (None: unreadable)
        self.answers: str | None = None  # a person-only `vacant` verb the line runs
        self.shell_aliases: dict[str, str] = {}  # `alias v=vacant` earlier in the line
        self.links: dict[str, str] = {}  # `ln -s T L` earlier in the line: L -> where T resolves
        self.deadline = time.monotonic() + SCAN_BUDGET_S
        self.key_touched: str | None = None
        self.patches: list[str] = []  # apply_patch bodies run through the shell
        self.unreadable = False
        self.too_deep = False

    # paths

    def resolve(self, word) -> list[str] | None:
        """Absolute paths a word names (globs expanded), None when an expansion hides it."""
        text = word.text
        if word.expands:
            match = _HOME_VAR.match(text)
            if not match or not self.home or "$" in (match.group(1) or "") or "`" in text:
                return None
            text = self.home + (match.group(1) or "")
        elif text == "~" or text.startswith("~/"):
            if not self.home:
                return None
            text = self.home + text[1:]
        if not text:
            return []
        if self.cwd is None and not os.path.isabs(text):
            return None  # after a `cd` vacant could not follow
        path = os.path.normpath(os.path.join(self.cwd, text))
        if _GLOB.search(text):
            import glob

            found = glob.glob(path)
            return [os.path.normpath(p) for p in found] or [path]
        return [path]

    def arm_files(self, path: str) -> list[str]:
        """The arm files a path names: itself when under the arms directory, or every arm below
        it when it is the arms directory (or one of its ancestors inside the workspace)."""
        if inside(path, self.arms_dir) and path != self.arms_dir:
            if os.path.isdir(path):
                return self._walk_arms(path)
            return [path]
        if inside(self.arms_dir, path) and inside(path, self.root) and path != self.root:
            return self._walk_arms(self.arms_dir)
        return []

    @staticmethod
    def _walk_arms(top: str, limit: int = 500) -> list[str]:
        found: list[str] = []
        for directory, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            found += [os.path.join(directory, name) for name in filenames if not name.startswith(".")]
            if len(found) >= limit:
                break
        return found

    def note_arm(self, path: str) -> None:
        if path not in self.arms:
            self.arms[path] = mode_of(read_head(path), path)

    # scanning

    def run(self, text: str, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            self.unreadable = True
            self.too_deep = True  # what runs that deep is unknown: the gate holds it (docs/GATE.md)
            return
        try:
            commands = shellwords.simple_commands(text, self.deadline)
        except shellwords.OverBudget as error:
            raise ScanBudget(str(error)) from None
        except shellwords.LexError:
            self.unreadable = True
            commands = self._fallback(text)
        viewed: dict[int, list[str]] = {}
        stdin_interpreter: set[int] = set()
        fed: dict[int, list[str]] = {}  # literal text written into a pipeline (echo, printf, cat <<EOF)
        stdin_shell: set[int] = set()
        for command in commands:
            if time.monotonic() > self.deadline:
                raise ScanBudget(f"reading the command line took longer than {SCAN_BUDGET_S:g} s")
            self.simple(command, depth, viewed, stdin_interpreter)
            self._follow_cd(command)
            self._pipe_text(command, fed, stdin_shell)
        for pipeline in stdin_interpreter:  # `cat arms/x.sh | sh`: the arm runs after all
            for path in viewed.get(pipeline, []):
                self.note_arm(path)
        for pipeline in stdin_shell:  # `echo 'git push' | sh`: the text runs as a command line
            for piped in fed.get(pipeline, []):
                self.run(piped, depth + 1)

    def _alias(self, argv: list, depth: int) -> bool:
        """`alias v=vacant` defines, `v unflag x` runs the alias's text (True: handled here)."""
        if argv[0].text == "alias" and not argv[0].expands:
            for word in argv[1:]:
                name, equals, value = word.text.partition("=")
                if equals:
                    self.shell_aliases[name] = value
            return True
        value = self.shell_aliases.get(argv[0].text)
        if value is None or argv[0].expands:
            return False
        self.run(" ".join([value] + [word.norm for word in argv[1:]]), depth + 1)
        return True

    @staticmethod
    def _pipe_text(command, fed: dict, stdin_shell: set) -> None:
        argv = _unwrap(list(command.argv))
        if not argv:
            return
        text = forms.piped_text(argv)
        if text is not None:
            fed.setdefault(command.pipeline, []).append(text)
        elif program_of(argv[0].text) == "cat" and command.heredocs:
            fed.setdefault(command.pipeline, []).extend(command.heredocs)
        if program_of(argv[0].text) in SHELLS and forms.shell_reads_stdin(argv):
            stdin_shell.add(command.pipeline)

    def _follow_cd(self, command) -> None:
        """`cd DIR && sh x.sh`: later relative paths start from DIR (None when it cannot be known)."""
        argv = _unwrap(list(command.argv))
        if not argv or program_of(argv[0].text) not in ("cd", "pushd", "popd"):
            return
        dirs = operands(argv)
        if program_of(argv[0].text) == "popd" or (dirs and dirs[0].text == "-"):
            self.cwd = None
            return
        if not dirs:
            self.cwd = self.home
            return
        paths = self.resolve(dirs[0])
        self.cwd = paths[0] if paths and len(paths) == 1 else None

    def arms_named(self, text: str) -> list[str]:
        """Arms whose file name is the last part of `text` (when the directory is unknown)."""
        name = os.path.basename(text.rstrip("/"))
        if not name or not os.path.isdir(self.arms_dir):
            return []
        return [path for path in self._walk_arms(self.arms_dir) if os.path.basename(path) == name]

    @staticmethod
    def _fallback(text: str) -> list:
        """An unreadable line (an unclosed quote): whitespace words of each piece, nothing expanded."""
        out = []
        for number, piece in enumerate(re.split(r"[;&|()\n`]|\$\(", text)):
            words = [shellwords.Word(w, w, False, ()) for w in piece.split()]
            if words:
                out.append(shellwords.Simple(words, [], [], number))
        return out

    def simple(self, command, depth: int, viewed: dict, stdin_interpreter: set) -> None:
        words = list(command.argv)
        for word in words + [target for _, target in command.redirects]:
            for sub in word.subs:
                self.run(sub, depth + 1)
        argv = _unwrap(words)
        if not argv:
            self._references(command, [], None, viewed)
            return
        if self._alias(argv, depth):
            return
        program = program_of(argv[0].text)
        norm = " ".join([w.norm for w in argv] + [f"{op} {w.norm}" for op, w in command.redirects])
        norms = {norm}
        if "/" in argv[0].text and not argv[0].expands:  # /usr/bin/git push, ./node_modules/.bin/x
            norms.add(" ".join([shellwords.normal_form(program)] + norm.split(" ")[1:]))
        verb = forms.person_verb(argv)
        if verb:
            self.answers = verb
        allowed = any(rule_matches(rule, "shell", text) for rule in self.policy.allow for text in norms)
        if not allowed:
            for rule in self.policy.act:
                if any(rule_matches(rule, "shell", text) for text in norms):
                    self.hits.append(Hit(rule.name, rule.why))
            if "delete-outside-workspace" not in self.policy.removed:
                self._deletes(program, argv)
            if "write-outside-workspace" not in self.policy.removed:
                self._writes_outside(command, argv)
            if recordguard.RULE not in self.policy.removed:
                self.hits += [Hit(recordguard.RULE, why) for why in recordguard.hits(self, program, argv)]
        self._note_link(argv)
        # nested command lines
        if program in SHELLS:
            script = forms.shell_c(argv)
            if script is not None:
                self.run(script, depth + 1)
            elif forms.shell_reads_stdin(argv):  # bash <<< 'git push', bash <<EOF … EOF
                for op, word in command.redirects:
                    if op == "<<<":
                        self.run(word.text, depth + 1)
                for body in command.heredocs:
                    self.run(body, depth + 1)
        elif program in forms.COMMAND_OPTION:
            script = forms.command_option(argv)
            if script is not None:
                self.run(script, depth + 1)
        elif program == "git":
            line = forms.git_alias_line(argv, self.cwd, self.root, self.home, self.env)
            if line is not None:
                self.run(line, depth + 1)
        elif program == "eval":
            self.run(" ".join(w.text for w in argv[1:]), depth + 1)
        elif program == "find":
            for nested in find_exec(argv):
                self.simple(shellwords.Simple(nested, [], [], -1), depth + 1, {}, set())
        elif program == "apply_patch":
            self.patches += command.heredocs
        if (program in INTERPRETERS and _script_arg(argv) is None and forms.shell_c(argv) is None
                and not any(op in ("<", "<<", "<<-", "<<<") for op, _ in command.redirects)):
            stdin_interpreter.add(command.pipeline)
        if allowed:
            return
        self._references(command, argv, program, viewed)

    def _references(self, command, argv: list, program: str | None, viewed: dict) -> None:
        if program is not None and not self.key_touched:
            self.key_touched = key_reference(program, [w.text for w in argv[1:]], self.cwd, self.home, key_dirs())
        viewer = program is not None and _is_viewer(program, argv)
        targets = [(word, False) for word in argv[1:]] + [(word, op in shellwords.WRITE_REDIRECTS)
                                                          for op, word in command.redirects]
        if program is not None and "/" in argv[0].text:
            targets.append((argv[0], False))  # ./arms/x.sh: the program itself
        for word, writes in targets:
            if time.monotonic() > self.deadline:
                raise ScanBudget(f"reading the command line took longer than {SCAN_BUDGET_S:g} s")
            paths = self.resolve(word)
            if paths is None and self.cwd is None and not word.expands and (writes or not viewer):
                for arm in self.arms_named(word.text):  # the directory is unknown: same name, same arm
                    self.note_arm(arm)
            for path in paths or []:
                path = os.path.realpath(path)  # symlinks: a link to an arm runs the arm
                if is_key(path, self.home):
                    self.key_touched = path
                why = self.protected(path)
                if why and (writes or not viewer):
                    self.hits.append(Hit("gate-self", why))
                for arm in self.arm_files(path):
                    if writes or not viewer:
                        self.note_arm(arm)
                    else:
                        viewed.setdefault(command.pipeline, []).append(arm)

    def _deletes(self, program: str, argv: list) -> None:
        targets: list = []
        finding = False  # `find ROOT -delete` deletes below the root, not the root
        follow = False  # find -L / -H / -follow: a starting point that is a link is followed
        if program in DELETERS:
            targets = operands(argv)
        elif program == "find" and any(w.text in ("-delete",) for w in argv) or (
                program == "find" and any(program_of(n[0].text) in DELETERS for n in find_exec(argv) if n)):
            targets, follow = find_starts(argv)
            finding = True
        elif program == "git" and len(argv) > 1 and argv[1].text == "clean":
            return
        for word in targets:
            paths = self.resolve(word)
            if paths is None:
                self.hits.append(Hit("delete-outside-workspace",
                                     f"files outside the workspace, maybe: {word.text} (a path vacant cannot resolve)"))
                continue
            through = follow or word.text.endswith(("/", "/.")) or word.text == "."
            for path in paths:
                real = self._landing(path, through)
                if not inside(real, self.root) or (real == self.root and not finding):
                    self.hits.append(Hit("delete-outside-workspace", f"{real} (deleted; it is outside the workspace)"))

    def _landing(self, path: str, through: bool) -> str:
        """Where a deletion of `path` lands: through a link when it ends in `/` (or find -L), and
        through a link made earlier in the same line (`ln -s /etc x && rm -rf x/`)."""
        for link, target in self.links.items():
            if path == link and through:
                return os.path.realpath(target)
            if inside(path, link) and path != link:
                return os.path.realpath(target + path[len(link):])
        return os.path.realpath(path) if through else deletion_lands(path)

    def _note_link(self, argv: list) -> None:
        made = forms.symlink_made(argv)
        if made is None:
            return
        target_word, link_word = made
        links = self.resolve(link_word)
        if not links or len(links) != 1:
            return
        link = links[0]
        if os.path.isdir(link) and not os.path.islink(link):
            link = os.path.join(link, os.path.basename(target_word.text.rstrip("/")))
        if target_word.expands:
            self.links[link] = "/"  # a link to where a variable points: anywhere
            return
        text = target_word.text
        if text == "~" or text.startswith("~/"):
            text = (self.home or "/") + text[1:]
        self.links[link] = os.path.normpath(os.path.join(os.path.dirname(link), text))

    def _writes_outside(self, command, argv: list) -> None:
        """Redirections and writing programs whose target lies outside the workspace (temp
        directories and the terminal's streams excepted). A variable target is out of reach."""
        words = [word for op, word in command.redirects if op in shellwords.WRITE_REDIRECTS]
        words += forms.write_targets(argv)
        for word in words:
            if word.text.isdigit() or word.text == "-":
                continue  # 2>&1, stdout
            for path in self.resolve(word) or []:
                real = self._landing(path, True) if os.path.lexists(path) or self.links else os.path.realpath(path)
                if not inside(real, self.root) and not forms.harmless_outside(real, self.env):
                    self.hits.append(Hit("write-outside-workspace", f"{real} (written; it is outside the workspace)"))


def _is_viewer(program: str, argv: list) -> bool:
    if program not in VIEWERS:
        return False
    texts = [w.text for w in argv[1:]]
    if program == "sed":
        return not any(t.startswith("-i") or t == "--in-place" or t.startswith("--in-place=") for t in texts)
    if program == "git":
        sub = next((t for t in texts if not t.startswith("-")), "")
        return sub not in GIT_WRITES
    if program == "find":
        return not any(t in ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf") for t in texts)
    if program == "vacant":
        return True
    return True


def _script_arg(argv: list):
    """The script file an interpreter runs (its first operand), None for stdin or `-c`/`-m`."""
    skip_next = False
    for word in argv[1:]:
        text = word.text
        if skip_next:
            skip_next = False
            continue
        if text in ("-m", "-c", "-e", "--eval", "-r", "--command"):
            return None
        if text in ("-W", "-X", "-O", "--import", "--require", "-I"):
            skip_next = True
            continue
        if text.startswith("-") and text != "-":
            continue
        return None if text == "-" else word
    return None
