"""OpenCode's side of a tool call, for unit tests: vacant's plugin (vacant/platforms/assets/opencode-plugin.js,
rendered as `vacant init` writes it) loaded by node, one of its handlers (`tool.execute.before`
unless told) called as OpenCode calls it. Whether `tool.execute.before` throws is whether the tool
runs (vacant/platforms/opencode.py: throwing blocks the tool, and its message is what the model gets)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from vacant.platforms import opencode

NODE = shutil.which("node")
DRIVER = """
import { pathToFileURL } from "node:url";
const [plugin, directory, call, hook] = process.argv.slice(2);
const { VacantRecorder } = await import(pathToFileURL(plugin).href);
const hooks = await VacantRecorder({ directory });
const { tool, args } = JSON.parse(call);
const input = { tool, sessionID: "ses_test", callID: "call_test", args };
const outputs = {
  "tool.execute.before": { args },
  "tool.execute.after": { title: "t", output: "done", metadata: { exit: 0 } },
  "chat.message": { message: { sessionID: "ses_test" }, parts: [{ type: "text", text: "go" }] },
};
try {
  await hooks[hook](input, outputs[hook]);
  console.log(JSON.stringify({ ran: true }));
} catch (error) {
  console.log(JSON.stringify({ ran: false, message: String(error && error.message) }));
}
"""
PUSH = {"tool": "bash", "args": {"command": "git push origin main", "description": "push the work"}}


def before(hook_command: str, directory: Path, scratch: Path, call: dict | None = None,
           timeout: float = 90, hook: str = "tool.execute.before") -> dict:
    """What the plugin did with one `hook` call in `directory` whose hook command is `hook_command`:
    {"ran": True} (it returned: the tool runs), or {"ran": False, "message": the error it threw}."""
    assert NODE, "node is needed to run OpenCode's plugin (scripts/setup --agents installs the agents with it)"
    scratch.mkdir(parents=True, exist_ok=True)
    plugin, driver = scratch / "vacant.mjs", scratch / "driver.mjs"  # .mjs: an ES module, as OpenCode loads it
    plugin.write_text(opencode.render_plugin(hook_command))
    driver.write_text(DRIVER)
    done = subprocess.run([NODE, str(driver), str(plugin), str(directory), json.dumps(call or PUSH), hook],
                          capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def payload(directory: Path, scratch: Path, call: dict | None = None) -> bytes:
    """The payload the plugin hands the hook for one `tool.execute.before` in `directory`."""
    import shlex

    captured = scratch / "payload.json"
    assert before(f"cat > {shlex.quote(str(captured))}", directory, scratch, call)["ran"]
    return captured.read_bytes()
