"""Smoke tests: the real Claude Code CLI against the scripted fake Anthropic upstream.

They prove the e2e harness itself (fixtures/upstreams/fake_anthropic.py and
tests/e2e/claude_harness.py).  They FAIL, never skip, when the pinned binary
is missing: ``npm ci --prefix fixtures/agents`` installs it.
"""

from __future__ import annotations

import json
import shlex
import urllib.error
import urllib.request

import pytest
from claude_harness import FakeUpstream, claude_binary, isolated_home, run_claude_p

pytestmark = pytest.mark.e2e


def _dirs(tmp_path):
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    isolated_home(home, ws)
    return ws, home


def _result(proc) -> dict:
    assert proc.returncode == 0, f"claude rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return json.loads(proc.stdout)


def _tool_results(request: dict) -> dict[str, dict]:
    """tool_result blocks of the request's last user message, by tool_use_id."""
    last = request["body"]["messages"][-1]
    assert last["role"] == "user"
    content = last["content"] if isinstance(last["content"], list) else []
    return {b["tool_use_id"]: b for b in content if b.get("type") == "tool_result"}


def _text(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return content or ""


def test_binary_is_installed():
    assert claude_binary().exists()


def test_write_tool_use_then_text(tmp_path):
    ws, home = _dirs(tmp_path)
    target = ws / "hello.txt"
    script = {"turns": [
        {"content": [
            {"type": "text", "text": "I will write the file."},
            {"type": "tool_use", "name": "Write",
             "input": {"file_path": str(target), "content": "hello from the fake model\n"}},
        ]},
        {"content": [{"type": "text", "text": "All done."}]},
    ]}
    with FakeUpstream(script, tmp_path / "up") as up:
        result = _result(run_claude_p(ws, home, up, "write hello.txt"))
        reqs = up.scripted_requests()

    assert target.read_text() == "hello from the fake model\n"
    assert result["result"] == "All done."
    assert result["permission_denials"] == []
    assert [r["turn"] for r in reqs] == [0, 1]
    assert reqs[0]["body"]["stream"] is True
    results = _tool_results(reqs[1])
    assert list(results) == ["toolu_fake0001"]
    assert not results["toolu_fake0001"].get("is_error")
    assert "hello.txt" in _text(results["toolu_fake0001"])
    # the scripted assistant message came back verbatim in the history
    assistant = reqs[1]["body"]["messages"][-2]
    assert assistant["role"] == "assistant"
    assert assistant["content"][1]["id"] == "toolu_fake0001"
    assert assistant["content"][1]["input"]["file_path"] == str(target)


def test_parallel_reads_and_bash_in_one_turn(tmp_path):
    ws, home = _dirs(tmp_path)
    (ws / "a.txt").write_text("ALPHA-CONTENT\n")
    (ws / "b.txt").write_text("BRAVO-CONTENT\n")
    script = {"turns": [
        {"content": [
            {"type": "text", "text": "Reading both and echoing."},
            {"type": "tool_use", "name": "Read", "input": {"file_path": str(ws / "a.txt")}},
            {"type": "tool_use", "name": "Read", "input": {"file_path": str(ws / "b.txt")}},
            {"type": "tool_use", "name": "Bash",
             "input": {"command": "echo bash-ok", "description": "echo a marker"}},
        ]},
        {"content": [{"type": "text", "text": "Read and ran everything."}]},
    ]}
    with FakeUpstream(script, tmp_path / "up") as up:
        result = _result(run_claude_p(ws, home, up, "read a.txt and b.txt, echo"))
        reqs = up.scripted_requests()

    assert result["result"] == "Read and ran everything."
    assert [r["turn"] for r in reqs] == [0, 1]
    results = _tool_results(reqs[1])
    assert set(results) == {"toolu_fake0001", "toolu_fake0002", "toolu_fake0003"}
    assert not any(b.get("is_error") for b in results.values()), results
    assert "ALPHA-CONTENT" in _text(results["toolu_fake0001"])
    assert "BRAVO-CONTENT" in _text(results["toolu_fake0002"])
    assert "bash-ok" in _text(results["toolu_fake0003"])


def test_project_pretooluse_hook_sees_scripted_id(tmp_path):
    ws, home = _dirs(tmp_path)
    hook_out = tmp_path / "pretool_payloads.jsonl"
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Write",
         "hooks": [{"type": "command", "command": f"cat >> {shlex.quote(str(hook_out))}"}]},
    ]}}))
    target = ws / "hooked.txt"
    script = {"turns": [
        {"content": [{"type": "tool_use", "id": "toolu_scripted_hook_01", "name": "Write",
                      "input": {"file_path": str(target), "content": "hooked\n"}}]},
        {"content": [{"type": "text", "text": "Hooked write done."}]},
    ]}
    with FakeUpstream(script, tmp_path / "up") as up:
        result = _result(run_claude_p(ws, home, up, "write hooked.txt"))
        reqs = up.scripted_requests()

    assert result["result"] == "Hooked write done."
    assert target.read_text() == "hooked\n"
    payloads = [json.loads(line) for line in hook_out.read_text().splitlines() if line.strip()]
    assert len(payloads) == 1, payloads
    p = payloads[0]
    assert p["hook_event_name"] == "PreToolUse"
    assert p["tool_name"] == "Write"
    assert p["tool_use_id"] == "toolu_scripted_hook_01"
    assert p["tool_input"] == {"file_path": str(target), "content": "hooked\n"}
    assert p["permission_mode"] == "acceptEdits"
    assert list(_tool_results(reqs[1])) == ["toolu_scripted_hook_01"]


