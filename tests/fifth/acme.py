"""Acme CLI: a fifth CLI, as a plugin would add it, in one module (``tests/test_fifth_cli.py``).

Its fake is ``fake_acme.py``: ``acme --print <prompt> --json [--model M] [--mode ro|rw]``
prints ``{"answer", "session", "tokens": {"in", "out"}}``. As a host, its commands are
``.acme/commands/maestro/<verb>.md`` (``/maestro:<verb>``), its instruction file ACME.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from maestro import roster
from maestro.install.checks import Check, Situation
from maestro.install.host import Host, HubMode, RenderedFile, RenderOptions
from maestro.install.sources import CommandSource
from maestro.paths import user_home
from maestro.process import ProcessOutcome
from maestro.spokes.base import Spoke, inline_system, read_json, safe_positional
from maestro.spokes.contract import DispatchRequest, SpokeResult, fail
from maestro.spokes.jsonout import as_int, garbled, load_json_object
from maestro.state.model import Usage


class AcmeSpoke(Spoke):
    name = "acme"

    def build_argv(self, req: DispatchRequest) -> list[str]:
        self.refuse_resume(req)
        mode = "ro" if req.tier in ("read-only", "read+shell") else "rw"
        argv = [self.executable or self.name, "--print", safe_positional(inline_system(req))]
        return argv + ["--json", "--mode", mode, *(["--model", req.model] if req.model else [])]

    def read_result(
        self, outcome: ProcessOutcome, req: DispatchRequest | None
    ) -> SpokeResult | None:
        data = load_json_object(outcome.stdout)
        if data is None or not isinstance(data.get("answer"), str):
            return None
        tokens = data.get("tokens") or {}
        usage = Usage(input=as_int(tokens.get("in")), output=as_int(tokens.get("out")))
        return SpokeResult(
            tool=self.name,
            text=data["answer"],
            success=True,
            usage=usage,
            session_id=data.get("session"),
        )

    def diagnose(self, outcome: ProcessOutcome, req: DispatchRequest | None) -> SpokeResult:
        return fail(
            self.name,
            "other",
            garbled(self.name, outcome.stdout, outcome.exit_code, outcome.stderr),
        )


class AcmeHost(Host):
    name = "acme"
    instruction_file = "ACME.md"
    project_prefix = ".acme/"

    def user_root(self, env: dict[str, str]) -> Path:
        return user_home(env) / ".acme"

    def command_file(self, source: CommandSource, opts: RenderOptions) -> str:
        return f"---\ndescription: {json.dumps(source.description)}\n---\n" + self.body(
            source, opts
        )

    def bundle(self, opts: RenderOptions) -> list[RenderedFile]:
        return []  # no plugin of its own in Maestro's repository

    def hub_mode(self, env: Mapping[str, str], project: Path, run_file: str | None) -> HubMode:
        return HubMode(True, "`acme /maestro:run` drives a run to its end.")


def _yolo(s: Situation) -> Check | None:
    """Acme's own pitfall: a config that lets its model run anything."""
    if not read_json(user_home(s.env) / ".acme" / "config.json").get("yolo"):
        return None
    return Check("pitfalls", "acme yolo", "warn", "~/.acme/config.json sets yolo.", "remove yolo.")


CLI = roster.Cli(
    "acme",
    "Acme CLI",
    "Acme",
    executable="acme",
    install_hint="pipx install acme-cli",
    budget=(20_000, 24_000, 30_000),
    model_prefixes=("acme",),
    # First choice everywhere, so routing, the challenger and the reviewer pick it.
    route_rank={"code": -1, "test": -1, "review": -1, "research": -1},
    opinion_rank=-1,
    # --mode ro still runs shell commands, which can write.
    unenforced_tiers={"read+shell": "writes cannot be forbidden: its shell can write files"},
    spoke=AcmeSpoke,
    host=AcmeHost(),
    checks=(_yolo,),
)
roster.register(CLI)
