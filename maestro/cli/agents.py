"""`maestro agents list|show NAME|validate|permissions`: the persona catalog."""

from __future__ import annotations

import argparse
from typing import Any

from maestro import roster
from maestro.agents.catalog import Catalog, scan_agents
from maestro.agents.permissions import check_permissions, tier_gaps
from maestro.agents.personaschema import Violation
from maestro.agents.tiers import TIERS
from maestro.cli.context import Context, Result
from maestro.errors import ConfigError, MaestroError
from maestro.formatting import shown_path
from maestro.tables import aligned

EXAMPLES = """\
  maestro agents list
  maestro agents show coder --tool claude
  maestro agents validate
  maestro agents permissions --json"""

ACTIONS = ("list", "show", "validate", "permissions")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=ACTIONS, help="what to do")
    parser.add_argument("name", nargs="?", help="the agent to show (show only)")
    parser.add_argument(
        "--tool", choices=roster.NAMES, help="show: the spoke CLI to resolve the model for"
    )


def _fmt(value: Any) -> str:
    if value is None:
        return "CLI default"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _catalog(ctx: Context) -> tuple[Any, Any]:
    scan = scan_agents(ctx.settings)
    return scan, Catalog(scan.agents, ctx.settings)


def _row(catalog: Any, agent: Any) -> dict[str, Any]:
    resolved = catalog.resolve_agent(agent, roster.persona_cli())
    return {
        "name": agent.name,
        "description": agent.description,
        "tier": agent.tier,
        "tools": agent.tools,
        "models": {cli: model for cli, (model, _) in catalog.models(agent).items()},
        "temperature": resolved.temperature,
        "max_turns": resolved.max_turns,
        "timeout_mins": resolved.timeout_mins,
        "origin": agent.origin,
        "source": agent.source,
        "disabled": agent.name in catalog.disabled,
    }


def _list(ctx: Context) -> Result:
    scan, catalog = _catalog(ctx)
    rows = [_row(catalog, agent) for agent in catalog.agents.values()]
    persona = roster.persona_cli()
    head = ("NAME", "TIER", f"{persona.upper()} MODEL", "TEMP", "TURNS", "TIMEOUT", "FROM")
    table = [
        [
            r["name"] + (" (disabled)" if r["disabled"] else ""),
            r["tier"],
            _fmt(r["models"][persona]),
            _fmt(r["temperature"]),
            str(r["max_turns"]),
            f"{_fmt(r['timeout_mins'])} min",
            r["origin"],
        ]
        for r in rows
    ]
    lines = aligned(head, table)
    errors = scan.errors()
    if errors:
        lines.append(
            f"\n{len(errors)} persona problem(s) left some agents out: run 'maestro agents validate'."
        )
    return Result("agents", {"agents": rows, "problems": len(errors)}, "\n".join(lines))


def _show(ctx: Context, name: str, tool: str | None) -> Result:
    _, catalog = _catalog(ctx)
    if name not in catalog.agents:
        catalog.get(name)  # raises NotFound with the closest match
    agent = catalog.agents[name]
    resolved = catalog.resolve_agent(agent, tool)
    row = _row(catalog, agent)
    models = catalog.models(agent)
    row.update(
        tool=tool,
        model=resolved.model,
        sources=resolved.sources,
        model_sources={cli: src for cli, (_, src) in models.items()},
        body=agent.body,
    )
    if tool:
        row.update(
            temperature=resolved.temperature,
            max_turns=resolved.max_turns,
            timeout_mins=resolved.timeout_mins,
        )
    lines = [
        f"{agent.name}{' (disabled)' if row['disabled'] else ''}: {agent.description}",
        f"source: {agent.source} ({agent.origin})",
        f"tier: {agent.tier}  tools: {', '.join(agent.tools)}",
    ]
    for cli, (model, source) in models.items():
        lines.append(f"model on {cli}: {_fmt(model)}  ({source})")
    for key in ("temperature", "max_turns", "timeout_mins"):
        lines.append(f"{key}: {_fmt(getattr(resolved, key))}  ({resolved.sources[key]})")
    lines += ["", agent.body.rstrip()]
    return Result("agents", row, "\n".join(lines))


def _validate(ctx: Context) -> Result:
    scan = scan_agents(ctx.settings)
    violations = list(scan.violations)
    try:
        Catalog(scan.agents, ctx.settings)
    except ConfigError as error:
        # Overrides and disabled names are part of the catalog: report them here too.
        config = ctx.settings.config_file
        where = error.file or (
            shown_path(config, ctx.settings.paths.root) if config else "settings"
        )
        violations.append(Violation(where, "(overrides)", str(error)))
    errors = [v for v in violations if v.level == "error"]
    lines = [v.line() for v in violations]
    lines.append(
        f"{len(scan.agents)} agent(s) checked: "
        + (f"{len(errors)} error(s)" if errors else "no errors")
        + (f", {len(violations) - len(errors)} warning(s)" if len(violations) > len(errors) else "")
        + "."
    )
    data = {
        "agents": list(scan.agents),
        "violations": [
            {"file": v.file, "key": v.key, "message": v.message, "level": v.level}
            for v in violations
        ],
    }
    return Result("agents", data, "\n".join(lines), exit_code=1 if errors else 0)


def _permissions(ctx: Context) -> Result:
    scan = scan_agents(ctx.settings)
    findings = check_permissions(scan.agents, scan.bundled)
    by_tier = {tier: [a.name for a in scan.agents.values() if a.tier == tier] for tier in TIERS}
    gaps = tier_gaps(scan.agents)
    lines = [f.line() for f in findings]
    if findings:
        lines.append(f"least privilege broken: {len(findings)} finding(s).")
    else:
        lines += aligned(
            ("TIER", "AGENTS"), [[tier, ", ".join(names) or "-"] for tier, names in by_tier.items()]
        )
        lines.append(f"least privilege holds for {len(scan.agents)} agent(s).")
    # What the roster's tiers cannot get from a CLI's own flags: not a finding (nothing
    # to fix in the agents), but the user should know, and routing avoids those CLIs.
    lines += [gap.line() for gap in gaps]
    if gaps:
        lines.append(
            "run routes a task without a Tool to a CLI that enforces its tier; a task whose Tool names one "
            "of these CLIs gets the tier from its prompt only."
        )
    if scan.errors():
        lines.append(
            f"{len(scan.errors())} persona file(s) could not be read: run 'maestro agents validate'."
        )
    data = {
        "tiers": by_tier,
        "findings": [
            {"agent": f.agent, "source": f.source, "problem": f.problem} for f in findings
        ],
        "unenforced": [
            {"tool": g.tool, "tier": g.tier, "agents": list(g.agents), "why": g.why} for g in gaps
        ],
    }
    return Result("agents", data, "\n".join(lines), exit_code=1 if findings or scan.errors() else 0)


def run(args: argparse.Namespace, ctx: Context) -> Result:
    if args.action == "show":
        if not args.name:
            raise MaestroError(
                "'maestro agents show' needs an agent name.",
                "run 'maestro agents list' for the names.",
            )
        return _show(ctx, args.name, args.tool)
    if args.name:
        raise MaestroError(
            f"'maestro agents {args.action}' takes no name.",
            f"run 'maestro agents show {args.name}'.",
        )
    if args.tool:
        raise MaestroError("--tool applies to 'maestro agents show' only.", "drop --tool.")
    return {"list": _list, "validate": _validate, "permissions": _permissions}[args.action](ctx)