def _post(url: str, body: dict) -> tuple[int, str, str]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers.get("content-type", ""), resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("content-type", ""), e.read().decode()


def _sse(text: str) -> list[tuple[str, dict]]:
    events = []
    for chunk in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_fake_upstream_protocol(tmp_path):
    """Routing, fallbacks and both response shapes, without the CLI."""
    tools = [{"name": "Write", "input_schema": {"type": "object"}}]
    script = {"turns": [
        {"match": "SUB-TOKEN-9", "content": [{"type": "text", "text": "sub reply"}]},
        {"content": [{"type": "tool_use", "name": "Write", "input": {"file_path": "/x", "content": "y" * 50}},
                     {"type": "tool_use", "name": "Bash", "input": {"command": "true"}}]},
        {"http_error": 400},
    ]}
    with FakeUpstream(script, tmp_path / "up") as up:
        url = up.url + "/v1/messages?beta=true"
        # no tools: fallback, consumes nothing
        status, ctype, body = _post(url, {"model": "m1", "messages": [{"role": "user", "content": "hi"}]})
        assert status == 200 and ctype.startswith("application/json")
        msg = json.loads(body)
        assert msg["content"] == [{"type": "text", "text": "done."}] and msg["stop_reason"] == "end_turn"
        # streamed: first turn whose match fits is skipped until its token shows up
        status, ctype, body = _post(url, {"model": "m2", "stream": True, "tools": tools,
                                          "messages": [{"role": "user", "content": "parent"}]})
        assert status == 200 and ctype.startswith("text/event-stream")
        events = _sse(body)
        names = [e for e, _ in events]
        assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
        assert events[0][1]["message"]["model"] == "m2"
        starts = [d["content_block"] for e, d in events if e == "content_block_start"]
        assert [(b["id"], b["name"], b["input"]) for b in starts] == [
            ("toolu_fake0001", "Write", {}), ("toolu_fake0002", "Bash", {})]
        partial = "".join(d["delta"]["partial_json"] for e, d in events
                          if e == "content_block_delta" and d["index"] == 0)
        assert json.loads(partial) == {"file_path": "/x", "content": "y" * 50}
        assert sum(1 for e, d in events if e == "content_block_delta" and d["index"] == 0) > 1
        assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
        # the matching request takes the skipped turn 0
        status, _, body = _post(url, {"model": "m3", "tools": tools,
                                      "messages": [{"role": "user", "content": "do SUB-TOKEN-9"}]})
        assert json.loads(body)["content"] == [{"type": "text", "text": "sub reply"}]
        # scripted HTTP error, then the script is exhausted -> fallback
        status, _, body = _post(url, {"model": "m4", "tools": tools, "messages": []})
        assert status == 400 and json.loads(body)["error"]["type"] == "invalid_request_error"
        status, _, body = _post(url, {"model": "m5", "tools": tools, "messages": []})
        assert json.loads(body)["content"][0]["text"] == "done."
        # other endpoints
        status, _, body = _post(up.url + "/v1/messages/count_tokens?beta=true", {"messages": []})
        assert (status, json.loads(body)) == (200, {"input_tokens": 10})
        assert _post(up.url + "/v1/other", {})[0] == 404
        with urllib.request.urlopen(urllib.request.Request(up.url + "/", method="HEAD"), timeout=10) as r:
            assert r.status == 200
        log = up.requests()
    assert [(r["n"], r["turn"]) for r in log] == [(1, None), (2, 1), (3, 0), (4, 2), (5, None)]
    assert log[2]["path"] == "/v1/messages?beta=true"
    assert log[2]["body"]["model"] == "m3"
    assert log[2]["headers"]["content-type"] == "application/json"
