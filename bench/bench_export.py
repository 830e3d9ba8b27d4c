"""Export cost: `vacant export` on runs of N steps, against reading the same run's step log.

    python bench/bench_export.py [--steps 100 1000] [--files 20] [--reps 5]

Each run is recorded through the real recorder: N Write steps over a few text files, each
inserting a line at a random place (so line authorship has history to follow). Reported per N,
median and max over the repetitions, each also as a ratio to the reference in the same run:
  reference   RunView.load (read and fold the step log: what every reporting command pays)
  model       vacant.export.model.load
  spans       otlp.build_spans (the OpenTelemetry SDK building every span in memory)
  send        otlp.send to a loopback sink that answers 200 (protobuf encoding + one HTTP request)
  agent_trace agent_trace.record (line authorship over every version of every file)
Prints figures; asserts nothing. Needs the `otel` extra.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

from vacant.core.calls import HookCall
from vacant.export import agent_trace, model, otlp
from vacant.platforms.claude import PLATFORM
from vacant.record.recorder import Recorder
from vacant.store.run import RunView
from vacant.store.states import store_for


def record_run(root: Path, steps: int, files: int, seed: int) -> Path:
    rng = random.Random(seed)
    contents: dict[str, list[str]] = {f"src/f{i}.txt": [] for i in range(files)}
    recorder = Recorder(root, "bench", PLATFORM)
    recorder.handle(HookCall("session_start", "bench", root, source="startup", model="bench-model"))
    (root / "src").mkdir()
    for number in range(1, steps + 1):
        rel = rng.choice(sorted(contents))
        lines = contents[rel]
        lines.insert(rng.randint(0, len(lines)), f"line written by step {number}")
        target, key = root / rel, f"toolu_{number}"
        pre = HookCall("tool_pre", "bench", root, tool="Write", key=key, scope=[str(target)],
                       tool_input={"file_path": str(target), "content": "\n".join(lines)})
        recorder.handle(pre)
        target.write_text("\n".join(lines) + "\n")
        recorder.handle(HookCall("tool_post", "bench", root, tool="Write", key=key, scope=[str(target)],
                                 tool_input=pre.tool_input, outcome="ok"))
    return recorder.log.run_dir


class Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def measure(steps: int, files: int, reps: int, sink_url: str) -> dict[str, list[float]]:
    root = Path(tempfile.mkdtemp(prefix="vacant-bench-export-"))
    try:
        run_dir = record_run(root, steps, files, seed=steps)
        store = store_for(root)
        figures: dict[str, list[float]] = {name: [] for name in ("reference", "model", "spans", "send", "agent_trace")}
        for _ in range(reps):
            figures["reference"].append(timed(lambda: RunView.load(run_dir)))
            figures["model"].append(timed(lambda: model.load(run_dir)))
            built = model.load(run_dir)
            figures["spans"].append(timed(lambda: otlp.build_spans(built)))
            figures["send"].append(timed(lambda: otlp.send(built, sink_url)))
            figures["agent_trace"].append(timed(lambda: agent_trace.record(built, store, root)))
        return figures
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    server = HTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sink = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        for steps in args.steps:
            figures = measure(steps, args.files, args.reps, sink)
            reference = statistics.median(figures["reference"])
            print(f"steps={steps} files={args.files} reps={args.reps}")
            for name, values in figures.items():
                median = statistics.median(values)
                print(f"  {name:<12} median {median * 1000:8.1f} ms  max {max(values) * 1000:8.1f} ms  "
                      f"x{median / reference:6.1f} reference")
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
