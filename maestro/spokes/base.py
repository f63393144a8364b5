"""The base class of every spoke adapter: the shared run, parse and price steps.

The types a spoke speaks (``DispatchRequest``, ``SpokeResult``, the error kinds) are the
contract in ``maestro.spokes.contract``; this module is how an adapter fulfils it. A spoke
is a host CLI run headless for one task, or the offline ``sim`` spoke.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maestro import passenv, roster, sandbox
from maestro.agents.tiers import can_write
from maestro.errors import MaestroError, SpokeError
from maestro.formatting import cleaned
from maestro.git import clean_env as clean_git_env
from maestro.paths import user_home
from maestro.process import ExecutableNotFound, ProcessOutcome, resolve, run_process
from maestro.spokes import clipaths
from maestro.spokes.contract import DispatchRequest, SpokeResult, UsageTally, fail
from maestro.spokes.jsonout import load_json_object
from maestro.spokes.pricing import estimate_cost, unpriced_name
from maestro.state.codecs.values import FieldError, check_line
from maestro.state.model import Usage

if TYPE_CHECKING:
    from maestro.netproxy import Door

SPOKE_MARKER = "MAESTRO_SPOKE"
SESSION_MARKER = "MAESTRO_SESSION_ID"  # bus.sessions.SESSION_VAR (a higher layer)

Runner = Callable[..., ProcessOutcome]


@dataclass(frozen=True)
class SignIn:
    """A CLI's sign-in as its files and environment show it (``Spoke.sign_in``)."""

    state: bool | None  # True: signed in; False: not, or not usably; None: cannot tell
    detail: str  # what shows it, in words for the user
    fix: str | None = None


def replace_visible(policy: sandbox.Policy, program: str) -> sandbox.Policy:
    """``policy`` with the folder of the CLI's program (and where its link leads) visible."""
    real = Path(os.path.realpath(program))
    return replace(policy, visible=[*policy.visible, Path(program).parent, real.parent])


def tilde(path: Path, env: Mapping[str, str]) -> str:
    """``path`` as a person reads it: under the home folder as ``~/...``."""
    home = user_home(env)
    return "~/" + path.relative_to(home).as_posix() if path.is_relative_to(home) else str(path)


def read_json(path: Path) -> dict[str, Any]:
    """A CLI's own JSON settings file, or {} when it is missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def google_credentials(env: Mapping[str, str]) -> list[Path]:
    """What Google's client libraries sign in to Vertex AI with: the file
    GOOGLE_APPLICATION_CREDENTIALS names, else gcloud's application default credentials
    (in ~/.config/gcloud, or $CLOUDSDK_CONFIG)."""
    named = env.get("GOOGLE_APPLICATION_CREDENTIALS")
    if named:
        return [Path(named)]
    gcloud = env.get("CLOUDSDK_CONFIG") or user_home(env) / ".config" / "gcloud"
    return [Path(gcloud) / "application_default_credentials.json"]


def refuse_if_inside_spoke(env: Mapping[str, str] | None = None) -> None:
    """Raise if this process is a spoke Maestro started: a spoke does one task, it never
    starts a run of its own (that would dispatch the plan again from inside a worker).
    A spoke's shell carries ``MAESTRO_SPOKE=1`` and its session (``MAESTRO_SESSION_ID``,
    the office's identity); either one is enough, so a spoke whose CLI drops one of them
    from its shell tool's environment is still refused."""
    env = os.environ if env is None else env
    session = env.get(SESSION_MARKER, "").strip()
    if env.get(SPOKE_MARKER) == "1" or (session and session != "user"):
        marker = f"{SESSION_MARKER}={session}" if session else f"{SPOKE_MARKER}=1"
        raise MaestroError(
            f"maestro cannot start a run inside a spoke ({marker} is set: this "
            "session was dispatched by Maestro to do one task).",
            "finish your task and report it in your Result Submission; the hub runs the plan. "
            "A coordinating task adds work with `maestro task spawn`.",
        )


def safe_positional(prompt: str) -> str:
    """A prompt that starts with '-' would be read as an option (and a lone '-' as
    "read stdin"); a leading newline keeps it a value without changing what it says."""
    return "\n" + prompt if prompt.startswith("-") else prompt


