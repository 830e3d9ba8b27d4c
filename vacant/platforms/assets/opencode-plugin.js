// vacant-plugin: hands OpenCode's tool calls to `vacant-hook opencode` (written by vacant; `vacant
// uninstall --platform opencode` removes it, `vacant do` uses a temporary copy). Do not edit: the
// hook command below is filled in at install time.
//
// OpenCode (1.18) loads every `plugins/*.js` of its config directories. This plugin forwards:
//   tool.execute.before  -> a step starts (throwing here keeps the tool from running)
//   tool.execute.after   -> the step ends (bash: the exit code is in metadata.exit)
//   chat.message         -> the user's prompt, and which agent and model answer it
//   event session.created (a sub-agent's session names its parent), session.idle (the agent stopped)
// Each call runs the hook with the payload on stdin and waits for its answer (a JSON line or
// nothing). Recording fails open: a hook that cannot run, times out or answers garbage changes
// nothing for OpenCode, except at `tool.execute.before`, where the gate fails closed: a tool call
// whose hook gave no answer (it could not be spawned, exited non-zero or was killed with nothing
// said, or said what is not JSON) does not run, and the model is told why (CANNOT_START, vacant's
// own words for a hook that cannot start: vacant/platforms/deny.py).
import { spawn, spawnSync } from "node:child_process";

const HOOK_COMMAND = "__VACANT_HOOK_COMMAND__";
const CANNOT_START = "__VACANT_CANNOT_START__";
const TOOL_TIMEOUT_MS = 60000;
const STOP_TIMEOUT_MS = 600000;
const MAX_OUTPUT = 1 << 20;

// {answer: the hook's JSON or null (it said nothing: allowed), failed: why it gave no answer, or null}
function hand(payload, timeoutMs) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn("/bin/sh", ["-c", HOOK_COMMAND], {
        cwd: payload.directory,
        env: process.env,
        stdio: ["pipe", "pipe", "ignore"],
      });
    } catch (error) {
      resolve({ answer: null, failed: String((error && error.code) || error) });
      return;
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stdout.on("data", (chunk) => {
      if (out.length < MAX_OUTPUT) out += chunk;
    });
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ answer: null, failed: String((error && error.code) || error) });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (out.trim()) {
        try {
          resolve({ answer: JSON.parse(out), failed: null });
        } catch (error) {
          resolve({ answer: null, failed: "an answer that is not JSON" });
        }
      } else if (signal) {
        resolve({ answer: null, failed: `killed by ${signal}` });
      } else {
        resolve({ answer: null, failed: code === 0 ? null : `exit code ${code}` });
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

// The Stop pipeline, synchronously: OpenCode does not await a plugin's event handler, and `opencode
// run` exits at idle while an asynchronous hook is still replaying (its report came 0.2 s after the
// exit, every time). A synchronous spawn holds OpenCode there until the report is written.
function handNow(payload, timeoutMs) {
  try {
    const done = spawnSync("/bin/sh", ["-c", HOOK_COMMAND], {
      cwd: payload.directory,
      env: process.env,
      input: JSON.stringify(payload),
      stdio: ["pipe", "pipe", "ignore"],
      timeout: timeoutMs,
      killSignal: "SIGKILL",
      maxBuffer: MAX_OUTPUT,
    });
    const out = done.stdout ? done.stdout.toString().trim() : "";
    return out ? JSON.parse(out) : null;
  } catch (error) {
    return null;
  }
}

export const VacantRecorder = async ({ directory, client }) => {
  const parents = new Map(); // sub-agent session -> its parent session
  const agents = new Map(); // session -> agent name (from chat.message)
  const models = new Map(); // session -> "provider/model"

  const rootOf = (session) => {
    let current = session;
    for (let hops = 0; parents.has(current) && hops < 16; hops++) current = parents.get(current);
    return current;
  };
  const base = (event, session) => ({
    event,
    directory,
    sessionID: rootOf(session),
    agentID: parents.has(session) ? session : null,
    agent: agents.get(session) ?? null,
    model: models.get(session) ?? null,
  });

  return {
    "tool.execute.before": async (input, output) => {
      const { answer, failed } = await hand(
        { ...base("tool.execute.before", input.sessionID), tool: input.tool, callID: input.callID, args: output.args },
        TOOL_TIMEOUT_MS,
      );
      if (failed) throw new Error(CANNOT_START.replace("{error}", failed));
      if (answer && answer.action === "deny") throw new Error(answer.reason || "denied by vacant");
    },
    "tool.execute.after": async (input, output) => {
      const { answer } = await hand(
        {
          ...base("tool.execute.after", input.sessionID),
          tool: input.tool,
          callID: input.callID,
          args: input.args,
          title: output.title,
          output: output.output,
          metadata: output.metadata,
        },
        TOOL_TIMEOUT_MS,
      );
      if (answer && answer.note && typeof output.output === "string") output.output += "\n\n" + answer.note;
    },
    "chat.message": async (input, output) => {
      const message = output.message || {};
      const session = input.sessionID || message.sessionID;
      if (message.agent) agents.set(session, message.agent);
      if (message.model && message.model.modelID) models.set(session, `${message.model.providerID}/${message.model.modelID}`);
      const text = (output.parts || []).filter((part) => part.type === "text" && !part.synthetic).map((part) => part.text).join("\n");
      await hand({ ...base("chat.message", session), prompt: text }, TOOL_TIMEOUT_MS);
    },
    event: async ({ event }) => {
      const props = event.properties || {};
      if (event.type === "session.created" && props.info && props.info.parentID) {
        parents.set(props.info.id, props.info.parentID);
      } else if (event.type === "session.idle" && props.sessionID && !parents.has(props.sessionID)) {
        // No Stop hook in OpenCode: the pipeline reports here. Where the platform's prompt from here
        // reaches the model in the same run (Kilo, measured), the hook answers {action: "block",
        // reason} and the reason goes to the session as the next user message; on OpenCode it was
        // lost (`opencode run` exits first), so the hook answers nothing and `vacant do` runs the rounds.
        const answer = handNow(base("session.idle", props.sessionID), STOP_TIMEOUT_MS);
        if (answer && answer.action === "block" && answer.reason && client) {
          try {
            await client.session.prompt({
              path: { id: props.sessionID },
              body: { parts: [{ type: "text", text: answer.reason }] },
            });
          } catch (error) {
            // recording fails open: the feedback stays in the report
          }
        }
      }
    },
  };
};
