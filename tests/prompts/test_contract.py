from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from maestro import commands as registry
from maestro.commands import COMMANDS, CommandSpec
from maestro.errors import MaestroError
from maestro.prompts.sessionmanifest import (
    CAPABILITIES,
    MODES,
    SessionManifest,
    family,
)
from maestro.prompts.systemprompt import (
    enabled_commands,
    render_system_prompt,
)

# The modes a dispatched spoke has: the only ones given a system prompt.
SPOKE_MODES = [mode for mode in MODES if mode.startswith("coordinated-")]


def manifest_for(mode: str) -> SessionManifest:
    coordinated = mode.startswith("coordinated-")
    return SessionManifest(
        mode=mode,
        session_id="sess-child",
        run_id="run-1",
        coordinator_session_id="sess-parent" if coordinated else None,
    )


DIRECTIVE = {
    "subject": "Task 3",
    "message": "Keep the public API <unchanged>.",
    "from": "sess-parent",
}


@pytest.mark.parametrize("mode", SPOKE_MODES)
def test_system_prompt_snapshot(mode, xml_snapshot, pinned_commands):
    directive = DIRECTIVE if mode.startswith("coordinated-") else None
    assert render_system_prompt(manifest_for(mode), directive=directive) == xml_snapshot


@pytest.mark.parametrize("mode", SPOKE_MODES)
def test_session_context_and_directive_in_the_system_prompt(mode):
    root = ET.fromstring(render_system_prompt(manifest_for(mode), directive=DIRECTIVE))
    context = {child.tag: child.text for child in root.find("session_context")}
    coordinator = (
        {"coordinator_session_id": "sess-parent"} if mode.startswith("coordinated-") else {}
    )
    assert context == {"session_id": "sess-child", "mode": mode, **coordinator, "run_id": "run-1"}
    directive = root.find("coordinator_directive")
    assert (directive.get("from"), directive.get("subject"), directive.text) == (
        "sess-parent",
        "Task 3",
        DIRECTIVE["message"],
    )
    assert (
        ET.fromstring(render_system_prompt(SessionManifest(mode=mode))).find(
            "coordinator_directive"
        )
        is None
    )


@pytest.mark.parametrize("mode", SPOKE_MODES)
def test_office_commands_need_a_session_and_a_shell_and_take_the_modes_form(mode):
    office = {"session", "mail", "task"}

    def shown(manifest):
        return {
            c.get("name"): c.get("syntax")
            for c in ET.fromstring(render_system_prompt(manifest)).iter("command")
        }

    with_session = shown(manifest_for(mode))
    assert office <= set(with_session)
    assert not office & set(shown(SessionManifest(mode=mode)))
    if family(mode) == "execute":
        assert not office & set(shown(SessionManifest(mode=mode, session_id="s1", shell=False)))
        assert "send --to-coordinator --type query|blocked" in with_session["mail"]
        assert "`maestro task report blocked" in render_system_prompt(manifest_for(mode))
    else:
        assert "broadcast --scope my-workers" in with_session["mail"]
        assert "stop <id> --reason <text>" in with_session["session"]


@pytest.mark.parametrize("mode", SPOKE_MODES)
def test_rendered_prompts_are_well_formed_xml(mode):
    manifest = manifest_for(mode)
    system = ET.fromstring(render_system_prompt(manifest))
    assert (system.tag, system.get("mode"), system.get("strategy"), system.get("version")) == (
        "maestro_system_prompt",
        mode,
        manifest.strategy,
        "3.0",
    )
    assert system.findtext("identity/profile") == mode


def test_unknown_mode_and_default_strategy():
    with pytest.raises(MaestroError, match="unknown mode 'boss'"):
        SessionManifest(mode="boss")
    assert SessionManifest(mode="worker").strategy == "simple"
    assert SessionManifest(mode="coordinated-coordinator").strategy == "default"


def test_each_mode_has_its_own_identity_and_workflow():
    identities, workflows = set(), set()
    for mode in SPOKE_MODES:
        root = ET.fromstring(render_system_prompt(SessionManifest(mode=mode)))
        identities.add(root.findtext("identity/instruction"))
        workflows.add(tuple(p.get("name") for p in root.find("workflow")))
    assert len(identities) == 2
    # A sub-coordinator (a coordinating task's spoke) spawns subtasks and reports up before it ends.
    sub = (
        "analyze",
        "decompose",
        "spawn",
        "monitor",
        "recover",
        "verify",
        "report_to_parent",
        "complete",
    )
    assert workflows == {sub, ("init", "execute", "complete")}


