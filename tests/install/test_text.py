from maestro.install import text


def test_host_tagged_lines():
    body = "all\n[claude] only claude\n[gemini,codex] the other two\nend\n"
    assert text.for_host(body, "claude") == "all\nonly claude\nend\n"
    assert text.for_host(body, "codex") == "all\nthe other two\nend\n"


def test_pin_replaces_maestro_commands_only():
    source = (
        "Run `maestro status --json`, then maestro run --detach. Not $maestro plan, /maestro:plan, "
        ".ai/maestro/report.md, maestro-recover, `maestro` alone or maestro itself."
    )
    pinned = text.pin_invocation(source, "/v/bin/maestro")
    assert pinned == (
        "Run `/v/bin/maestro status --json`, then /v/bin/maestro run --detach. Not $maestro plan, "
        "/maestro:plan, .ai/maestro/report.md, maestro-recover, `maestro` alone or maestro itself."
    )


def test_verb_references_follow_the_host():
    assert text.verb_refs("then `/maestro:run`.", "$maestro {verb}") == "then `$maestro run`."


def test_state_dir():
    assert (
        text.state_dir("see .ai/MAESTRO.md and x.ai/y", "state")
        == "see state/MAESTRO.md and x.ai/y"
    )
