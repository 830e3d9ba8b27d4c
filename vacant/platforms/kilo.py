"""Kilo Code (`@kilocode/cli` 7.7.7, binary `kilo`): a fork of OpenCode, recorded by the same plugin.

7.7.7 is pinned: the newest release (7.8.1) has no Linux binary package on the npm registry as
measured (its `@kilocode/cli-linux-x64` stops at 7.7.9, which has no `@kilocode/cli` of its own).

Facts this module relies on (measured on the real CLI against the scripted fake upstream:
tests/e2e/test_kilo.py; the payloads in fixtures/payloads/kilo/):
- Kilo keeps OpenCode's plugin API: vacant's OpenCode plugin (vacant/platforms/assets/opencode-plugin.js)
  runs unchanged, with the same hooks (`tool.execute.before` / `after`, `chat.message`, the
  `session.idle` event) and the same payload shapes (bash `metadata.exit`, read/write/edit
  `filePath`). Its default agent is `code` (OpenCode's is `build`).
- What the fork renames: the binary (`kilo`), the config directories (`<project>/.kilo/plugins`,
  `(xdg config)/kilo/`, config file `kilo.json`), the environment prefix (`KILO_`: e.g.
  `KILO_CONFIG_CONTENT`, `KILO_DISABLE_PROJECT_CONFIG`). These are the facts below; everything else
  is OpenCode's (vacant/platforms/opencode.py).
- Stop feedback in the same run: yes, unlike OpenCode. At `session.idle` the plugin's own SDK
  client (`client.session.prompt`) puts the Stop's reason to the session as the next user message,
  the model answers it and `kilo run` exits only after the next idle (measured: the fake upstream
  got the feedback as the next request of the same run, and a second idle followed). So the
  plugin's idle hook answers `{action: "block", reason}` and the contract's rounds apply
  (`stop_rounds = None`); `vacant do` also continues a session (`kilo run --session <id> FEEDBACK`).
- Kilo sets OPENCODE=1 (and KILO=1, AGENT=1) in its process at start (read in the binary's bundle,
  not measured in a tool's shell), so the gate's "inside an agent" check sees its commands.
- Kilo writes refs of its own snapshots into the project's git (`refs/kilo/...`) and its state
  under $XDG_DATA_HOME/kilo; a run offline fails its model-list fetch fast (no DNS wait measured).
  `kilo run` is slow to start (a 170 MB binary that loads its bundle twice, in the main thread and
  its server worker: about 10 s of CPU on an idle core); KILO_NO_DAEMON, KILO_DISABLE_AUTOUPDATE,
  KILO_DISABLE_MODELS_FETCH and KILO_TELEMETRY_LEVEL=off keep it off the network (the e2e sets them).

Module level imports the standard library only (hot path).
"""

from __future__ import annotations

from vacant.platforms.opencode import OpenCode, OpenCodeDriver


class Kilo(OpenCode):
    name = "kilo"
    cell_platform = "kilo"
    aliases = ("kilocode",)
    program = "kilo"
    config_name = "kilo"
    env_prefix = "KILO"  # the rest (hook_env, the settings paths, ...) is derived by OpenCode
    # Feedback at `session.idle` reaches the model in the same run (the plugin prompts the session
    # with the Stop's reason): the contract's rounds, as a Stop hook's.
    stop_rounds = None


class KiloDriver(OpenCodeDriver):
    platform = "kilo"


Kilo.driver = KiloDriver
PLATFORM = Kilo()
KiloDriver.facts = PLATFORM