def test_coordinated_worker_reports_to_its_coordinator_without_conditionals():
    coordinated = render_system_prompt(SessionManifest(mode="coordinated-worker"))
    assert "report the blocker to your coordinator" in coordinated
    assert " if " not in coordinated.split("<workflow>")[1].lower()


@pytest.mark.parametrize("mode", SPOKE_MODES)
def test_commands_are_the_registry_entries_the_capabilities_allow(mode):
    manifest = SessionManifest(mode=mode, session_id="s1")
    root = ET.fromstring(render_system_prompt(manifest))
    shown = {c.get("name"): c.get("syntax") for c in root.iter("command")}
    expected = {
        spec.name: spec.syntax_for(mode)
        for spec in COMMANDS
        if manifest.capabilities[spec.capability or "can_run_commands"] and not spec.hub_only
    }
    assert shown == expected
    # A dispatched spoke never re-enters the hub's commands, nor sets Maestro up.
    assert not {"plan", "run", "wait", "review", "install"} & set(shown)
    assert ("task spawn" in shown["task"]) == (mode == "coordinated-coordinator")


def test_every_registry_capability_is_in_the_vector():
    assert {spec.capability for spec in COMMANDS if spec.capability} <= set(CAPABILITIES)


def test_a_command_added_to_the_registry_appears_without_renderer_changes(monkeypatch):
    extra = CommandSpec(
        "memo",
        "maestro.cli.memo",
        "Leave a memo.",
        'maestro memo --to <id> "<text>"',
        "office",
        "can_report_task_level",
    )
    monkeypatch.setattr(registry, "COMMANDS", COMMANDS + (extra,))
    text = render_system_prompt(SessionManifest(mode="coordinated-worker", session_id="s1"))
    group = ET.fromstring(text).find("commands/group[@name='office']")
    assert group is not None
    assert group.find("command[@name='memo']").get("syntax") == 'maestro memo --to <id> "<text>"'
    quiet = SessionManifest(mode="coordinated-worker", shell=False)
    assert "memo" not in [spec.name for spec in enabled_commands(quiet)]


@pytest.mark.parametrize("mode", SPOKE_MODES)
def test_workflow_names_only_commands_it_lists(mode):
    text = render_system_prompt(SessionManifest(mode=mode, session_id="s1"))
    workflow = text.split("<workflow>")[1].split("</workflow>")[0]
    listed = {c.get("name") for c in ET.fromstring(text).iter("command")}
    named = set(re.findall(r"`maestro (\w+)", workflow))
    assert named and named <= listed


def test_capabilities_are_derived_once_from_the_manifest():
    coordinator = SessionManifest(mode="coordinator").capabilities
    assert (
        coordinator["can_spawn_sessions"]
        and coordinator["can_edit_tasks"]
        and not coordinator["can_use_queue"]
    )
    worker = SessionManifest(mode="worker").capabilities
    assert not worker["can_use_queue"] and not worker["can_spawn_sessions"]
    assert list(coordinator) == list(CAPABILITIES)


def test_no_shell_means_no_commands_and_coordinators_need_one():
    manifest = SessionManifest(mode="coordinated-worker", shell=False)
    assert not any(manifest.capabilities.values())
    assert "<commands>none: report through your final answer</commands>" in render_system_prompt(
        manifest
    )
    with pytest.raises(MaestroError, match="needs to run commands"):
        SessionManifest(mode="coordinator", shell=False)


def test_xml_escaping_round_trips_hostile_text():
    hostile = "Fix <&\"> and 'quotes' in a </task> tag\x01"
    manifest = SessionManifest(
        mode="coordinated-worker", agent=hostile, coordinator_session_id='s"<1>'
    )
    directive = {"subject": hostile, "message": hostile, "from": "s1"}
    text = render_system_prompt(manifest, directive=directive)
    assert '<&">' not in text
    root = ET.fromstring(text)
    clean = hostile.replace("\x01", "\ufffd")
    assert root.findtext("identity/agent") == clean
    assert root.find("coordinator_directive").get("subject") == clean
    assert root.findtext("coordinator_directive") == clean
    assert root.findtext("session_context/coordinator_session_id") == 's"<1>'
