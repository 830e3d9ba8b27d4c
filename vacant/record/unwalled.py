"""A line the person approved that the platform's wall would break, run once by vacant's hook,
outside that wall (issue 41, "What the person allowed runs").

Where: a platform whose wall breaks an approved unwalled line and which cannot run it outside
itself states `hook_runs_approved` (vacant/platforms/base.py). A platform whose own sandbox runs
such a line outside it (Claude Code: `excludedCommands`) runs it itself, as the person too: the
same rules below decide whether the approval may be spent on it (`refusal`, with
`own_git_dir_refusal` for the platform's part), and what cannot pass them is denied, its approval
kept. Codex (0.171.0): behind vacant's
permission profile an approved `git push` to a remote on disk outside the workspace fails inside
Codex's sandbox, and `codex exec` refuses a command's request to run outside it
(vacant/platforms/codex/wall.py). Its PreToolUse hook runs outside the sandbox, as the person. So
when the gate holds a line that runs outside the wall on a platform whose wall does not let it
(`core/wall.py` UNWALLED_COMMANDS: the same lines Claude Code's sandbox runs unsandboxed), and the
person approved exactly that line, the recorder spends the approval and runs the line here: in the
call's working directory (the one the approval names), with the hook's environment as it hands it
to what vacant starts (`trustenv.for_child`: no VACANT_*, PYTHON* or loader variables), a PATH
without entries the agent can write, no terminal (`GIT_TERMINAL_PROMPT=0`), at most RUN_TIMEOUT_S
(its process group is killed then), its output kept to OUTPUT_CAP characters and redacted. The call
is answered with a deny whose reason says it ran, with its exit status and output, so the platform
does not run it a second time; the record holds the step (its start, its end with `ran_by:
vacant`, the approval's `ask`, the exit code, the output as a `command` read).

Why this does not let the agent act as the person:

- Only what the person approved, once: the approval is found by the gate's fingerprint (the
  line's normal form, its working directory, the arms it runs), the line must be byte for byte the
  one the card showed (`redact(line) == receipts.command`), and the approval is spent under the
  book's lock before the run starts (the spent ledger is signed). A line the gate did not hold
  (READ), or refused (a key read, an answer to the book, a line too long to read) never gets
  here: a refusal comes before any card.
- Only a plain push (`plain_refusal`): every command of the line is `git push` (no git option
  before `push`, none that names a program: `--receive-pack`, `--exec`, `--recurse-submodules`, no
  expansion in git's words) or `echo`, `printf`, `true`, `false`, `:`; the only operators are `;`,
  `&&`, `||`; redirects only to `/dev/null` or another descriptor; no substitution, no here-doc, no
  subshell, no background job. So nothing the agent wrote is named to run: no script, no `cd`
  into a repository it made.
- Git reads nothing the agent wrote as code: the platform says its wall keeps the workspace's
  `.git/hooks` and `.git/config` read-only for the agent's commands and that `.git` is a real
  directory with no `commondir` (which would move config and hooks elsewhere): Codex's
  `hook_may_run_approved`. The call's working directory is inside the workspace with no git
  repository of its own on the way up, and the run is pinned to the workspace's repository
  (GIT_DIR, GIT_COMMON_DIR, GIT_WORK_TREE; git's config-injecting variables dropped), so a
  `commondir` the agent writes into `.git` between the checks and the run (a parallel call) is
  not read. A push to a repository on disk runs that repository's receive hooks and reads its
  config; so no remote the push may reach (the named destination, every configured remote's url
  and pushurl) may be a path the agent can write (the workspace, `/tmp`, `/var/tmp`, `/dev/shm`,
  the temporary directory), as written or as its links resolve, and a named destination through a
  remote helper (`ext::…`) is refused.

What cannot pass these is not run: the call is denied, saying why, and the approval is kept
unspent (the person may run the line themselves). Fail closed: any error before the spend denies
and keeps the approval; once spent, a run that fails to start or times out is told as such
(`not run` / `killed`) and the approval stays spent (it may have done part of its work; a new
approval is a new card). Time: RUN_TIMEOUT_S is below the daemon's share of a tool call
(vacant/hook/client.py TOOL_TIMEOUT_S) and the in-process hook's deadline, both below the 60 s
Codex gives a hook, after which Codex would run the tool itself.

Stdlib only; loaded only for an approved line on such a platform (never on the common hot path).
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections import namedtuple
from pathlib import Path

from vacant.core.redact import redact_text
from vacant.core.trustenv import for_child
from vacant.core.wall import inside
from vacant.policy.gate.shellwords import REDIRECTS, LexError, Word, lex

RUN_TIMEOUT_S = 15.0  # below the daemon's 20 s share of a tool call (hook/client.py TOOL_TIMEOUT_S)
OUTPUT_CAP = 4000
HARMLESS = frozenset({"echo", "printf", "true", "false", ":"})
PROGRAM_OPTIONS = ("--receive-pack", "--exec", "--recurse-submodules")
VALUE_OPTIONS = frozenset({"-o", "--push-option", "--repo"})
SEPARATORS = frozenset({";", "&&", "||"})
AGENT_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")  # writable inside Codex's `:workspace` (measured: /tmp)

Ran = namedtuple("Ran", "exit_code output seconds error")  # error: why it did not start or finish, else None


def plain_refusal(command: str) -> tuple[str | None, list[str]]:
    """(why the line is not a plain push, or None; the push destinations it names). Pure."""
    try:
        tokens = lex(command)
    except LexError as error:
        return f"vacant cannot read the line ({error})", []
    commands: list[list[Word]] = [[]]
    redirect = False
    for kind, value in tokens:
        if kind == "h":
            return "it holds a here-document", []
        if kind == "o":
            op = str(value).lstrip("0123456789")
            if op in REDIRECTS:
                if op in ("<<", "<<-", "<<<"):
                    return "it holds a here-document", []
                redirect = op
                continue
            if op not in SEPARATORS:
                return f"it holds `{value}` (only `;`, `&&` and `||` join a line vacant runs outside the wall)", []
            commands.append([])
            continue
        assert isinstance(value, Word)
        if value.subs:
            return "it holds a substitution (`$(…)`, backticks, `<(…)`)", []
        if redirect:
            if not (value.norm == "/dev/null" or (redirect in (">&", "<&") and value.norm.isdigit())):
                return f"it redirects to {value.text!r} (only /dev/null or another descriptor)", []
            redirect = False
            continue
        commands[-1].append(value)
    destinations: list[str] = []
    for argv in filter(None, commands):
        name = argv[0].norm
        if name in HARMLESS and not argv[0].expands:
            continue
        if name != "git" or len(argv) < 2 or argv[1].norm != "push":
            return f"it runs `{argv[0].text}` (only `git push`, echo, printf, true, false and `:`)", []
        why = _git_refusal(argv[2:], destinations)
        if why:
            return why, []
    return None, destinations


def _git_refusal(words: list[Word], destinations: list[str]) -> str | None:
    if any(word.expands for word in words):
        return "a word of its `git push` expands (`$…`): vacant cannot tell where it pushes"
    args, value_of, options_done = [], None, False
    for word in (w.norm for w in words):
        if value_of is not None:
            if value_of == "--repo":
                destinations.append(word)
            value_of = None
        elif not options_done and word == "--":
            options_done = True
        elif not options_done and word.startswith("-"):
            if word.startswith(PROGRAM_OPTIONS):
                return f"its `git push` names a program to run ({word})"
            if word.startswith("--repo="):
                destinations.append(word.split("=", 1)[1])
            elif word in VALUE_OPTIONS:
                value_of = word
        else:
            args.append(word)
    destinations.extend(args[:1])
    return None


def writable_roots(root: Path, env: dict[str, str]) -> list[str]:
    """The directories the agent's commands can write (the platform's sandbox lets them)."""
    roots = [os.path.realpath(root), *AGENT_WRITABLE, tempfile.gettempdir()]
    if env.get("TMPDIR"):
        roots.append(env["TMPDIR"])
    return [os.path.realpath(path) for path in roots]


def local_path(url: str, cwd: str) -> str | None:
    """The path a git url names on this machine (as written, `..` taken out), or None for a remote
    one (ssh, https, …)."""
    if url.startswith("file://"):
        return os.path.normpath(url[len("file://"):])
    if "://" in url:
        return None
    colon, slash = url.find(":"), url.find("/")
    if colon > 0 and (slash < 0 or colon < slash):
        return None  # scp-like `host:path`
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(url)))


def remote_urls(root: Path, env: dict[str, str]) -> dict[str, list[str]]:
    """Every configured remote's url and pushurl, by remote name (the person's config: `.git/config`
    is read-only to the agent's commands where the hook runs a line)."""
    found = subprocess.run(["git", "config", "--null", "--get-regexp", r"^remote\..*\.(push)?url$"], cwd=root,
                           env=env, capture_output=True, timeout=5, stdin=subprocess.DEVNULL)
    urls: dict[str, list[str]] = {}
    for item in found.stdout.decode("utf-8", "surrogateescape").split("\0"):
        name, _, url = item.partition("\n")
        if name.startswith("remote.") and url:
            urls.setdefault(name[len("remote."):].rpartition(".")[0], []).append(url)
    return urls


