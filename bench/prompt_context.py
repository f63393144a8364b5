"""Tokens of a mid-plan delegation prompt: context chain from dependencies only, against
the same prompt with every completed task's Downstream Context injected.

The fixture is a 20-task plan (a billing service) where tasks 1-13 are done, each with a
Downstream Context of realistic size; Task 14 depends on Tasks 9 and 12 only.

    python bench/prompt_context.py
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from maestro import clis
from maestro.agents.catalog import Catalog, scan_agents
from maestro.config import load_settings
from maestro.prompts.delegation import build_delegation, context_chain
from maestro.state.model import Plan, Task
from maestro.tokens import count_tokens

clis.load({})  # the roster: the built-in CLIs

ROOT = Path("/work/billing")
MID_TASK = "14"

# id, title, agent, depends, files, interface, pattern, integration, warning
TASKS = [
    (
        "1",
        "Design the billing domain",
        "architect",
        [],
        [],
        "Invoice, LineItem, Customer, Plan aggregates (docs/design/billing.md)",
        "hexagonal: domain/ has no framework imports",
        "ports in billing/ports.py",
        "currency is per customer, never per line",
    ),
    (
        "2",
        "Design the billing REST API",
        "api-designer",
        ["1"],
        [],
        "POST /v1/invoices, GET /v1/invoices/{id}, POST /v1/invoices/{id}/finalize",
        "cursor pagination with ?after=",
        "api/openapi.yaml paths /v1/invoices*",
        "finalize is idempotent by Idempotency-Key header",
    ),
    (
        "3",
        "Create the schema and migrations",
        "data-engineer",
        ["1"],
        ["migrations/0007_billing.py"],
        "tables invoices, line_items, customers with FK line_items.invoice_id",
        "migrations reversible with down()",
        "billing/repo.py reads through SQLAlchemy models",
        "amount columns are NUMERIC(12,2), never float",
    ),
    (
        "4",
        "Implement domain models",
        "coder",
        ["1"],
        ["billing/domain.py"],
        "class Invoice(add_line(item) -> None, total() -> Money, finalize() -> None)",
        "value objects are frozen dataclasses",
        "billing/domain.py imported by service and repo",
        "finalize() raises InvoiceLocked when already final",
    ),
    (
        "5",
        "Implement the repository",
        "coder",
        ["3", "4"],
        ["billing/repo.py"],
        "InvoiceRepo.get(id) -> Invoice, save(invoice) -> None, list(after, limit)",
        "repositories return domain objects, never rows",
        "billing/service.py takes InvoiceRepo in its constructor",
        "list() orders by created_at then id for stable cursors",
    ),
    (
        "6",
        "Implement money and tax rules",
        "coder",
        ["4"],
        ["billing/money.py", "billing/tax.py"],
        "Money(amount: Decimal, currency: str); tax_for(customer, lines) -> Money",
        "rounding with ROUND_HALF_EVEN once, at the invoice total",
        "domain.Invoice.total() calls tax_for",
        "tax tables are loaded once at start from config/tax.yaml",
    ),
    (
        "7",
        "Wire the invoice service",
        "coder",
        ["5", "6"],
        ["billing/service.py"],
        "InvoiceService.create(customer_id, lines) -> Invoice; finalize(id, key) -> Invoice",
        "service methods run in one transaction via uow()",
        "api handlers call InvoiceService only",
        "finalize(key) stores the key for 24h to dedupe retries",
    ),
    (
        "8",
        "Build the REST handlers",
        "coder",
        ["2", "7"],
        ["api/invoices.py"],
        "routes registered by register_invoice_routes(app)",
        "errors map to the project's Problem JSON shape",
        "api/app.py calls register_invoice_routes",
        "validation errors are 422 with field paths",
    ),
    (
        "9",
        "Add payment provider adapter",
        "coder",
        ["7"],
        ["billing/payments.py"],
        "PaymentGateway.charge(invoice, method) -> ChargeResult; refund(charge_id, amount)",
        "adapters behind billing/ports.py protocols",
        "service.finalize() charges through PaymentGateway",
        "provider webhooks may arrive before the charge call returns",
    ),
    (
        "10",
        "Write domain unit tests",
        "tester",
        ["4", "6"],
        ["tests/billing/test_domain.py"],
        "fixtures invoice_factory, customer_eur in tests/billing/conftest.py",
        "AAA layout, one behaviour per test",
        "conftest fixtures reused by later test tasks",
        "tax tests pin config/tax.yaml through the tax_table fixture",
    ),
    (
        "11",
        "Review domain and repository",
        "code-reviewer",
        ["5", "6"],
        [],
        "none",
        "none",
        "none",
        "major: repo.list() loses items with equal created_at across pages unless id is in the cursor",
    ),
    (
        "12",
        "Design webhook handling",
        "architect",
        ["9"],
        [],
        "WebhookEvent(type, id, payload); handle_event(event) -> None in billing/webhooks.py",
        "events stored first (inbox table), processed after commit",
        "POST /v1/webhooks/payments verified by HMAC header",
        "events can repeat: processing keyed by event id",
    ),
    (
        "13",
        "Document the billing API",
        "technical-writer",
        ["2", "8"],
        ["docs/billing-api.md"],
        "none",
        "examples use curl with the sandbox key",
        "docs/index.md links billing-api.md",
        "finalize example must show the Idempotency-Key header",
    ),
    (
        "14",
        "Implement payment webhooks",
        "coder",
        ["9", "12"],
        ["billing/webhooks.py", "api/webhooks.py"],
        "",
        "",
        "",
        "",
    ),
    (
        "15",
        "Test payments and webhooks",
        "tester",
        ["14"],
        ["tests/billing/test_webhooks.py"],
        "",
        "",
        "",
        "",
    ),
    ("16", "Security review of webhooks", "security-engineer", ["14"], [], "", "", "", ""),
    ("17", "Profile invoice listing", "performance-engineer", ["8"], [], "", "", "", ""),
    (
        "18",
        "CI pipeline for billing",
        "devops-engineer",
        ["10", "15"],
        [".github/workflows/billing.yml"],
        "",
        "",
        "",
        "",
    ),
    (
        "19",
        "Refactor service transactions",
        "refactor",
        ["16", "17"],
        ["billing/service.py"],
        "",
        "",
        "",
        "",
    ),
    (
        "20",
        "Final documentation pass",
        "technical-writer",
        ["19"],
        ["docs/billing-api.md"],
        "",
        "",
        "",
        "",
    ),
]


def downstream(
    interface: str, pattern: str, integration: str, warning: str, files: list[str]
) -> str:
    made = ", ".join(str(ROOT / f) for f in files) or "none (analysis)"
    return "\n".join(
        [
            f"- Key Interfaces Introduced: {interface}",
            f"- Patterns Established: {pattern}",
            f"- Integration Points: {integration}; files: {made}",
            (
                "- Assumptions: the project's settings module provides database and provider credentials; "
                "the test database is created per session by the existing fixtures"
            ),
            f"- Warnings: {warning}",
        ]
    )


def plan20() -> Plan:
    tasks = []
    for tid, title, agent, depends, files, interface, pattern, integration, warning in TASKS:
        done = int(tid) < int(MID_TASK)
        tasks.append(
            Task(
                tid,
                title,
                status="done" if done else "pending",
                agent=agent,
                depends=list(depends),
                files=list(files),
                criteria=[
                    f"{title} meets the design in docs/design/billing.md",
                    "the validation command passes",
                ],
                validation="pytest -q tests/billing" if files else None,
                downstream_context=downstream(interface, pattern, integration, warning, files)
                if done
                else None,
            )
        )
    return Plan(goal="Add invoicing and payments to the billing service", tasks=tasks)


def main() -> None:
    settings = load_settings(ROOT, {})
    scan = scan_agents(settings)
    catalog = Catalog(scan.agents)
    plan = plan20()
    task = plan.task(MID_TASK)
    agent = catalog.resolve(task.agent, "gemini")
    delegation = build_delegation(
        plan, task, agent, project_root=ROOT, tool="gemini", enforced_by_cli=False
    )
    done = [t.id for t in plan.tasks if t.status == "done"]
    chain_deps = context_chain(plan, task)
    chain_all = context_chain(plan, replace(task, depends=done))
    assert chain_deps in delegation.prompt
    flooded = delegation.prompt.replace(chain_deps, chain_all)

    deps_tokens = count_tokens(delegation.prompt)
    all_tokens = count_tokens(flooded)
    system_tokens = count_tokens(delegation.system)
    print(
        f"plan: {len(plan.tasks)} tasks, {len(done)} done; Task {task.id} ({task.agent}) depends on {', '.join(task.depends)}"
    )
    print(
        f"delegation prompt, context from its dependencies only:  {deps_tokens:>6} tokens (cl100k)"
    )
    print(
        f"same prompt, every completed task's context injected:   {all_tokens:>6} tokens (cl100k)"
    )
    print(
        f"ratio (all / dependencies only):                         {all_tokens / deps_tokens:>6.2f}x"
    )
    print(f"context chain alone: {count_tokens(chain_deps)} vs {count_tokens(chain_all)} tokens")
    print(f"system prompt (XML contract + persona), same in both:    {system_tokens:>6} tokens")


if __name__ == "__main__":
    main()
