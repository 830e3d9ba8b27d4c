"""`vacant report --html FILE` / `vacant view`: one self-contained HTML file for a run.

The page holds its data as JSON inside `<script type="application/json">`, with `<`, `>`, `&`
and the two JavaScript line separators escaped as \\uXXXX, so no string in the run (a file named
`</script>`, an output full of markup) can end the block or become markup; the script then builds
the page with text nodes only (vacant/show/assets.py). No network: no external script, style,
font or image.

Writing: the page goes to a temporary file beside the target, then is renamed over it. An
existing file is replaced only when it is a run view vacant wrote (its generator mark is in its
first kilobyte); anything else is refused, never overwritten.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

from vacant.core.atomic import atomic_write
from vacant.core.locations import WorkspaceError
from vacant.show import assets, model

GENERATOR = "vacant run view"
_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def embed_json(value: Any) -> str:
    """JSON safe inside a <script> element (and still the same value once parsed)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return "".join(_ESCAPES.get(char, char) for char in text)


def page(data: dict[str, Any]) -> str:
    title = html.escape(f"vacant run {data['run']}")
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta name=\"generator\" content=\"{GENERATOR}\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{title}</title><style>{assets.CSS}</style></head><body>"
        f"<script type=\"application/json\" id=\"vacant-data\">{embed_json(data)}</script>"
        f"<script>{assets.JS}</script></body></html>\n"
    )


def _ours(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return f'content="{GENERATOR}"'.encode() in handle.read(1024)
    except OSError:
        return False


def write_page(text: str, target: Path) -> Path:
    target = Path(os.path.abspath(target))
    if os.path.lexists(target) and (target.is_symlink() or not target.is_file() or not _ours(target)):
        raise WorkspaceError(f"{target} exists and is not a run view vacant wrote: give a new file name")
    if not target.parent.is_dir():
        raise WorkspaceError(f"{target.parent} is not a directory: give --html a file in an existing directory")
    atomic_write(target, text)
    return target


def write_view(root: Path, run_dir: Path, target: Path, stop_number: int | None = None) -> Path:
    return write_page(page(model.build(root, run_dir, stop_number)), target)
