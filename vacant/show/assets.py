"""The run view's inline stylesheet and script (no network, no CDN: everything is in the page).

The script reads the run from a `<script type="application/json">` block and builds the page with
DOM calls only (`textContent`, `append` of text nodes, `setAttribute` on non-URL attributes): no
run data ever reaches `innerHTML`, so a file name or an output holding markup stays text. Long runs
render their first and last steps and those around findings; the rest sit behind "show" buttons
rendered 200 at a time, and a step's details are built only when it is opened.
"""

CSS = r"""
:root { --bg:#f7f7f5; --card:#fff; --ink:#1d2127; --muted:#667085; --line:#e4e4e0; --accent:#2d5bd7;
  --add:#e6f4ea; --addink:#176c2e; --del:#fbe9e9; --delink:#a4262c; --hl:#fff3b0; }
* { box-sizing:border-box; }
body { margin:0; background:var(--bg); color:var(--ink); font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; }
header { background:#161b26; color:#e8ebf2; padding:18px 28px 14px; }
header h1 { margin:0 0 6px; font-size:19px; font-weight:600; letter-spacing:.2px; }
header .meta { display:flex; flex-wrap:wrap; gap:6px 18px; color:#aab3c5; font-size:13px; }
header .meta b { color:#e8ebf2; font-weight:600; }
main { max-width:1240px; margin:0 auto; padding:18px 24px 60px; }
section { background:var(--card); border:1px solid var(--line); border-radius:10px; margin:16px 0; padding:14px 18px; }
section > h2 { font-size:15px; margin:0 0 10px; display:flex; align-items:center; gap:8px; }
section > h2 .count { color:var(--muted); font-weight:400; }
code, pre, .mono { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; font-size:12.5px; }
.badge { display:inline-block; border-radius:999px; padding:1px 9px; font-size:12px; font-weight:600; color:#fff; background:#667085; white-space:nowrap; }
.lv-provable { background:#c62828; } .lv-lineage_exact { background:#d9730d; } .lv-lineage_internal { background:#b7791f; }
.lv-heuristic { background:#4a6fa5; } .lv-gap { background:#7b4bb7; } .lv-incomplete,.lv-env,.lv-not_replayed,.lv-flaky { background:#7d8594; }
.finding { border:1px solid var(--line); border-left:4px solid #c62828; border-radius:8px; padding:10px 14px; margin:10px 0; }
.finding.nb { border-left-color:#7d8594; }
.finding .top { display:flex; flex-wrap:wrap; align-items:center; gap:8px 12px; }
.finding .loc { font-weight:600; }
.finding .msg { margin:6px 0; }
.kv { display:grid; grid-template-columns:max-content 1fr; gap:2px 12px; color:var(--muted); font-size:13px; }
.kv span:nth-child(2n) { color:var(--ink); overflow-wrap:anywhere; }
button.link { background:none; border:0; color:var(--accent); cursor:pointer; padding:0; font:inherit; text-decoration:underline; }
button.small { border:1px solid var(--line); background:#fafafa; border-radius:6px; padding:1px 8px; cursor:pointer; font-size:12px; }
pre.diff { background:#fbfbfa; border:1px solid var(--line); border-radius:6px; padding:6px 0; overflow:auto; max-height:420px; margin:8px 0 2px; }
pre.diff div { padding:0 10px; white-space:pre; }
pre.diff .a { background:var(--add); color:var(--addink); } pre.diff .d { background:var(--del); color:var(--delink); }
pre.diff .h { color:#6b4fbb; } pre.diff .f { color:var(--muted); } pre.diff .hl { background:var(--hl); outline:1px solid #e0c200; }
.lanes { display:grid; grid-template-columns:190px 1fr; gap:6px 10px; align-items:center; }
.lane-label { font-size:13px; color:var(--muted); overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
.strip { position:relative; height:22px; background:#f0f0ec; border-radius:5px; }
.tick { position:absolute; top:3px; height:16px; min-width:3px; border-radius:2px; cursor:pointer; opacity:.9; }
.tick:hover { opacity:1; outline:2px solid #000; z-index:2; }
.tick.bad { outline:2px solid #c62828; z-index:1; height:20px; top:1px; }
.t-write { background:#2d5bd7; } .t-shell { background:#31363f; } .t-read { background:#2e9d62; } .t-agent { background:#8e55d6; }
.t-oob { background:#e07b18; } .t-other { background:#98a2b3; }
.legend { display:flex; flex-wrap:wrap; gap:12px; margin-top:8px; font-size:12px; color:var(--muted); }
.legend i { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:4px; vertical-align:-1px; }
.step { border-top:1px solid var(--line); }
.step .row { display:grid; grid-template-columns:58px 120px 90px 1fr 70px 64px 58px 64px; gap:8px; padding:5px 4px; cursor:pointer; align-items:center; }
.step .row:hover { background:#f3f5fa; }
.step.bad .row { background:#fdf0f0; }
.step .num { font-weight:600; color:var(--muted); } .step .sum { overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
.chip { font-size:11.5px; border-radius:4px; padding:0 6px; background:#eef1f6; color:#34405a; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
.chip.oob { background:#fdebd8; color:#8a4a0a; }
.step .detail { padding:6px 12px 12px 66px; }
.step .detail pre.input { background:#fbfbfa; border:1px solid var(--line); border-radius:6px; padding:6px 10px; max-height:220px; overflow:auto; white-space:pre-wrap; overflow-wrap:anywhere; }
.more { display:block; width:100%; margin:4px 0; padding:6px; border:1px dashed #c8ccd4; background:#fafbfc; border-radius:6px; color:var(--accent); cursor:pointer; }
table { border-collapse:collapse; width:100%; font-size:13px; }
th, td { text-align:left; padding:4px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { color:var(--muted); font-weight:600; }
.pass { color:#176c2e; font-weight:600; } .fail { color:#a4262c; font-weight:600; }
.muted { color:var(--muted); }
.empty { color:var(--muted); font-style:italic; }
"""