def destination_refusal(root: Path, cwd: str, destinations: list[str], env: dict[str, str]) -> str | None:
    """Why a destination of the push is a repository on disk the agent can write, or None."""
    remotes = remote_urls(root, env)
    urls = [url for each in remotes.values() for url in each]
    urls += [name for name in destinations if name not in remotes]
    helper = next((name for name in destinations if "::" in name), None)
    if helper is not None:
        return f"it pushes through a remote helper ({helper}): a program, not a repository"
    writable = writable_roots(root, env)
    for url in urls:
        path = local_path(url, cwd)
        # as written and as resolved: a link the agent can write may be turned elsewhere meanwhile
        if path is not None and any(inside(form, top) for form in (path, os.path.realpath(path)) for top in writable):
            return (f"the push may reach {url}, a repository on disk the agent can write (git would run its "
                    "hooks and read its config as the person)")
    return None


def own_git_dir_refusal(root: Path) -> str | None:
    """Why the workspace's git directory may take its config and hooks from where the agent writes,
    or None: `.git` is a real directory with no `commondir`. For a platform whose own sandbox runs
    the approved line outside it (Claude Code's sandbox always keeps `.git/hooks` and `.git/config`
    unwritable to its commands: sandbox-runtime's mandatory deny paths), this is the part vacant
    checks; the sandbox, not vacant, runs the line, so it is not pinned to the repository."""
    git = Path(root).resolve() / ".git"
    if os.path.islink(git) or not git.is_dir():
        return f"{git} is not the workspace's own git directory (a link, a file or missing)"
    if os.path.lexists(git / "commondir"):
        return f"{git / 'commondir'} exists: git would take its config and hooks from elsewhere"
    return None


