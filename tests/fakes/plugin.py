"""pytest plugin: the ``fake_clis`` fixture puts fake ``claude``, ``gemini`` and ``codex``
executables first on PATH, scripted per test. See tests/fakes/README.md."""

from __future__ import annotations

import compileall
import json
import os
import shutil
import signal
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

FAKES = Path(__file__).resolve().parent
SAMPLES = FAKES.parent / "fixtures" / "host-samples"
IGNORED = shutil.ignore_patterns("__pycache__", "*.md")
CLIS = ("claude", "gemini", "codex")


def _link(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copy2(source, target)


class FakeClis:
    """Script, inspect and remove the fake CLIs of one test."""

    def __init__(self, root: Path) -> None:
        self.bin_dir = root / "bin"
        self.state_dir = root / "state"
        self.bin_dir.mkdir(parents=True)
        self.state_dir.mkdir(parents=True)
        # The fakes' code and the host samples they replay lie beside their bin folder, as
        # an installed CLI's do: a confined spoke sees that folder (its PATH entry's
        # prefix), and its private /tmp hides a checkout of this repository under /tmp.
        self.lib = root / "lib"
        shutil.copytree(FAKES, self.lib, ignore=IGNORED, copy_function=_link)
        # Compiled, as an installed CLI's Python is: a confined fake sees its folder read
        # only and would otherwise compile its code again at every start (some 10 ms).
        compileall.compile_dir(self.lib, quiet=1)
        shutil.copytree(SAMPLES, root / "fixtures" / "host-samples", copy_function=_link)
        for name in CLIS:
            self.install(name)

    def path(self, name: str) -> Path:
        return self.bin_dir / name

    def install(self, name: str) -> None:
        """(Re)create the fake ``name`` executable."""
        exe = self.path(name)
        # -I -S: the fake needs only the standard library and starts faster without site.
        exe.write_text(
            f"#!{sys.executable} -IS\n"
            "import sys\n"
            f"sys.path.insert(0, {str(self.lib)!r})\n"
            "from fake_cli import main\n"
            f"sys.exit(main({name!r}, {str(self.state_dir)!r}))\n",
            encoding="utf-8",
        )
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    def uninstall(self, name: str) -> None:
        """Make ``name`` missing from PATH, as on a machine without that CLI."""
        self.path(name).unlink(missing_ok=True)

    def script(self, name: str, steps: list[dict[str, Any]]) -> None:
        """Steps consumed one per invocation of ``name``, in order (calls are counted
        from this point). After the last step, calls get the default step."""
        (self.state_dir / f"{name}.script.json").write_text(json.dumps(steps), encoding="utf-8")
        (self.state_dir / f"{name}.count").write_text("0", encoding="utf-8")

    def default(self, name: str, step: dict[str, Any]) -> None:
        """The step for calls beyond the script (initially {}: the success sample)."""
        (self.state_dir / f"{name}.default.json").write_text(json.dumps(step), encoding="utf-8")

    def version(self, name: str, text: str) -> None:
        """What ``name --version`` prints."""
        (self.state_dir / f"{name}.version").write_text(text, encoding="utf-8")

    def calls(self, name: str) -> list[dict[str, Any]]:
        """One record per invocation: argv (without the program), cwd, pid, pgid,
        stdin_devnull, env markers, step index, writes, policies, child_pid, rejected."""
        log = self.state_dir / f"{name}.calls.jsonl"
        if not log.exists():
            return []
        # A fake may be appending its line at this moment: only whole lines (those ending
        # in a newline) are read, so a test polling for a call never sees half of one.
        whole = log.read_text(encoding="utf-8").split("\n")[:-1]
        return [json.loads(line) for line in whole if line.strip()]

    def signals(self, name: str) -> list[dict[str, Any]]:
        """The signals its runs with ``record_term`` heard: ``call``, ``signal``, ``time``."""
        log = self.state_dir / f"{name}.signals.jsonl"
        lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
        return [json.loads(line) for line in lines if line.strip()]

    def runs(self, name: str) -> list[dict[str, Any]]:
        """Calls that ran a step (not ``--version``, not refused at the command line)."""
        return [c for c in self.calls(name) if "step" in c]

    def intervals(self, *names: str) -> list[tuple[float, float]]:
        """(start, end) wall-clock times of the completed runs of these CLIs; a call
        killed before it finished has no end and is left out."""
        out = []
        for name in names or CLIS:
            log = self.state_dir / f"{name}.ends.jsonl"
            lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
            ends = {e["call"]: e["end"] for e in map(json.loads, filter(str.strip, lines))}
            out += [(c["time"], ends[c["call"]]) for c in self.runs(name) if c["call"] in ends]
        return sorted(out)

    @staticmethod
    def most_at_once(intervals: list[tuple[float, float]]) -> int:
        """The largest number of intervals that overlap at one moment."""
        edges = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
        now = peak = 0
        for _, delta in edges:  # at equal times an end (-1) sorts before a start
            now += delta
            peak = max(peak, now)
        return peak


def _path_without_real_clis(path: str) -> list[str]:
    """PATH entries that hold none of the real CLIs, so an uninstalled fake is missing."""
    kept = []
    for entry in path.split(os.pathsep):
        if entry and not any(shutil.which(name, path=entry) for name in CLIS):
            kept.append(entry)
    return kept


@pytest.fixture
def fake_clis(tmp_path_factory, monkeypatch) -> FakeClis:
    fakes = FakeClis(tmp_path_factory.mktemp("fake-clis"))
    entries = [str(fakes.bin_dir), *_path_without_real_clis(os.environ.get("PATH", os.defpath))]
    monkeypatch.setenv("PATH", os.pathsep.join(entries))
    # Where the fakes record their calls: writable to a confined spoke (sandbox_write).
    monkeypatch.setenv("MAESTRO_SANDBOX_WRITE", str(fakes.state_dir))
    yield fakes
    stop_leftovers(fakes)


def stop_leftovers(fakes: FakeClis) -> None:
    """Stop fakes a test left running (a test that kills its engine leaves the spoke, in
    its own process group by design, hanging). Only processes running this fixture's
    fakes are touched; a group only when the fake leads it."""
    for name in ("claude", "gemini", "codex"):
        for call in fakes.calls(name):
            pid, pgid = call.get("pid"), call.get("pgid")
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue  # gone already
            if str(fakes.path(name)).encode() not in argv:
                continue  # the pid now belongs to someone else
            try:
                if pgid == pid and pgid != os.getpgrp():
                    os.killpg(pgid, signal.SIGKILL)
                else:
                    os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
