// vacant-extension: hands pi's tool calls to `vacant-hook pi` (written by vacant; `vacant uninstall
// --platform pi` removes it, `vacant do` loads a temporary copy with `-e`). Do not edit: the hook
// command below is filled in at install time.
//
// pi (0.73) has no command hooks: it loads every `extensions/*.ts` of `~/.pi/agent/` and of the
// project's `.pi/`, in-process. This extension forwards:
//   session_start     -> a run starts (reason: startup | new | resume | fork | reload)
//   input             -> the user's prompt
//   tool_call         -> a step starts; returning {block, reason} keeps the tool from running and
//                        the model reads the reason as the tool's error
//   tool_result       -> the step ends (bash's exit code is only in its text: "Command exited with code N")
//   agent_end         -> Stop. A block sends the reason as the next user message of the session
//                        (the same process, also `pi -p`: session_shutdown waits for that run)
//   session_shutdown  -> the run ends
// Each call runs the hook with the payload on stdin and waits for its answer (a JSON line or
// nothing). Recording fails open: a hook that cannot run, times out or answers garbage changes
// nothing for pi, except at tool_call, where the gate fails closed: a tool call whose hook gave no
// answer does not run, and the model is told why (CANNOT_START: vacant/platforms/deny.py).
import { spawn } from "node:child_process";

const HOOK_COMMAND = "__VACANT_HOOK_COMMAND__";
const CANNOT_START = "__VACANT_CANNOT_START__";
const TOOL_TIMEOUT_MS = 60000;
const STOP_TIMEOUT_MS = 600000;
const MAX_OUTPUT = 1 << 20;

function hand(payload, timeoutMs) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn("/bin/sh", ["-c", HOOK_COMMAND], {
        cwd: String(payload.cwd || process.cwd()),
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

function textOf(content) {
  if (!Array.isArray(content)) return typeof content === "string" ? content : "";
  return content.filter((part) => part && part.type === "text").map((part) => part.text).join("\n");
}

export default function (pi) {
  let stopActive = false; // the Stop before this one blocked: this one follows vacant's feedback

  const base = (event, ctx) => {
    let sessionId = null;
    let sessionFile = null;
    try {
      sessionId = ctx.sessionManager.getSessionId() ?? null;
      sessionFile = ctx.sessionManager.getSessionFile() ?? null;
    } catch (error) {}
    const model = ctx.model ? `${ctx.model.provider}/${ctx.model.id}` : null;
    return { event, cwd: ctx.cwd, sessionId, sessionFile, model };
  };

  pi.on("session_start", async (event, ctx) => {
    await hand({ ...base("session_start", ctx), reason: event.reason }, TOOL_TIMEOUT_MS);
  });

  pi.on("input", async (event, ctx) => {
    await hand({ ...base("input", ctx), prompt: event.text, source: event.source }, TOOL_TIMEOUT_MS);
  });

  pi.on("tool_call", async (event, ctx) => {
    const { answer, failed } = await hand(
      { ...base("tool_call", ctx), toolName: event.toolName, toolCallId: event.toolCallId, input: event.input },
      TOOL_TIMEOUT_MS,
    );
    if (failed) return { block: true, reason: CANNOT_START.replace("{error}", failed) };
    if (answer && answer.action === "deny") return { block: true, reason: answer.reason || "denied by vacant" };
    return undefined;
  });

  pi.on("tool_result", async (event, ctx) => {
    await hand(
      {
        ...base("tool_result", ctx),
        toolName: event.toolName,
        toolCallId: event.toolCallId,
        input: event.input,
        content: textOf(event.content),
        isError: Boolean(event.isError),
      },
      TOOL_TIMEOUT_MS,
    );
    return undefined;
  });

  // Stop, at agent_end (pi has no Stop event; the loop does not wait for this handler). A block
  // starts the next run of the same session with the reason as the user's message; `pi -p` would
  // exit meanwhile, so session_shutdown waits until the last Stop let the agent stop.
  let stopped = Promise.resolve(); // settles when the latest Stop let the agent stop
  let releasePrevious = null; // the Stop whose feedback this run answers
  pi.on("agent_end", async (event, ctx) => {
    let release = () => {};
    const mine = new Promise((resolve) => {
      release = resolve;
    });
    const previous = releasePrevious;
    releasePrevious = null;
    stopped = mine;
    if (previous) previous();
    const messages = Array.isArray(event.messages) ? event.messages : [];
    const last = [...messages].reverse().find((message) => message && message.role === "assistant") || {};
    if (last.stopReason === "error" || last.stopReason === "aborted") {
      stopActive = false;
      release();
      return;
    }
    const payload = { ...base("agent_end", ctx), finalText: textOf(last.content), stopActive };
    const timer = setTimeout(release, STOP_TIMEOUT_MS); // never hold pi's exit longer than a Stop may take
    const { answer } = await hand(payload, STOP_TIMEOUT_MS);
    stopActive = Boolean(answer && answer.action === "block" && answer.reason);
    if (!stopActive) {
      clearTimeout(timer);
      release();
      return;
    }
    releasePrevious = () => {
      clearTimeout(timer);
      release();
    };
    pi.sendUserMessage(answer.reason);
  });

  pi.on("session_shutdown", async (event, ctx) => {
    for (let current = stopped; ; current = stopped) {
      await current;
      if (current === stopped) break;
    }
    await hand({ ...base("session_shutdown", ctx), reason: event.reason }, TOOL_TIMEOUT_MS);
  });
}
