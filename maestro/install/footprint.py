"""What Maestro adds to each host's context, in cl100k tokens.

Two kinds of cost: what every session pays (the stub block in the instruction file and
every command or skill description the host lists to its model) and what one
invocation pays (the command body the host expands). Counting uses
``maestro.tokens.count_tokens``: tiktoken's cl100k_base, its ranks shipped in the
package (sha256-checked), so it works with no network. Hosts' own tokenizers differ; cl100k is the design notes' yardstick.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from maestro import roster
from maestro.install import block
from maestro.install.host import Host, RenderOptions, hosts
from maestro.install.sources import BUDGETS, ON_DEMAND_SKILLS, STUB_BUDGET, VERBS, load_skill
from maestro.tokens import ENCODING, count_tokens

# The design notes' example (seeds, "Global Instruction Content"), for comparison.
NOTES_EXAMPLE_STUB = (
    "## Maestro Orchestration\n"
    "Multi-agent orchestration via `/maestro plan`, `/maestro challenge`, `/maestro run`, "
    "`/maestro review`, `/maestro status`, `/maestro report`.\n"
    "State: `.ai/MAESTRO.md` | Log: `.ai/MAESTRO-LOG.md`\n"
)
LIST_KINDS = ("commands", "skills", "agents")


@dataclass
class HostFootprint:
    host: str
    stub_block: int  # the whole block as written, markers included
    stub_seen: int  # what the model reads each session (Claude hides HTML comments)
    listed: dict[str, int]
    bodies: dict[str, int]

    @property
    def per_session(self) -> int:
        return self.stub_seen + sum(self.listed.values())

    def problems(self) -> list[str]:
        found = []
        if self.stub_block > STUB_BUDGET:
            found.append(f"{self.host} stub: {self.stub_block} tokens, budget {STUB_BUDGET}")
        for verb, tokens in self.bodies.items():
            if tokens > BUDGETS[verb]:
                found.append(f"{self.host} {verb}: {tokens} tokens, budget {BUDGETS[verb]}")
        return found


@dataclass
class Footprint:
    hosts: list[HostFootprint]
    notes_stub: int
    skills: dict[str, int]  # on-demand skill bodies
    skills_if_native: int  # their descriptions, were they installed as host skills
    # (host, other host) -> what the host lists of the other's project install
    # (Gemini reads Codex's .agents/skills too)
    cross_listed: dict[tuple[str, str], int]
    invocation: str

    def problems(self) -> list[str]:
        return [p for h in self.hosts for p in h.problems()]


def host_footprint(host: Host, opts: RenderOptions) -> HostFootprint:
    written = block.render(host.name, host.stub(opts)) + "\n"
    seen = host.stub(opts) if host.strips_comments else written
    listed = {kind: 0 for kind in LIST_KINDS}
    for item in host.listed(opts):
        listed[item.kind] += count_tokens(item.text + "\n")
    bodies = {verb: count_tokens(host.expanded(verb, opts)) for verb in VERBS}
    return HostFootprint(host.name, count_tokens(written), count_tokens(seen), listed, bodies)


def measure(opts: RenderOptions) -> Footprint:
    skills = {name: load_skill(name) for name in ON_DEMAND_SKILLS}
    native = sum(count_tokens(f"- {s.name}: {s.description}\n") for s in skills.values())
    found = hosts().values()
    cross = {
        (host.name, other.name): sum(count_tokens(i.text + "\n") for i in other.listed(opts))
        for host in found
        for other in found
        if host.lists_skills_in
        and other is not host
        and any(f.path.startswith(host.lists_skills_in) for f in other.files("project", opts))
    }
    return Footprint(
        hosts=[host_footprint(h, opts) for h in hosts().values()],
        notes_stub=count_tokens(NOTES_EXAMPLE_STUB),
        skills={name: count_tokens(s.body) for name, s in skills.items()},
        skills_if_native=native,
        cross_listed=cross,
        invocation=opts.invocation,
    )


def to_data(fp: Footprint) -> dict[str, Any]:
    return {
        "encoding": ENCODING,
        "invocation": fp.invocation,
        "stub_budget": STUB_BUDGET,
        "budgets": BUDGETS,
        "hosts": [
            {
                "host": h.host,
                "stub_block": h.stub_block,
                "stub_seen": h.stub_seen,
                "listed": h.listed,
                "per_session": h.per_session,
                "bodies": h.bodies,
            }
            for h in fp.hosts
        ],
        "notes_example_stub": fp.notes_stub,
        "on_demand_skills": fp.skills,
        "skills_if_installed_natively": fp.skills_if_native,
        **{f"{a}_lists_{b}_project_skill": n for (a, b), n in fp.cross_listed.items()},
        "problems": fp.problems(),
    }


def to_text(fp: Footprint) -> str:
    names = [h.host for h in fp.hosts]
    width = 34

    def row(label: str, values: list[str]) -> str:
        return f"  {label:<{width}}" + "".join(f"{v:>8}" for v in values)

    lines = [
        f"Tokens Maestro adds, per host (cl100k via {ENCODING}; invocation: {fp.invocation})",
        "",
    ]
    lines.append(f"{'Every session':<{width + 2}}" + "".join(f"{n:>8}" for n in names))
    lines.append(
        row(
            f"stub block, markers included (<={STUB_BUDGET})", [str(h.stub_block) for h in fp.hosts]
        )
    )
    lines.append(row("stub the model reads", [str(h.stub_seen) for h in fp.hosts]))
    for kind in LIST_KINDS:
        lines.append(row(f"listed {kind}", [str(h.listed[kind]) for h in fp.hosts]))
    lines.append(row("total per session", [str(h.per_session) for h in fp.hosts]))
    lines.append("")
    lines.append(f"{'On invoke (budget)':<{width + 2}}" + "".join(f"{n:>8}" for n in names))
    for verb in VERBS:
        values = [
            f"{h.bodies[verb]}{'!' if h.bodies[verb] > BUDGETS[verb] else ''}" for h in fp.hosts
        ]
        lines.append(row(f"{verb} ({BUDGETS[verb]})", values))
    lines += [
        "",
        f"Design notes' example stub, for comparison: {fp.notes_stub} tokens.",
        *(
            f"{roster.CLIS[a].short} also lists {hosts()[a].lists_skills_in.rstrip('/')}: with "
            f"{roster.CLIS[b].short} installed in a project, {roster.CLIS[a].short} sessions there "
            f"pay its skill listing too (+{n})."
            for (a, b), n in fp.cross_listed.items()
        ),
        "On-demand skills (not installed; the hub runs `maestro skill <name>` when a step needs one): "
        + ", ".join(f"{n} {t}" for n, t in fp.skills.items())
        + f". Installed as host skills they would add {fp.skills_if_native} tokens to every session of each host.",
    ]
    problems = fp.problems()
    lines.append("Over budget: " + "; ".join(problems) + "." if problems else "All within budget.")
    return "\n".join(lines)
