"""`vacant do` with Codex: vacant's hooks as `-c hooks.<Event>=[…]` session flags, run with
`--dangerously-bypass-hook-trust` only after Codex's own `hooks/list` showed that no other enabled
hook is untrusted (the flag would run those too); nothing added when `vacant init` installed them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from vacant.platforms.codex import trust
from vacant.platforms.codex.appserver import AppServer, AppServerError
from vacant.platforms.codex.schema import hooks_block, hooks_path
from vacant.platforms.driver import DoError, Driver, parse_args, without
from vacant.platforms.settings_file import MARK, InstallError, hook_command


class CodexDriver(Driver):
    platform = "codex"
    can_continue = True
    VALUE = {"-c", "--config", "--enable", "--disable", "--remote", "--remote-auth-token-env", "-m", "--model",
             "--local-provider", "-p", "--profile", "-s", "--sandbox", "-a", "--ask-for-approval", "-C", "--cd",
             "--add-dir", "--thread-source", "--cyber-access-program", "--output-schema", "--color", "-o",
             "--output-last-message"}
    VARIADIC = {"-i", "--image"}
    RESUME_DROP = {"--last", "--all", "-i", "--image"}

    def split(self) -> tuple[list[str], str | None, list[str]]:
        """(tokens before the subcommand, the subcommand, the tokens after it)."""
        tokens = self.argv[1:]
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token in ("exec", "e"):
                return tokens[:i], "exec", tokens[i + 1:]
            if token.startswith("-"):
                i += 2 if token in self.VALUE else 1
                continue
            break
        return tokens, None, []

    def prepare(self) -> None:
        if self.wall is not None:
            self.argv = without_workspace_write(self.argv)
        top, sub, after = self.split()
        self.extra: list[str] = []
        if sub == "exec" and after[:1] == ["resume"]:
            parsed = parse_args(after[1:], self.VALUE, self.VARIADIC)
            if parsed.positionals and not parsed.has("--last"):
                self.session = parsed.positionals[0]
        self._wall_args(top, after)
        if installed_codex_hooks(self.root):
            return  # `vacant init --platform codex` put them there, trusted: adding more would double them
        import shutil  # `vacant do` only: shutil is not worth its import on the hook's hot path

        binary = shutil.which(self.argv[0], path=self.env.get("PATH")) or self.argv[0]
        untrusted = foreign_untrusted_codex_hooks(binary, self.root, self.env)
        if untrusted:
            raise DoError(
                f"{len(untrusted)} of your Codex hooks are not trusted ({untrusted[0]}…): vacant do would have to "
                "bypass hook trust for its own, which would run those too. Trust or remove them, or run "
                "`vacant init --platform codex` once (vacant's hooks then stay installed and trusted)"
            )
        command = hook_command("codex")
        for event, groups in hooks_block(command).items():
            handlers = ",".join(
                "{type=\"command\",command=%s,timeout=%d}" % (json.dumps(h["command"]), h["timeout"])
                for group in groups for h in group["hooks"]
            )
            self.extra += ["-c", f"hooks.{event}=[{{hooks=[{handlers}]}}]"]
        self.extra.append("--dangerously-bypass-hook-trust")

    OVERRIDE_WALL = ("-s", "--sandbox", "--dangerously-bypass-approvals-and-sandbox", "--yolo", "--full-auto")

    def _wall_args(self, top: list[str], after: list[str]) -> None:
        """The wall as `-c` overrides (the permission profile of codex/wall.py), unless `vacant
        init` wrote it into the project's config. A `--sandbox` of the person's would make Codex
        ignore any profile (measured on 0.171.0): `workspace-write` is dropped (the profile extends
        it), any other is refused rather than run unwalled."""
        if self.wall is None:
            return
        given = [word for word in (*top, *after) if word.split("=", 1)[0] in self.OVERRIDE_WALL]
        if given:
            raise DoError(f"{given[0]} makes Codex ignore vacant's wall (its permission profile): drop it, or run "
                          "`vacant do --no-wall -- …` (the record is then unwalled)")
        from vacant.platforms.codex import wall as codex_wall

        # Codex, with a permission profile, leaves an empty `.codex/` in the workspace (the mount
        # point of its own protection of that path; measured on 0.171.0): taken away again at close
        self.codex_dir = None if (Path(self.root) / ".codex").exists() else Path(self.root) / ".codex"
        if codex_wall.present(self.root):
            return
        entries = codex_wall.profile_entries(self.root, self.wall, config_written=False)  # on the command line
        table = ",".join(f"{json.dumps(path)}={json.dumps(access)}" for path, access in entries.items())
        profile = codex_wall.PROFILE
        self.extra += ["-c", f"default_permissions={json.dumps(profile)}",
                       "-c", f'permissions.{profile}.extends=":workspace"',
                       "-c", f"permissions.{profile}.filesystem={{{table}}}"]

    def close(self) -> None:
        directory = getattr(self, "codex_dir", None)
        if directory is not None:
            try:
                directory.rmdir()  # only while empty: anything in it is someone's
            except OSError:
                pass

    def first(self) -> list[str]:
        top, sub, after = self.split()
        if sub is None:
            return [self.argv[0], *top, *self.extra, *after]
        return [self.argv[0], *top, sub, *self.extra, *after]

    def resume(self, session: str, feedback: str) -> list[str]:
        top, sub, after = self.split()
        if sub is None:  # the interactive TUI: `codex resume <id> <prompt>`
            parsed = parse_args(top, self.VALUE, self.VARIADIC)
            return [self.argv[0], *without(parsed, self.RESUME_DROP), *self.extra, "resume", session, feedback]
        if after[:1] == ["resume"]:
            parsed = parse_args(after[1:], self.VALUE, self.VARIADIC)
            return [self.argv[0], *top, sub, *self.extra, "resume", *without(parsed, self.RESUME_DROP), session, feedback]
        parsed = parse_args(after, self.VALUE, self.VARIADIC)
        return [self.argv[0], *top, sub, *self.extra, *without(parsed, self.RESUME_DROP), "resume", session, feedback]


def without_workspace_write(argv: list[str]) -> list[str]:
    """`argv` without a `--sandbox workspace-write` (or `-s …`, `--sandbox=…`): the wall's profile
    extends `:workspace`, and the flag would make Codex ignore it."""
    out, i = [], 0
    while i < len(argv):
        word = argv[i]
        if word in ("-s", "--sandbox") and i + 1 < len(argv) and argv[i + 1] == "workspace-write":
            i += 2
            continue
        if word == "--sandbox=workspace-write":
            i += 1
            continue
        out.append(word)
        i += 1
    return out


def installed_codex_hooks(root: Path) -> bool:
    """vacant's hooks installed by `vacant init --platform codex` and trusted (offline check)."""
    try:
        _, config = trust._read_config(trust.config_path())
    except InstallError:
        return False
    for scope in ("project", "user"):
        hooks = trust.our_hooks(hooks_path(root, scope))
        if hooks and all(trust.trusted_hash(config, key) == value for key, value in hooks.items()):
            return True
    return False


def foreign_untrusted_codex_hooks(binary: str, root: Path, env: dict[str, str]) -> list[str]:
    """Enabled, non-managed hooks that are not vacant's and not trusted (Codex's own `hooks/list`)."""
    saved = {key: os.environ.get(key) for key in ("CODEX_HOME", "HOME")}
    try:
        for key in saved:  # the app-server reads the agent's CODEX_HOME
            if env.get(key):
                os.environ[key] = env[key]
        with AppServer(binary, root) as server:
            listed = server.hooks(root)
    except AppServerError as error:
        raise DoError(f"could not ask Codex which hooks are trusted ({error}); run `vacant init --platform codex` "
                      "once instead") from None
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return [str(h.get("key")) for h in listed
            if h.get("enabled", True) and not h.get("isManaged") and h.get("trustStatus") != "trusted"
            and MARK not in str(h.get("command", ""))]
