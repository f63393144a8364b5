"""The board under a big run: a plan of 200 tasks (a layered DAG, 20 wide), 8 spokes at
once, each a fake CLI that streams (fake claude's stream-json, fake codex's --json lines:
tests/fakes) for a couple of seconds.

Prints:

- page load: from opening the board's URL in chromium to every task drawn (as the page
  chooses to show them, or as ``--view`` says: a graph or a list), opened at the start of
  the run and again mid-run;
- event to page: for each task start and end the engine records in events.jsonl (the
  moment it appears there, read every 5 ms), the moment the page's node shows it
  (p50, p95, max);
- the server's memory (RSS of the `maestro board` process) every few seconds, and the
  CPU time it used during the run;
- the run's wall time without the board, then with the board serving and the page open.

With ``--minutes M``, instead: one board serves the project for M minutes, the page open
and following a running task's transcript, while the plan is run again and again (each run
ended, the plan is archived and written anew); the server's RSS is printed every
``--sample`` seconds (60 by default there), with its CPU and the runs made. Keep the
machine's load modest, e.g. ``--minutes 60 --tasks 100 --width 10 --concurrency 4
--events 40 --interval 1``.

Needs Playwright for Python and chromium (/usr/bin/chromium, or MAESTRO_CHROMIUM);
without them, page load is the HTTP time of the page and its state, and no latency.

Run: python bench/board.py [--tasks 200] [--concurrency 8] [--events 8] [--interval 0.25]
     [--rounds N] [--view graph|list] [--minutes M]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml

from bench.launch import maestro_argv
from tests.engine.runkit import answer
from tests.fakes.plugin import FakeClis

CRITERION = "the note names the module that owns parsing"
CHROMIUM = os.environ.get("MAESTRO_CHROMIUM", "/usr/bin/chromium")

# In the page: when each task's node (or row of the list) first shows each status (epoch ms).
WATCH = """() => {
  window.seenAt = {};
  const mark = () => {
    const now = performance.timeOrigin + performance.now();
    for (const n of document.querySelectorAll('#tasks [data-task][data-status]')) {
      const key = n.dataset.task + ' ' + n.dataset.status;
      if (!(key in window.seenAt)) window.seenAt[key] = now;
    }
  };
  new MutationObserver(mark).observe(document.getElementById('tasks'), {childList: true, subtree: true, attributes: true});
  mark();
}"""


def layered(n: int, width: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` tasks in layers of ``width``; each depends on one or two of the layer before."""
    rng = random.Random(seed)
    tasks, previous = [], []
    for start in range(0, n, width):
        layer = list(range(start + 1, min(n, start + width) + 1))
        for tid in layer:
            depends = sorted(rng.sample(previous, k=min(len(previous), rng.randint(1, 2))))
            tasks.append(
                {
                    "id": tid,
                    "title": f"Note on module {tid}",
                    "specialist": "research",
                    "agent": "technical-writer",
                    "tool": "claude" if tid % 2 else "codex",
                    "depends": depends,
                    "files": [f"notes/n{tid}.md"],
                    "criteria": [CRITERION],
                }
            )
        previous = layer
    return tasks