def git_dir_refusal(root: Path, cwd: str) -> str | None:
    """Why git run in `cwd` might not be the workspace's own repository, or None: the directory is
    inside the workspace and no directory between it and the workspace holds a `.git` of its own
    (one the agent made). The run then pins git to the workspace's (`environment`)."""
    top, here = os.path.realpath(root), os.path.realpath(cwd)
    if not inside(here, top):
        return f"its working directory {cwd} is outside the workspace"
    while here != top:
        if os.path.lexists(os.path.join(here, ".git")):
            return f"{here} holds a git repository of its own"
        here = os.path.dirname(here)
    return None


def environment(root: Path, base: dict[str, str]) -> dict[str, str]:
    """The run's environment: the hook's, as vacant hands it on; PATH without the agent's directories."""
    env = for_child(base)
    writable = writable_roots(root, env)
    env["PATH"] = os.pathsep.join(entry for entry in env.get("PATH", os.defpath).split(os.pathsep)
                                  if os.path.isabs(entry) and not any(inside(os.path.realpath(entry), top)
                                                                     for top in writable))
    env["GIT_TERMINAL_PROMPT"] = "0"  # nobody is at a terminal: a prompt would hang until the timeout
    # the workspace's repository and nothing else: a `.git/commondir` the agent writes after the
    # checks (it may write `.git`) is not read when GIT_COMMON_DIR is set
    git = os.path.realpath(os.path.join(root, ".git"))
    env.update(GIT_DIR=git, GIT_COMMON_DIR=git, GIT_WORK_TREE=os.path.realpath(root))
    for name in ("GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXEC_PATH", "GIT_INDEX_FILE",
                 "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE"):
        env.pop(name, None)
    return env


def refusal(root: Path, command: str, cwd: str, approved: str | None, platform_says: str | None,
            env: dict[str, str]) -> str | None:
    """Why vacant must not run this approved line outside the wall, or None. `approved`: the line
    as the card showed it; `platform_says`: the platform's `hook_runs_approved(root)`."""
    from vacant.core.redact import redact

    if approved is None or redact(command) != approved:
        return "the line is not byte for byte the one the person approved"
    if platform_says:
        return platform_says
    plain, destinations = plain_refusal(command)
    if plain:
        return f"vacant runs only a plain `git push` outside the wall, and {plain}"
    if not os.path.isdir(cwd):
        return f"its working directory {cwd} is gone"
    return git_dir_refusal(root, cwd) or destination_refusal(root, cwd, destinations, env)


def run(command: str, cwd: str, env: dict[str, str], timeout: float = RUN_TIMEOUT_S) -> Ran:
    """Run the line once (bash, else sh), its output bounded; never raises on the line's own failure."""
    shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
    started = time.monotonic()
    with tempfile.TemporaryFile() as out:
        try:
            process = subprocess.Popen([shell, "-c", command], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                       stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as error:
            return Ran(None, "", time.monotonic() - started, f"it could not start ({type(error).__name__}: {error})")
        error = None
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            code, error = None, f"killed after {timeout:.0f} s (it may have done part of its work)"
        finally:
            _kill(process)  # the whole group, finished or not: nothing it started outlives the call
        out.seek(0, os.SEEK_END)
        size = out.tell()
        out.seek(max(0, size - OUTPUT_CAP))
        output = out.read().decode("utf-8", "replace")
        if size > OUTPUT_CAP:
            output = f"[… {size - OUTPUT_CAP} bytes left out]" + output
    return Ran(code, redact_text(output), time.monotonic() - started, error)


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:  # the group is gone
        pass
    if process.poll() is None:
        process.wait()


def told(ask: str, ran: Ran) -> str:
    """The deny's reason: what the agent learns of the run."""
    if ran.exit_code is None:
        head = (f"The person approved this ({ask}) and vacant's hook took it to run outside the platform's "
                f"sandbox, but {ran.error}. The approval is spent: do not run it again without a new one.")
    else:
        head = (f"Ran once, as the person approved ({ask}): vacant ran this exact line itself, outside the "
                f"platform's sandbox (which would have broken it). Exit status {ran.exit_code} after "
                f"{ran.seconds:.1f} s. Do not run it again: that needs a new approval.")
    return f"{head}\nOutput:\n{ran.output}" if ran.output else f"{head} No output."
