"""The fake ``acme`` executable (``acme.py`` is its CLI's module): each call takes the next
step of ``acme.script.json`` beside its state (the runkit's steps: ``text``, ``usage``,
``write``), writes the step's files, records its argv, and answers in Acme's JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(state: Path) -> int:
    argv = sys.argv[1:]
    if argv == ["--version"]:
        print("acme 1.2.3")
        return 0
    if "--print" not in argv or "--json" not in argv:
        print(f"acme: unknown arguments {argv}", file=sys.stderr)
        return 2
    count = state / "acme.count"
    index = int(count.read_text()) if count.exists() else 0
    count.write_text(str(index + 1))
    script = state / "acme.script.json"
    steps = json.loads(script.read_text()) if script.exists() else []
    step = steps[index] if index < len(steps) else {}
    with (state / "acme.calls.jsonl").open("a") as calls:
        calls.write(json.dumps(argv) + "\n")
    for item in step.get("write", []):
        path = Path.cwd() / item["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(item["content"])
    usage = step.get("usage", {})
    tokens = {"in": usage.get("input", 100), "out": usage.get("output", 20)}
    answer = {"answer": step.get("text", "done"), "session": f"acme-{index}", "tokens": tokens}
    print(json.dumps(answer))
    return 0