JS = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("vacant-data").textContent);
  var HEAD = 15, TAIL = 15, AROUND = 2, CHUNK = 200;

  function el(tag, attrs) {
    var node = document.createElement(tag);
    attrs = attrs || {};
    Object.keys(attrs).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined) return;
      if (key === "class") node.className = value;
      else if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, String(value));
    });
    for (var i = 2; i < arguments.length; i++) add(node, arguments[i]);
    return node;
  }
  function add(node, kid) {
    if (kid === null || kid === undefined || kid === false) return;
    if (Array.isArray(kid)) { kid.forEach(function (k) { add(node, k); }); return; }
    node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  function when(ts) { return ts ? new Date(ts * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "—"; }
  function secs(s) { return s === null || s === undefined ? "—" : (s < 1 ? Math.round(s * 1000) + " ms" : s.toFixed(s < 10 ? 2 : 0) + " s"); }
  function toolClass(tool) {
    if (/^(Write|Edit|MultiEdit|NotebookEdit|apply_patch|write|edit|patch)$/.test(tool)) return "t-write";
    if (/^(Bash|shell|exec_command|bash|local_shell)$/.test(tool)) return "t-shell";
    if (/^(Read|Grep|Glob|LS|read|grep|glob|list|WebFetch|WebSearch)$/.test(tool)) return "t-read";
    if (/^(Agent|Task|task)$/.test(tool)) return "t-agent";
    if (tool === "oob") return "t-oob";
    return "t-other";
  }
  var byNumber = {}, position = {};
  D.steps.forEach(function (s, i) { byNumber[s.n] = s; position[s.n] = i; });
  var laneLabel = {};
  D.lanes.forEach(function (l) { laneLabel[l.id] = l.label; });

  function diffBlock(lines, highlight) {
    var pre = el("pre", {"class": "diff"});
    (lines || []).forEach(function (line) {
      var c = line.slice(0, 3) === "+++" || line.slice(0, 3) === "---" ? "f" : line[0] === "+" ? "a" : line[0] === "-" ? "d" : line.slice(0, 2) === "@@" ? "h" : "";
      if (highlight && c === "a" && line.slice(1) === highlight) c += " hl";
      pre.append(el("div", {"class": c}, line));
    });
    return pre;
  }

  function header() {
    var levels = {};
    D.findings.forEach(function (f) { levels[f.level] = (levels[f.level] || 0) + 1; });
    var counts = Object.keys(levels).map(function (k) { return levels[k] + " " + k; }).join(", ");
    var h = el("header", {}, el("h1", {}, "vacant run ", el("span", {"class": "mono"}, D.run)),
      el("div", {"class": "meta"},
        el("span", {}, "platform ", el("b", {}, D.platform || "?")),
        el("span", {}, "started ", el("b", {}, when(D.started))),
        el("span", {}, el("b", {}, String(D.steps.length)), " steps in ", el("b", {}, String(D.lanes.length)), " lane(s)"),
        el("span", {}, el("b", {}, String(D.findings.length)), " finding(s)", counts ? " (" + counts + ")" : ""),
        D.stop ? el("span", {}, "Stop ", el("b", {}, String(D.stop)), ": ", el("b", {}, D.decision || "?")) : el("span", {}, "no Stop report yet"),
        el("span", {}, "workspace ", el("b", {"class": "mono"}, D.workspace || "?"))));
    document.body.append(h);
  }

  function findingCard(f) {
    var blocking = f.blocking !== false;
    var where = f.path ? f.path + (f.line ? ":" + f.line : "") : "(no location)";
    var kv = el("div", {"class": "kv"});
    function row(k, v) { if (v !== null && v !== undefined && v !== "") kv.append(el("span", {}, k), el("span", {}, v)); }
    var stepLink = f.step !== null && f.step !== undefined
      ? el("button", {"class": "link", "data-step": f.step, onclick: function () { reveal(f.step); }}, "step " + f.step + " (" + f.tool + ")")
      : "none";
    if (f.test) row("test", el("span", {"class": "mono"}, f.test));
    row("graded on", stepLink);
    if (f.changed && f.changed.length) row("the change touched", el("span", {"class": "mono"}, f.changed.join(", ")));
    if (f.flip_step !== null && f.flip_step !== undefined && f.flip_step !== f.step) row("appeared at", el("button", {"class": "link", onclick: function () { reveal(f.flip_step); }}, "step " + f.flip_step));
    var actor = f.actor ? [f.actor.platform, f.actor.agent_definition, f.actor.model || "?"].join(" / ") : "nobody";
    row("actor", actor);
    row("lineage source", f.lineage_source || "—");
    if (f.origin_source && f.origin_source !== f.lineage_source) row("origin", f.origin_source);
    var ev = f.evidence || {};
    if (ev.why) row("why", ev.why);
    if (f.written_by) row("written by", f.written_by + "; not sent to the agent");
    if (ev.rerun) row("rerun", el("span", {}, el("code", {}, ev.rerun), " ",
      el("button", {"class": "small", onclick: function () { if (navigator.clipboard) navigator.clipboard.writeText(ev.rerun); }}, "copy")));
    var diff = null;
    var h = f.hunk;  // the report's own `diff` is a string; the view's hunk carries its step and line
    if (h && h.diff) diff = [el("div", {"class": "muted"}, "diff of step " + h.step + " at " + h.path + (h.line ? ":" + h.line : "")), diffBlock(h.diff, h.text)];
    else if (f.diff) diff = [el("div", {"class": "muted"}, "what the change touched"), diffBlock(f.diff.split("\n"))];
    else if (h) diff = el("div", {"class": "muted"}, "no diff: " + h.why);
    return el("div", {"class": "finding" + (blocking ? "" : " nb"), id: "finding-" + f.id},
      el("div", {"class": "top"}, el("span", {"class": "badge lv-" + f.level, title: D.levels[f.level] || ""}, f.level),
        el("span", {"class": "loc mono"}, where), el("span", {"class": "muted mono"}, f.id),
        el("span", {"class": "muted"}, f.source + " " + f.name)),
      el("div", {"class": "msg"}, f.message), kv, diff);
  }

  // the Stops that blocked the agent before this one: a run that needed feedback rounds opens on them
  function earlier() { return D.stops.filter(function (r) { return r.stop < (D.stop || 0) && r.findings; }); }

  function rounds() {
    var before = earlier();
    if (!before.length) return null;
    var s = el("section", {id: "rounds"}, el("h2", {}, "Feedback rounds", el("span", {"class": "count"}, before.length + " Stop(s) blocked before this one")));
    before.forEach(function (r) {
      var box = el("div", {"class": "round"}, el("div", {"class": "top"}, el("b", {}, "Stop " + r.stop), " — " + (r.agent_id || "main") + ", round " + (r.round || 0) + " of " + (r.rounds || "?") + ": " + r.findings + " finding(s), " + (r.decision || "?")));
      (r.found || []).forEach(function (f) {
        var where = f.path ? f.path + (f.line ? ":" + f.line : "") : "(no location)";
        box.append(el("div", {"class": "finding" + (f.blocking ? "" : " nb")},
          el("div", {"class": "top"}, el("span", {"class": "badge lv-" + f.level, title: D.levels[f.level] || ""}, f.level),
            el("span", {"class": "loc mono"}, where), el("span", {"class": "muted mono"}, f.id),
            f.flip_step !== null && f.flip_step !== undefined ? el("span", {"class": "muted"}, "appeared at step " + f.flip_step) : null),
          el("div", {"class": "msg"}, f.message)));
      });
      s.append(box);
    });
    return s;
  }

  // what the workspace holds that this run did not make (another session, the person): for the person
  function elsewhereCard(w) {
    var box = el("div", {"class": "finding nb", id: "elsewhere"}, el("div", {"class": "top"}, el("span", {"class": "badge"}, "not this run's")),
      el("div", {"class": "msg"}, w.sentence));
    w.changes.forEach(function (c) { box.append(el("div", {"class": "mono"}, c.change + " " + c.path + ": " + c.by)); });
    w.checks.forEach(function (c) { box.append(el("div", {"class": "muted"}, c.kind + " " + c.name + ": " + (c.passed ? "pass" : "FAIL") + " on this run's work, " + (c.passed_live ? "pass" : "FAIL") + " on the workspace")); });
    return box;
  }

  function findings() {
    var s = el("section", {id: "findings"}, el("h2", {}, "Findings", el("span", {"class": "count"}, String(D.findings.length))));
    var fixed = earlier().length ? " The agent got there after " + earlier().length + " blocked Stop(s): see Feedback rounds above." : "";
    if (D.contract_error) s.append(el("div", {"class": "finding"}, el("div", {"class": "top"}, el("span", {"class": "badge"}, "contract error")),
      el("div", {"class": "msg"}, D.contract_error.message), el("div", {"class": "muted"}, "vacant.toml could not be read at this Stop: nothing was verified.")));
    else if (!D.findings.length) s.append(el("div", {"class": "empty"}, D.stop ? "No findings at this Stop." + fixed : "No Stop report yet: `vacant replay` makes one."));
    if (D.elsewhere) s.append(elsewhereCard(D.elsewhere));
    D.findings.forEach(function (f) { s.append(findingCard(f)); });
    return s;
  }

  function timeline() {
    var s = el("section", {id: "timeline"}, el("h2", {}, "Timeline by actor", el("span", {"class": "count"}, "in step order")));
    var grid = el("div", {"class": "lanes"});
    var total = Math.max(D.steps.length, 1), width = Math.max(100 / total, 0.12);
    D.lanes.forEach(function (lane) {
      var strip = el("div", {"class": "strip", "data-lane": lane.id});
      D.steps.forEach(function (st, i) {
        if (st.lane !== lane.id) return;
        var tip = "#" + st.n + " " + st.tool + " " + st.summary + " (" + secs(st.duration) + ", " + st.changes.length + " changed, " + st.reads.length + " read)";
        strip.append(el("div", {"class": "tick " + toolClass(st.tool) + (st.findings.length ? " bad" : ""), title: tip,
          style: "left:" + (i * 100 / total) + "%;width:" + width + "%", "data-step": st.n,
          onclick: function () { reveal(st.n); }}));
      });
      grid.append(el("div", {"class": "lane-label", title: lane.label}, lane.label), strip);
    });
    s.append(grid);
    var legend = el("div", {"class": "legend"});
    [["t-write", "write/edit"], ["t-shell", "shell"], ["t-read", "read/search"], ["t-agent", "sub-agent call"], ["t-oob", "out-of-band"], ["t-other", "other"]].forEach(function (p) {
      legend.append(el("span", {}, el("i", {"class": p[0]}), p[1]));
    });
    legend.append(el("span", {}, "red outline: a finding's step"));
    s.append(legend);
    return s;
  }

  function stepDetail(st) {
    var d = el("div", {"class": "detail"});
    var kv = el("div", {"class": "kv"});
    function row(k, v) { kv.append(el("span", {}, k), el("span", {}, v)); }
    row("actor", st.actor); row("lane", laneLabel[st.lane] || st.lane);
    row("outcome", (st.outcome || "?") + (st.exit_code !== null && st.exit_code !== undefined ? " (exit " + st.exit_code + ")" : ""));
    row("duration", secs(st.duration)); row("started", when(st.start));
    if (st.findings.length) row("findings", st.findings.join(", "));
    d.append(kv, el("div", {"class": "muted"}, "input"), el("pre", {"class": "input"}, st.input));
    if (st.detail) d.append(el("div", {"class": "muted"}, "detail"), el("pre", {"class": "input"}, st.detail));
    d.append(el("div", {"class": "muted"}, st.reads.length + " read(s)"));
    if (st.reads.length) d.append(el("ul", {}, st.reads.map(function (r) { return el("li", {"class": "mono"}, r.origin + " " + r.ref + (r.size !== null && r.size !== undefined ? " (" + r.size + " B)" : "")); })));
    d.append(el("div", {"class": "muted"}, st.changes.length + " change(s)"));
    st.changes.forEach(function (c) {
      d.append(el("div", {"class": "mono"}, c.kind + " " + c.path + (c.why ? "  (" + c.why + ")" : "")));
      if (c.diff) d.append(diffBlock(c.diff));
    });
    return d;
  }

  function toggle(node, st, open) {
    var detail = node.querySelector(".detail");
    if (!detail) { node.append(stepDetail(st)); return; }
    if (open) detail.hidden = false; else detail.hidden = !detail.hidden;
  }

  function stepRow(st) {
    var node = el("div", {"class": "step" + (st.findings.length ? " bad" : ""), id: "step-" + st.n, "data-step": st.n});
    var row = el("div", {"class": "row", onclick: function () { toggle(node, st, false); }},
      el("span", {"class": "num"}, "#" + st.n),
      el("span", {"class": "chip" + (st.lane === "oob" ? " oob" : ""), title: laneLabel[st.lane] || st.lane}, laneLabel[st.lane] || st.lane),
      el("span", {"class": "mono"}, st.tool), el("span", {"class": "sum mono", title: st.summary}, st.summary),
      el("span", {"class": "muted"}, secs(st.duration)), el("span", {"class": "muted"}, st.changes.length + " Δ"),
      el("span", {"class": "muted"}, st.reads.length + " rd"), el("span", {"class": st.outcome === "ok" ? "muted" : "fail"}, st.outcome || "?"));
    node.append(row);
    return node;
  }

  var list;
  function moreButton(from, to) {  // positions [from, to) hidden
    var b = el("button", {"class": "more", "data-from": from, "data-to": to}, "show steps " + D.steps[from].n + "–" + D.steps[to - 1].n + " (" + (to - from) + " hidden)");
    b.addEventListener("click", function () { expand(b, from); });
    return b;
  }
  function expand(button, at) {  // render the chunk of the hidden range holding position `at`
    var from = +button.getAttribute("data-from"), to = +button.getAttribute("data-to");
    var start = Math.max(from, Math.min(at, to - CHUNK)), end = Math.min(to, start + CHUNK);
    var frag = document.createDocumentFragment();
    if (start > from) frag.append(moreButton(from, start));
    for (var i = start; i < end; i++) frag.append(stepRow(D.steps[i]));
    if (end < to) frag.append(moreButton(end, to));
    button.replaceWith(frag);
  }
  function reveal(n) {
    var node = document.getElementById("step-" + n);
    if (!node) {
      var pos = position[n];
      var buttons = list.querySelectorAll("button.more");
      for (var i = 0; i < buttons.length; i++) {
        var b = buttons[i];
        if (+b.getAttribute("data-from") <= pos && pos < +b.getAttribute("data-to")) { expand(b, pos); break; }
      }
      node = document.getElementById("step-" + n);
    }
    if (!node) return;
    toggle(node, byNumber[n], true);
    node.scrollIntoView({block: "center"});
  }

  function steps() {
    var s = el("section", {id: "steps"}, el("h2", {}, "Steps", el("span", {"class": "count"}, D.steps.length + " (click a row to open it)")));
    list = el("div", {"class": "steplist"});
    var shown = {}, n = D.steps.length;
    for (var i = 0; i < Math.min(HEAD, n); i++) shown[i] = true;
    for (i = Math.max(0, n - TAIL); i < n; i++) shown[i] = true;
    D.steps.forEach(function (st, i) {
      if (st.findings.length) for (var k = Math.max(0, i - AROUND); k <= Math.min(n - 1, i + AROUND); k++) shown[k] = true;
    });
    var i2 = 0;
    while (i2 < n) {
      if (shown[i2]) { list.append(stepRow(D.steps[i2])); i2++; continue; }
      var j = i2;
      while (j < n && !shown[j]) j++;
      list.append(moreButton(i2, j));
      i2 = j;
    }
    if (!n) list.append(el("div", {"class": "empty"}, "No steps recorded."));
    s.append(list);
    return s;
  }

  function stops() {
    var s = el("section", {id: "checks"}, el("h2", {}, "Checks per Stop round", el("span", {"class": "count"}, String(D.stops.length))));
    if (!D.stops.length) { s.append(el("div", {"class": "empty"}, "No Stop yet.")); return s; }
    var t = el("table", {}, el("tr", {}, el("th", {}, "Stop"), el("th", {}, "agent"), el("th", {}, "round"), el("th", {}, "decision"), el("th", {}, "findings"), el("th", {}, "checks")));
    D.stops.forEach(function (r) {
      var checks = el("span", {});
      (r.checks || []).forEach(function (c) { checks.append(el("span", {"class": c.passed ? "pass" : "fail"}, c.name + " " + (c.passed ? "pass" : "FAIL")), " (" + secs(c.seconds) + ")  "); });
      if (!(r.checks || []).length) checks.append(el("span", {"class": "muted"}, "no checks"));
      t.append(el("tr", {}, el("td", {}, String(r.stop)), el("td", {}, r.agent_id || "main"), el("td", {}, (r.round || 0) + " of " + (r.rounds || "?")),
        el("td", {}, r.decision || "?"), el("td", {}, String(r.findings)), el("td", {}, checks)));
      // where the Stop's time went, and which tests its final run selected and reused (as `vacant report` says)
      if ((r.time || []).length) t.append(el("tr", {"class": "split"}, el("td", {}), el("td", {"colspan": "5", "class": "muted"},
        (r.time || []).map(function (line) { return el("div", {}, line); }))));
    });
    s.append(t);
    return s;
  }

  function coverage() {
    var c = D.coverage || {};
    return el("section", {id: "coverage"}, el("h2", {}, "Read coverage"),
      el("div", {}, el("b", {}, c.state || "unknown"), " — ", c.why || ""),
      D.group_changes ? el("div", {"class": "muted"}, D.group_changes + " change(s) were seen while several steps were open (owner unknown)") : null);
  }

  function reputation() {
    var s = el("section", {id: "reputation"}, el("h2", {}, "Reputation of the cells that acted", el("span", {"class": "count"}, String(D.reputation.length))));
    if (!D.reputation.length) { s.append(el("div", {"class": "empty"}, "No reviews yet for these cells.")); return s; }
    var t = el("table", {}, el("tr", {}, ["platform", "agent", "model", "task family", "n", "mean", "Wilson 95%", ""].map(function (h) { return el("th", {}, h); })));
    D.reputation.forEach(function (r) {
      t.append(el("tr", {}, el("td", {}, r.platform), el("td", {}, r.agent_definition), el("td", {}, r.model), el("td", {}, r.task_family),
        el("td", {}, String(r.n)), el("td", {}, r.mean.toFixed(2)), el("td", {}, "[" + r.wilson95[0].toFixed(2) + ", " + r.wilson95[1].toFixed(2) + "]"),
        el("td", {"class": "muted"}, r.enough_data ? "" : "not enough data")));
    });
    s.append(t);
    return s;
  }

  var began = performance.now();
  header();
  var m = el("main", {});
  document.body.append(m);
  m.append.apply(m, [rounds(), findings(), timeline(), steps(), stops(), coverage(), reputation()].filter(Boolean));
  document.body.setAttribute("data-render-ms", String(Math.round(performance.now() - began)));
  document.body.setAttribute("data-ready", "1");
})();
"""
