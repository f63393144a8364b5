from __future__ import annotations

from maestro.agents.catalog import scan_agents
from maestro.agents.permissions import check_permissions
from maestro.agents.tiers import TIER_TOOLS

from .helpers import persona


def problems(settings):
    scan = scan_agents(settings)
    return [(f.agent, f.problem) for f in check_permissions(scan.agents, scan.bundled)]


def test_bundled_roster_keeps_least_privilege(settings_for):
    # The notes' validate-agent-permissions script, as a test.
    assert problems(settings_for()) == []


def test_project_override_may_not_widen_an_analysis_agent(settings_for, write_agent):
    write_agent("architect", persona("architect", list(TIER_TOOLS["read+write"])))
    found = problems(settings_for())
    assert (
        "architect",
        "replaces a read-only agent but is read+write: a project agent may narrow tools, never widen them",
    ) in found
    assert ("architect", "is an analysis agent and may not hold write or shell tools") in found


def test_project_override_may_narrow(settings_for, write_agent):
    write_agent("coder", persona("coder", list(TIER_TOOLS["read+write"])))
    assert problems(settings_for()) == []


def test_half_a_tier_is_not_a_declared_tier(settings_for, write_agent):
    write_agent(
        "patcher", persona("patcher", ["read_file", "glob", "search_file_content", "replace"])
    )
    [(agent, problem)] = problems(settings_for())
    assert (
        agent == "patcher"
        and "match no declared tier" in problem
        and "missing ['write_file']" in problem
    )


def test_web_search_only_for_read_only(settings_for, write_agent):
    write_agent("scout", persona("scout", [*TIER_TOOLS["read+shell"], "google_web_search"]))
    write_agent("reader", persona("reader", [*TIER_TOOLS["read-only"], "google_web_search"]))
    assert problems(settings_for()) == [
        ("scout", "google_web_search is only for read-only agents, and this one is read+shell")
    ]


def test_roster_drift_in_the_bundle_is_caught(settings_for):
    scan = scan_agents(settings_for())
    bundled = dict(scan.bundled)
    del bundled["tester"]
    reviewer = bundled["code-reviewer"]
    reviewer.tools = list(TIER_TOOLS["read+shell"])
    writer = bundled["technical-writer"]
    writer.tools = [*TIER_TOOLS["read-only"], "google_web_search"]
    found = [(f.agent, f.problem) for f in check_permissions(bundled, bundled)]
    assert ("tester", "missing from the bundled roster (tier full)") in found
    assert ("code-reviewer", "is read+shell but the roster declares read-only") in found
    assert ("technical-writer", "google_web_search is reserved for architect") in found
