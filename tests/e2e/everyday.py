"""Everyday work behind the wall (issue 41), the same for every platform's session: a workspace
with a local npm package (a `file:` dependency), a tiny Python project whose build backend is in
the tree (an editable install with no index and no build isolation needs no network and nothing
from a registry), and the project's tests; the agent's steps make a CI workflow directory, install
both, run the tests and commit everything with `git add -A`. Afterwards the commit holds exactly
the agent's work and `git status` is clean: nothing vacant or the sandbox put in the workspace is
seen or committed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BACKEND = '''"""A PEP 660 backend in the tree: an editable wheel holding one .pth naming this directory."""
import base64, hashlib, os, zipfile

NAME, VERSION = "tiny", "0.1"
DIST = f"{NAME}-{VERSION}.dist-info"
METADATA = f"Metadata-Version: 2.1\\nName: {NAME}\\nVersion: {VERSION}\\n"
WHEEL = "Wheel-Version: 1.0\\nGenerator: tiny\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"


def prepare_metadata_for_build_editable(directory, config_settings=None):
    os.makedirs(os.path.join(directory, DIST), exist_ok=True)
    with open(os.path.join(directory, DIST, "METADATA"), "w") as out:
        out.write(METADATA)
    return DIST


def build_editable(directory, config_settings=None, metadata_directory=None):
    files = {f"{NAME}.pth": os.path.abspath(".") + "\\n", f"{DIST}/METADATA": METADATA, f"{DIST}/WHEEL": WHEEL}
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{DIST}/RECORD,,")
    name = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)
        wheel.writestr(f"{DIST}/RECORD", "\\n".join(record) + "\\n")
    return name
'''

FILES = {
    "test_x.py": "import tiny\n\n\ndef test_one():\n    assert tiny.VALUE + 1 == 4\n",
    "tiny.py": "VALUE = 3\n",
    "build_backend.py": BACKEND,
    "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "build_backend"\nbackend-path = ["."]\n\n'
                      '[project]\nname = "tiny"\nversion = "0.1"\n',
    "lib/package.json": json.dumps({"name": "lib", "version": "1.0.0", "main": "index.js"}),
    "lib/index.js": "module.exports = 42;\n",
    "package.json": json.dumps({"name": "app", "version": "1.0.0", "dependencies": {"lib": "file:./lib"}}),
    ".gitignore": "node_modules/\n.venv/\n__pycache__/\n",
}

TESTS = f"{sys.executable} -m pytest -q -p no:cacheprovider test_x.py"

# (name, shell command, the word its output ends with when it worked)
STEPS = [
    ("mkdir", "mkdir -p .github/workflows && echo 'on: push' > .github/workflows/ci.yml && echo MKDIR-OK", "MKDIR-OK"),
    ("npm", "npm install --offline --no-audit --no-fund && node -e 'console.log(\"NPM-\" + require(\"lib\"))'", "NPM-42"),
    # the venv without a pip of its own (ensurepip alone took 30 s here), the interpreter's pip aimed at it
    ("pip", "python3 -m venv --without-pip .venv && python3 -m pip --python .venv/bin/python install -q --no-index "
            "--no-build-isolation -e . && cd / && "
            "\"$OLDPWD/.venv/bin/python\" -c 'import tiny; print(\"PIP-%d\" % tiny.VALUE)'", "PIP-3"),
    ("tests", f"{TESTS} && echo TESTS-OK", "TESTS-OK"),
    ("commit", "git add -A && git -c user.email=a@b.invalid -c user.name=a commit -qm work && echo COMMIT-OK", "COMMIT-OK"),
]

# what the commit holds: the agent's work and nothing else
COMMITTED = [".github/workflows/ci.yml", "package-lock.json"]


def make_files(ws: Path) -> None:
    for rel, content in FILES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(content)


def commit_all(ws: Path, message: str = "start") -> None:
    git = ["git", "-c", "user.email=e2e@vacant.invalid", "-c", "user.name=e2e"]
    subprocess.run([*git, "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-q", "-m", message], cwd=ws, check=True)


def failed_steps(outputs: dict[str, str]) -> dict[str, str]:
    """The steps whose output lacks the word it ends with when it worked, with their output."""
    return {name: outputs.get(name, "")[-1500:] for name, _, ok in STEPS if ok not in outputs.get(name, "")}


def only_the_agents_work_seen(ws: Path) -> tuple[list[str], str]:
    """(the files the last commit holds, `git status --porcelain` now)."""
    committed = subprocess.run(["git", "show", "--name-only", "--format=", "HEAD"], cwd=ws, capture_output=True,
                               text=True, check=True).stdout.split()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=ws, capture_output=True, text=True, check=True).stdout
    return sorted(committed), status