def inline_system(req: DispatchRequest) -> str:
    """The prompt for a CLI with no flag for extra system instructions."""
    if not req.system_prompt:
        return req.prompt
    return f"{req.system_prompt.rstrip()}\n\n{req.prompt}"


class Spoke:
    """One external CLI (or the sim). Subclasses set the class attributes and implement
    ``build_argv``, ``read_result`` and ``diagnose``; streaming CLIs also ``watch``."""

    name: str = ""
    supports_resume: bool = False
    simulated: bool = False
    names_its_model: bool = True  # its answer says which model ran (Codex's does not)
    # Its config files and folders (a trailing /) in each of its ``state_dirs``: read-only
    # to its own spoke, made when missing (sandbox.pre_create). A hook, a notify command
    # or an MCP server written there would run when the person next starts the CLI.
    config_names: tuple[str, ...] = ()
    # The hosts its model is reached at (``host``, ``host:port``, ``*.domain``), and the
    # environment variables that may point it at another endpoint (a base URL): what its
    # confined spoke may reach, with the ``sandbox_hosts`` setting's (maestro.netproxy).
    api_hosts: tuple[str, ...] = ()
    endpoint_vars: tuple[str, ...] = ()
    # The variables its CLI reads (sign-in, base URLs, its settings; a name ending in *
    # stands for every name it begins): besides passenv's base set, all of the person's
    # environment its spoke gets.
    env_names: tuple[str, ...] = ()

    def configured_model(self, env: Mapping[str, str]) -> str | None:
        """The model its CLI runs when Maestro names none, when its answer will not name
        it (Codex: ``model`` in its config.toml); None: its answer names it, or unknown."""
        return None

    def __init__(self, settings: Any = None) -> None:
        # Settings give the price table overrides; None means the built-in prices.
        self.settings = settings

    # -- what the CLI can guarantee (its roster entry's facts) ------------------------
    @property
    def executable(self) -> str | None:
        return roster.CLIS[self.name].executable

    @property
    def install_hint(self) -> str:
        return roster.CLIS[self.name].install_hint

    @property
    def unenforced_tiers(self) -> Mapping[str, str]:
        """Tiers the CLI's flags cannot fully enforce -> why."""
        return roster.CLIS[self.name].unenforced_tiers

    def enforces(self, tier: str) -> bool:
        """True only where the CLI's own flags fully enforce ``tier``; elsewhere the
        delegation prompt's restriction block has to carry it."""
        return roster.enforces(self.name, tier)

    def reaches_office(self, tier: str) -> bool:
        """Can a spoke of ``tier`` write the office's state from its shell (given
        ``DispatchRequest.shared_dirs``)? Where it cannot, its prompt lists no mail
        commands and it reports in its answer alone."""
        return True

    # -- what it keeps on the machine ------------------------------------------------------
    def state_dirs(self, env: Mapping[str, str]) -> list[Path]:
        """The folders the CLI writes as it works (sessions, logs, its login's refresh):
        writable to its confined spoke, hidden from every other confined process."""
        return []

    def state_files(self, env: Mapping[str, str]) -> list[Path]:
        """Its files outside those folders (its login's among them): read-only to its
        spoke, even inside a folder the ``sandbox_hide`` setting hides; hidden from others."""
        return []

    def config(self, env: Mapping[str, str]) -> tuple[str, ...]:
        """Its ``config_names`` as ``env`` has it set up."""
        return self.config_names

    def own_env(self, env: Mapping[str, str]) -> tuple[str, ...]:
        """Its ``env_names`` as ``env`` has it set up."""
        return self.env_names

    def private_paths(self, env: Mapping[str, str]) -> list[Path]:
        return [*self.state_dirs(env), *self.state_files(env)]

    def endpoints(self, env: Mapping[str, str]) -> list[str]:
        """The model endpoints (base URLs) ``env`` configures it for: reachable by its
        confined spoke, loopback and LAN ones too (a local model server, a gateway)."""
        return [env[name] for name in self.endpoint_vars if env.get(name)]

    def confinement(self, req: DispatchRequest, env: dict[str, str]) -> sandbox.Policy:
        """Where its spoke may write: its worktree when its tier writes, its own state
        (config read-only), the office's folders it is given; everything else read-only,
        ``hidden_dirs`` not even that; its office's ``door`` bound in."""
        own = self.state_dirs(env)
        config = [p for d in own for p in sandbox.pre_create(d, self.config(env))]
        assert req.scratch_dir is not None
        visible = [req.scratch_dir]
        root, state = env.get("MAESTRO_PROJECT_DIR"), env.get("MAESTRO_STATE_DIR")
        visible += [Path(root)] if root else []
        return sandbox.work_policy(
            req.cwd,
            env,
            writes=can_write(req.tier),
            scratch=req.scratch_dir / "git",
            state=Path(root) / state if root and state else None,
            own=self.name,
            writable=[*own, *req.shared_dirs],
            read_only=[*config, *self.state_files(env)],
            visible=visible,
            hidden=req.hidden_dirs,
            door=req.door,
        )

    def confined(
        self,
        req: DispatchRequest,
        argv: list[str],
        env: dict[str, str],
        door: Door | None,
        bound: sandbox.Bound | None,
    ) -> tuple[list[str], dict[str, str]]:
        """``argv`` and ``env`` as the process runner gets them: wrapped by the sandbox
        when ``req`` is confined (reaching out through ``door``, its processes under
        ``bound``), its program found first (ExecutableNotFound)."""
        if req.sandbox is None:
            return argv, env
        program = resolve(argv[0], env)
        policy = sandbox.placed(self.confinement(req, env), door, bound)
        return sandbox.wrap([program, *argv[1:]], replace_visible(policy, program), req.sandbox)

    # -- building the call ------------------------------------------------------------
    def build_argv(self, req: DispatchRequest) -> list[str]:
        raise NotImplementedError

    def cannot_resume(self, session: str, env: Mapping[str, str]) -> str | None:
        """Why this CLI, started with ``env``, cannot resume ``session`` (None: it can)."""
        return None if self.supports_resume else f"{self.name} does not resume sessions"

    def refuse_resume(self, req: DispatchRequest) -> None:
        if req.resume_session and not self.supports_resume:
            raise SpokeError(
                f"the {self.name} spoke cannot resume a session by id.",
                "dispatch the task afresh, or to a CLI that resumes "
                f"({roster.or_list([c.name for c in roster.CLIS.values() if c.spoke.supports_resume])}).",
            )

    def spoke_env(
        self, req: DispatchRequest, base_env: dict[str, str] | None = None
    ) -> dict[str, str]:
        """The caller's environment as the user had it (minus what a hub's shell tool
        injected: its variables, its git settings, see maestro.git), of which only what
        ``passenv`` allows, the CLI's own variables and the ``sandbox_env`` setting's pass
        (each CLI's ``nested_vars`` never), plus the spoke marker and ``req.env_extra``; on
        a PATH without the CLI, the folder it was recorded in goes last (``clipaths``: a
        hub's login shell resets PATH)."""
        env = clean_git_env(roster.user_env(os.environ if base_env is None else base_env))
        extra = self.settings.sandbox_env if self.settings is not None else ()
        env = passenv.allowed(env, *self.own_env(env), *extra)
        for cli in roster.CLIS.values():
            for key in cli.nested_vars:
                env.pop(key, None)
        env[SPOKE_MARKER] = "1"
        env.update(req.env_extra)
        if self.executable:
            env["PATH"] = clipaths.search_path(self.executable, env)
        return env

    def prepare(self, req: DispatchRequest) -> None:
        """Write files the argv refers to (into ``req.scratch_dir``)."""

    def watch(self, event: dict[str, Any], tally: UsageTally) -> None:
        """Update ``tally`` from one streamed JSON event (CLIs that stream usage)."""

    def retry_notice(self, line: str) -> bool:
        """True for a line of its output (either stream) saying the CLI keeps retrying a
        failed model call on its own, or waits for a provider it cannot reach: the
        dispatch stops there, and ``read_result`` (or ``stopped_retrying``, for a notice
        on stderr) says why. For CLIs whose own retries cannot be switched off for one
        call: they would be silent for minutes. Maestro's retry ladder decides."""
        return False

    def sign_in(self, env: Mapping[str, str]) -> SignIn:
        """Whether the CLI is signed in, as its own files and ``env`` tell without a model
        call (``maestro doctor``; a failed dispatch that could not authenticate or reach
        its provider names a missing sign-in)."""
        return SignIn(None, "Maestro cannot tell")

    def stopped_retrying(self, outcome: ProcessOutcome, req: DispatchRequest | None) -> SpokeResult:
        raise NotImplementedError

    # -- reading the output -------------------------------------------------------------
    def read_result(
        self, outcome: ProcessOutcome, req: DispatchRequest | None
    ) -> SpokeResult | None:
        """The CLI's structurally complete answer (success or reported error), else None."""
        raise NotImplementedError

    def diagnose(self, outcome: ProcessOutcome, req: DispatchRequest | None) -> SpokeResult:
        """No complete answer: say why from the exit code, stderr and partial stdout."""
        raise NotImplementedError

    def parse(self, outcome: ProcessOutcome, req: DispatchRequest | None = None) -> SpokeResult:
        # Stopped on stdout: over its token budget, unless a retry notice stopped it.
        over_budget = outcome.aborted and not any(
            map(self.retry_notice, outcome.stdout.splitlines())
        )
        result = self.read_result(outcome, req)
        # Stopped at its time limit, the limit is why it failed, whatever it said as it was
        # stopped (a request cut off by the SIGTERM: Claude Code's "Connection dropped"
        # result, Gemini CLI's "fetch failed" retry notice). A complete answer read after
        # the limit stays a success: only the CLI's shutdown overran it (the notes'
        # exit-124 soft success; ``timed_out`` says so).
        if outcome.timed_out and (result is None or not result.success):
            limit = f" of {req.timeout_s:g}s" if req else ""
            result = fail(
                self.name,
                "timeout",
                f"{self.name} gave no complete result within the time limit{limit}; it was stopped.",
            )
        if result is None and req is not None and req.sandbox is not None:
            said = sandbox.fault(f"the {self.name} spoke", outcome)
            result = fail(self.name, "sandbox", said) if said else None
        if result is None and outcome.stopped_on_stderr:
            result = self.stopped_retrying(outcome, req)
        if result is None:
            result = self.diagnose(outcome, req)
        if over_budget:
            threshold = req.abort_tokens if req else None
            result.success = False
            result.error_kind = "over_budget"
            result.aborted_over_budget = True
            result.error = (
                f"{self.name} was stopped at {result.usage.total:,} tokens, over its abort "
                f"threshold of {threshold:,} tokens."
                if threshold
                else f"{self.name} was stopped over its token budget."
            )
        self.keepable(result)
        result.tool = self.name
        result.duration_s = outcome.duration_s
        result.exit_code = outcome.exit_code
        result.timed_out = outcome.timed_out
        result.stdout = outcome.stdout
        result.stderr = outcome.stderr
        result.simulated = self.simulated
        if result.cost is None and result.unpriced is None and not self.simulated:
            self.price(result, {result.model or (req.model if req else None): result.usage})
        return result

    @staticmethod
    def keepable(result: SpokeResult) -> None:
        """What the spoke said, fit to keep in the plan: its answer and error without the
        colour codes a CLI or a test runner prints, and its session id only when the plan
        can hold it (one line, no control characters), else none (nothing to resume)."""
        result.text = cleaned(result.text)
        result.error = cleaned(result.error) if result.error else result.error
        if result.session_id is not None:
            try:
                check_line("session id", result.session_id)
            except FieldError:
                result.session_id = None

    def price(self, result: SpokeResult, by_model: dict[str | None, Usage]) -> None:
        """``result``'s cost estimated from the price table, model by model; a model
        the table lacks leaves the cost unknown and is named in ``result.unpriced``."""
        total = 0.0
        for model, usage in by_model.items():
            part = estimate_cost(model, usage, self.settings)
            if part is None:
                if usage.total or usage.cached:
                    result.cost, result.cost_estimated = None, False
                    result.unpriced = unpriced_name(model, self.name)
                    return
                part = 0.0  # nothing used: nothing to price
            total += part
        result.cost, result.cost_estimated = round(total, 6), True

    # -- running ------------------------------------------------------------------------
    def stream_watcher(
        self, req: DispatchRequest
    ) -> tuple[UsageTally, Callable[[str], bool]] | None:
        """A per-line callback that stops the process once usage passes ``abort_tokens``."""
        if not req.abort_tokens:
            return None
        tally = UsageTally()
        limit = req.abort_tokens

        def on_line(line: str) -> bool:
            event = load_json_object(line)
            if event is not None:
                self.watch(event, tally)
            return tally.usage.total > limit

        return tally, on_line

    @contextlib.contextmanager
    def scratch(self, req: DispatchRequest) -> Iterator[DispatchRequest]:
        if req.scratch_dir is not None:
            req.scratch_dir.mkdir(parents=True, exist_ok=True)
            yield req
            return
        folder = tempfile.mkdtemp(prefix=f"maestro-{self.name}-")
        try:
            yield replace(req, scratch_dir=Path(folder))
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def dispatch(
        self,
        req: DispatchRequest,
        *,
        runner: Runner = run_process,
        base_env: dict[str, str] | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> SpokeResult:
        """Run ``req`` and read its result. ``runner`` is the process seam tests may swap;
        ``on_start`` gets the pid of the process doing the work."""
        return self.execute(req, self.spoke_env(req, base_env), runner, on_start)

    def execute(
        self,
        req: DispatchRequest,
        env: dict[str, str],
        runner: Runner,
        on_start: Callable[[int], None] | None,
    ) -> SpokeResult:
        network = sandbox.network(req.sandbox, self.api_hosts, self.endpoints(env))
        bounded = sandbox.bounded(req.sandbox)
        with self.scratch(req) as run_req, network as door, bounded as bound:
            self.prepare(run_req)
            argv = self.build_argv(run_req)
            watcher = self.stream_watcher(run_req)
            said = [""]  # the last line it wrote to stderr

            def on_stdout(line: str) -> bool:
                return self.retry_notice(line) or bool(watcher and watcher[1](line))

            def on_stderr(line: str) -> bool:
                said[0] = cleaned(line).strip() or said[0]
                return self.retry_notice(line)

            def on_quiet(elapsed: float) -> None:
                assert run_req.progress is not None
                last = (
                    f"; last on its stderr: {said[0][:200]}"
                    if said[0]
                    else ", nothing on its stderr"
                )
                run_req.progress(f"{self.name}: no answer yet after {elapsed:.0f}s{last}")

            try:
                run_argv, run_env = self.confined(run_req, argv, env, door, bound)
                outcome = runner(
                    run_argv,
                    cwd=run_req.cwd,
                    env=run_env,
                    timeout_s=run_req.timeout_s,
                    on_stdout_line=on_stdout,
                    on_stderr_line=on_stderr,
                    **sandbox.starting(door, on_start),
                    **({"on_quiet": on_quiet} if run_req.progress else {}),
                )
            except ExecutableNotFound:
                raise SpokeError(
                    f"the {self.name} CLI ({self.executable}) is not installed or not on PATH.",
                    f"install it with `{self.install_hint}`, or plan the task for another CLI.",
                ) from None
            finally:
                if run_req.scratch_dir is not None:  # its private git (sandbox.git_layout)
                    shutil.rmtree(run_req.scratch_dir / "git", ignore_errors=True)
        result = self.parse(outcome, run_req)
        if watcher and result.usage.total < watcher[0].usage.total:
            result.usage = watcher[0].usage
        if result.error_kind in ("auth", "network"):
            signed = self.sign_in(env)
            if signed.state is False:
                result.error = f"{result.error} ({self.name} is not signed in: {signed.detail}; fix: {signed.fix})"
        result.argv = argv
        result.confined = run_req.sandbox is not None
        result.refused = sandbox.refusals(door, bound)
        if bound and bound.refused and result.success:
            # Its work may lack what the refused processes were to do: it does not count.
            result.success, result.error_kind, result.error = False, "sandbox_limit", result.refused
        elif result.refused and not result.success:
            result.error = f"{result.error or 'it failed'}; {result.refused}"
        return result
