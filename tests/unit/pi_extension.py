"""pi's side of a tool call, for unit tests: vacant's extension (vacant/platforms/assets/pi-extension.ts,
rendered as `vacant init` writes it; plain JavaScript, so node loads it as an ES module where pi
loads it with jiti) given a stand-in for pi's ExtensionAPI, its `tool_call` handler called as pi
calls it. What the handler returns is what pi obeys (vacant/platforms/pi/platform.py): `{block:
true, reason}` keeps the tool from running and the model reads the reason."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from vacant.platforms.pi import platform as pi

NODE = shutil.which("node")
DRIVER = """
import { pathToFileURL } from "node:url";
const [extension, cwd, call] = process.argv.slice(2);
const handlers = {};
const api = { on: (name, handler) => { handlers[name] = handler; }, sendUserMessage: () => {} };
(await import(pathToFileURL(extension).href)).default(api);
const ctx = { cwd, model: { provider: "fake", id: "m" },
              sessionManager: { getSessionId: () => "s1", getSessionFile: () => null } };
const { toolName, input } = JSON.parse(call);
const result = await handlers["tool_call"]({ type: "tool_call", toolName, toolCallId: "call_test", input }, ctx);
console.log(JSON.stringify(result && result.block ? { ran: false, message: result.reason } : { ran: true }));
"""
PUSH = {"toolName": "bash", "input": {"command": "git push origin main"}}


def before(hook_command: str, directory: Path, scratch: Path, call: dict | None = None, timeout: float = 90) -> dict:
    """What the extension did with one `tool_call` in `directory` whose hook command is
    `hook_command`: {"ran": True} (the tool runs), or {"ran": False, "message": the reason}."""
    assert NODE, "node is needed to run pi's extension (scripts/setup --agents installs the agents with it)"
    scratch.mkdir(parents=True, exist_ok=True)
    extension, driver = scratch / "vacant.mjs", scratch / "driver.mjs"
    extension.write_text(pi.render_extension(hook_command))
    driver.write_text(DRIVER)
    done = subprocess.run([NODE, str(driver), str(extension), str(directory), json.dumps(call or PUSH)],
                          capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