class Project:
    def __init__(self, folder: Path) -> None:
        self.folder, self.root, self.home = folder, folder / "proj", folder / "home"
        self.bin_dir, self.state_dir = folder / "fakes" / "bin", folder / "fakes" / "state"

    @classmethod
    def create(cls, folder: Path, tasks: list[dict[str, Any]], stream: dict[str, Any]) -> Project:
        project = cls(folder)
        project.root.mkdir(parents=True)
        project.home.mkdir()
        fakes = FakeClis(folder / "fakes")
        step = {"text": answer([CRITERION], summary="Noted."), "stream": stream}
        fakes.default("claude", step)
        fakes.default("codex", step)
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
        subprocess.run([*git, "init", "-q", "-b", "main"], cwd=project.root, check=True)
        (project.root / "README.md").write_text("bench\n")
        subprocess.run([*git, "add", "-A"], cwd=project.root, check=True)
        subprocess.run([*git, "commit", "-q", "-m", "init"], cwd=project.root, check=True)
        plan = {"version": 1, "goal": "Note every module", "hub": "gemini", "tasks": tasks}
        source = folder / "plan.yaml"
        source.write_text(yaml.safe_dump(plan, sort_keys=False))
        out = project.maestro("plan", "--from", str(source), "--yes")
        if out.wait() != 0:
            raise SystemExit("maestro plan failed")
        return project

    def copy(self, folder: Path) -> Project:
        shutil.copytree(self.folder, folder, symlinks=True)
        copied = Project(folder)
        # The fakes' programs name their code and state by path: the copy's own, which
        # a confined fake sees (its private /tmp hides the original's).
        for program in copied.bin_dir.iterdir():
            program.write_text(program.read_text().replace(str(self.folder), str(folder)))
        return copied

    def env(self, concurrency: int) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MAESTRO_", "FAKE_"))}
        env.update(
            HOME=str(self.home),
            MAESTRO_MAX_CONCURRENT=str(concurrency),
            MAESTRO_STAGGER_DELAY="0",
            MAESTRO_SANDBOX_WRITE=str(self.state_dir),  # where the confined fakes record
        )
        env["PATH"] = os.pathsep.join([str(self.bin_dir), env.get("PATH", os.defpath)])
        return env

    def maestro(self, *argv: str, concurrency: int = 8, **kw: Any) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*maestro_argv(), *argv],
            cwd=self.root,
            env=self.env(concurrency),
            stdin=subprocess.DEVNULL,
            text=True,
            **({"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL} | kw),
        )


class Recorded:
    """When each task start and end lands in events.jsonl (epoch s), read every 5 ms."""

    def __init__(self, root: Path) -> None:
        self.runs = root / ".ai" / "maestro" / "runs"
        self.seen: dict[str, float] = {}
        self.done = False
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    def _follow(self) -> None:
        offset = 0
        while not self.done:
            now = time.time()
            latest = self.runs / "latest"
            try:
                folder = self.runs / latest.read_text().strip()
                with (folder / "events.jsonl").open("rb") as f:
                    f.seek(offset)
                    data = f.read()
            except FileNotFoundError:
                data = b""
            if data:
                end = data.rfind(b"\n") + 1
                offset += end
                for line in data[:end].splitlines():
                    event = json.loads(line)
                    kind = {"task_started": "running", "task_done": "done"}.get(event["kind"])
                    if kind:
                        self.seen.setdefault(f"{event['task']} {kind}", now)
            time.sleep(0.005)

    def stop(self) -> None:
        self.done = True
        self.thread.join()


def cpu_s(pid: int) -> float:
    """User and system CPU time the process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", text).group(1)) / 1024


def run_plain(project: Project, concurrency: int) -> float:
    begun = time.perf_counter()
    code = project.maestro("run", concurrency=concurrency).wait()
    took = time.perf_counter() - begun
    if code != 0:
        raise SystemExit(f"the run without the board exited {code}")
    return took


def run_watched(
    project: Project, concurrency: int, tasks: int, sample_s: float, view: str | None
) -> dict[str, Any]:
    board = project.maestro("board", "--no-open", stdout=subprocess.PIPE)
    assert board.stdout is not None
    url = re.search(r"http://\S+", board.stdout.readline()).group(0)
    found: dict[str, Any] = {"memory": []}
    try:
        driver, browser, page = _browser(view)
        memory = found["memory"]
        start_mem = time.perf_counter()
        memory.append((0.0, rss_mb(board.pid)))
        if page is not None:
            found["load_start"] = _load(page, url, tasks)
            page.evaluate(WATCH)
        else:
            found["load_start"] = _load_http(url)
        recorded = Recorded(project.root)
        cpu_before = cpu_s(board.pid)
        begun = time.perf_counter()
        run = project.maestro("run", concurrency=concurrency)
        next_sample, mid_done = sample_s, False
        while run.poll() is None:
            time.sleep(0.2)
            now = time.perf_counter()
            if now - start_mem >= next_sample:
                memory.append((now - start_mem, rss_mb(board.pid)))
                next_sample += sample_s
            if not mid_done and now - begun > 20 and browser is not None:
                other = _page(browser, view)
                found["load_mid"] = _load(other, url, tasks)
                other.context.close()
                mid_done = True
        found["wall"] = time.perf_counter() - begun
        found["cpu"] = cpu_s(board.pid) - cpu_before
        if run.returncode != 0:
            raise SystemExit(f"the run with the board exited {run.returncode}")
        time.sleep(1.0)
        memory.append((time.perf_counter() - start_mem, rss_mb(board.pid)))
        recorded.stop()
        if page is not None:
            shown = page.evaluate("window.seenAt")
            found["lags"] = [
                shown[key] / 1000 - at for key, at in recorded.seen.items() if key in shown
            ]
            found["missed"] = len(recorded.seen) - len(found["lags"])
            browser.close()
            driver.stop()
    finally:
        board.terminate()
        board.wait()
    return found


def run_long(project: Project, concurrency: int, minutes: float, sample_s: float) -> dict[str, Any]:
    """One board over ``minutes`` of runs of the plan, one after another; the page open,
    following a running task's transcript (another one each sample)."""
    board = project.maestro("board", "--no-open", stdout=subprocess.PIPE)
    assert board.stdout is not None
    url = re.search(r"http://\S+", board.stdout.readline()).group(0)
    found: dict[str, Any] = {"memory": [], "runs": 0}
    driver, browser, page = _browser(None)
    try:
        if page is not None:
            page.goto(url)
        cpu_before, begun = cpu_s(board.pid), time.perf_counter()
        deadline, next_sample = begun + minutes * 60, 0.0
        while True:
            run, aborted = project.maestro("run", concurrency=concurrency), False
            while run.poll() is None:
                now = time.perf_counter()
                if now - begun >= next_sample:
                    found["memory"].append((now - begun, rss_mb(board.pid)))
                    next_sample += sample_s
                    if page is not None:
                        _follow_running(page)
                if now >= deadline and not aborted:
                    aborted = project.maestro("run", "--abort").wait() == 0
                time.sleep(0.5)
            found["runs"] += run.returncode == 0
            if aborted or time.perf_counter() >= deadline:
                break
            if run.returncode != 0:
                raise SystemExit(f"run {found['runs'] + 1} exited {run.returncode}")
            plan = str(project.folder / "plan.yaml")
            for argv in (("archive",), ("plan", "--from", plan, "--yes")):
                if project.maestro(*argv).wait() != 0:
                    raise SystemExit(f"maestro {' '.join(argv)} failed")
        found["memory"].append((time.perf_counter() - begun, rss_mb(board.pid)))
        found["cpu"] = cpu_s(board.pid) - cpu_before
    finally:
        if browser is not None:
            browser.close()
            driver.stop()
        board.terminate()
        board.wait()
    return found


def _follow_running(page: Any) -> None:
    """Open a running task in the panel: the page follows its transcript."""
    nodes = page.locator('#tasks [data-task][data-status="running"]')
    if nodes.count():
        nodes.first.click(timeout=5000)


def _browser(view: str | None) -> tuple[Any, Any, Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None, None, None
    if not Path(CHROMIUM).exists():
        return None, None, None
    driver = sync_playwright().start()
    browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    return driver, browser, _page(browser, view)


def _page(browser: Any, view: str | None) -> Any:
    """A page of its own tab, 1400 px wide, showing the tasks as ``view`` (graph or list;
    None: as the page chooses for the plan's size)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    if view:
        context.add_init_script(f"sessionStorage.setItem('maestro-view', '{view}')")
    return context.new_page()


def _load(page: Any, url: str, tasks: int) -> float:
    begun = time.perf_counter()
    page.goto(url)
    page.wait_for_function(
        f"() => document.querySelectorAll('#tasks [data-task]').length === {tasks}"
    )
    return time.perf_counter() - begun


def _load_http(url: str) -> float:
    import urllib.request

    origin, _, token = url.partition("/#token=")
    begun = time.perf_counter()
    urllib.request.urlopen(origin + "/").read()
    request = urllib.request.Request(origin + "/api/state", headers={"X-Maestro-Token": token})
    urllib.request.urlopen(request).read()
    return time.perf_counter() - begun


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--width", type=int, default=20, help="tasks per layer of the DAG")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--events", type=int, default=8, help="lines each spoke streams")
    parser.add_argument("--interval", type=float, default=0.25, help="seconds between them")
    parser.add_argument("--sample", type=float, help="seconds between RSS samples (10, long: 60)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="runs of each kind, alternated (A B, B A, ...) as a shared machine's load drifts",
    )
    parser.add_argument(
        "--minutes", type=float, help="serve one board this long over repeated runs instead"
    )
    parser.add_argument(
        "--view",
        choices=("graph", "list"),
        help="show the tasks as a graph or a list (default: as the page chooses; 200: list)",
    )
    args = parser.parse_args()
    stream = {"events": args.events, "interval": args.interval, "input": 500, "output": 50}
    if args.minutes:
        long_run(args, stream)
        return
    args.sample = args.sample or 10.0
    plains: list[float] = []
    watches: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="maestro-bench-board-") as tmp:
        base = Project.create(Path(tmp) / "base", layered(args.tasks, args.width), stream)
        for n in range(args.rounds):
            for kind in ("plain", "watched") if n % 2 == 0 else ("watched", "plain"):
                project = base.copy(Path(tmp) / f"{kind}-{n}")
                if kind == "plain":
                    plains.append(run_plain(project, args.concurrency))
                else:
                    watches.append(
                        run_watched(project, args.concurrency, args.tasks, args.sample, args.view)
                    )
    print(
        f"{args.tasks} tasks, {args.concurrency} at once, each spoke streaming "
        f"{args.events} lines {args.interval}s apart (fake claude stream-json, fake codex --json); "
        f"the page shows the tasks as {args.view or 'it chooses'}"
    )
    loads = [w[k] for w in watches for k in ("load_start", "load_mid") if k in w]
    print("page load (open to every task drawn): " + ", ".join(f"{s * 1000:.0f} ms" for s in loads))
    lags = sorted(lag for w in watches for lag in w.get("lags", []))
    if lags:
        p50, p95 = statistics.median(lags), lags[int(0.95 * (len(lags) - 1))]
        missed = sum(w["missed"] for w in watches)
        print(
            f"event to page ({len(lags)} task starts and ends; {missed} not seen): "
            f"p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, max {lags[-1] * 1000:.0f} ms"
        )
    else:
        print("event to page: not measured (no Playwright or chromium)")
    memory = watches[-1]["memory"]
    print("server RSS over a run: " + ", ".join(f"{at:.0f}s {mb:.1f} MB" for at, mb in memory))
    print("server CPU during a run: " + ", ".join(f"{w['cpu']:.1f} s" for w in watches))
    plain, watched = statistics.median(plains), statistics.median(w["wall"] for w in watches)
    print(
        "run wall time without the board: "
        + ", ".join(f"{s:.1f} s" for s in plains)
        + "; with it open: "
        + ", ".join(f"{w['wall']:.1f} s" for w in watches)
        + f" (medians {(watched / plain - 1) * 100:+.1f}%)"
    )


def long_run(args: argparse.Namespace, stream: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory(prefix="maestro-bench-board-") as tmp:
        project = Project.create(Path(tmp) / "long", layered(args.tasks, args.width), stream)
        found = run_long(project, args.concurrency, args.minutes, args.sample or 60.0)
    print(
        f"{args.minutes:g} minutes of runs of {args.tasks} tasks ({found['runs']} runs ended), "
        f"{args.concurrency} at once, each spoke streaming {args.events} lines "
        f"{args.interval}s apart; the page open, following a running task's transcript"
    )
    memory = found["memory"]
    print("server RSS: " + ", ".join(f"{at / 60:.0f}m {mb:.1f} MB" for at, mb in memory))
    print(f"server CPU: {found['cpu']:.1f} s")


if __name__ == "__main__":
    main()
