"""`vacant do`: run an agent for several rounds, recorded, with vacant's hooks there for the
duration only.

One round = one run of the agent's process. When it exits, the Stop pipeline runs on the run (the
platform's own Stop hook only records the `stop` while `vacant do` owns the rounds: $VACANT_DO is
set for the agent and so for its hooks). While blocking findings remain and rounds are left, the
same session is continued with the feedback as the next prompt:

    claude -p --resume <id> FEEDBACK       codex exec resume <id> FEEDBACK       opencode run --session <id> FEEDBACK

`--rounds N` counts those continuations (the same meaning as the contract's `[stop] rounds`, which
is the default), so the agent runs at most N + 1 times. Each round ends with a `round` event in
the step log; the exit code says whether the deliverable ended green.

How the hooks get there without touching a settings file (a test compares each byte for byte
after a normal exit, an error, SIGINT and SIGTERM):
- Claude Code: `--settings <inline JSON>` with the hooks block (merged into the person's own
  `--settings`, when they gave one).
- Codex: `-c hooks.<Event>=[…]` session flags. Codex runs untrusted hooks in `exec` silently never,
  and trust can only be persisted in the person's config.toml (`-c hooks.state…` is ignored), so
  the session-flag hooks run with `--dangerously-bypass-hook-trust` — and only after Codex's own
  `hooks/list` showed that no other enabled hook is untrusted (the flag would run those too).
  When `vacant init --platform codex` already installed vacant's hooks, nothing is added.
- OpenCode: the plugin in a temporary file, given as a `file://` entry of the `plugin` list of
  $OPENCODE_CONFIG_CONTENT (merged into the person's own, when they set one); $PWD is set.
- Any other command: no hooks at all. A watchdog observer turns each burst of file changes into
  one step of the actor `command/<program>` (vacant/platforms/command.py, vacant/do/watch.py); it asks the kernel for
  no open/read/close-nowrite events (a read-only pass would flood the queue) and falls back to a
  full scan after a queue overflow.
"""
