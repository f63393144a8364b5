import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maestro.errors import InstallError
from maestro.install import block

BODY = "/maestro:plan|status. State .ai/MAESTRO.md, log .ai/MAESTRO-LOG.md\n"


def test_render_is_markers_around_the_body():
    assert block.render("claude", BODY) == (
        "<!-- Maestro claude v1 -->\n/maestro:plan|status. State .ai/MAESTRO.md, log .ai/MAESTRO-LOG.md\n"
        "<!-- /Maestro -->"
    )


@pytest.mark.parametrize(
    "original",
    [
        "",
        "no newline at the end",
        "ends with a newline\n",
        "two\n\n",
        "crlf\r\nfile\r\n",
        "crlf without final newline\r\nlast",
        "lone cr at the end\r",
        "\n",
        "\ufeffBOM first line\n",
    ],
)
def test_remove_undoes_splice_exactly(original):
    spliced = block.splice(original, "claude", BODY)
    assert block.find(spliced, "claude") is not None
    assert block.remove(spliced, "claude") == original


def test_block_uses_the_files_line_endings():
    spliced = block.splice("a\r\nb\r\n", "gemini", BODY)
    assert (
        spliced
        == "a\r\nb\r\n\r\n<!-- Maestro gemini v1 -->\r\n"
        + BODY.rstrip("\n")
        + "\r\n<!-- /Maestro -->\r\n"
    )


def test_a_file_without_final_newline_gets_the_block_on_the_next_line():
    assert block.splice("last line", "codex", BODY).startswith(
        "last line\n<!-- Maestro codex v1 -->\n"
    )


def test_splice_replaces_an_existing_block_in_place():
    text = "top\n\n" + block.render("claude", "old text\n") + "\nbottom\n"
    spliced = block.splice(text, "claude", BODY)
    assert spliced == "top\n\n" + block.render("claude", BODY) + "\nbottom\n"
    assert block.splice(spliced, "claude", BODY) == spliced


def test_other_hosts_and_other_tools_blocks_are_left_alone():
    foreign = (
        "# Project\n<!-- SPECKIT START -->\nspec-kit things\n<!-- SPECKIT END -->\n\n"
        + block.render("codex", "codex stub\n")
        + "\n"
    )
    spliced = block.splice(foreign, "claude", BODY)
    assert spliced.startswith(foreign)
    assert block.find(spliced, "codex").body == "codex stub\n"
    assert block.remove(spliced, "claude") == foreign


def test_body_and_version_are_read_back():
    found = block.find("x\r\n" + block.render("claude", BODY, "\r\n") + "\r\n", "claude")
    assert found.version == 1 and found.body == BODY and found.eol == "\r\n"


def test_a_newer_version_is_reported_not_rewritten():
    text = "<!-- Maestro claude v7 -->\nfuture\n<!-- /Maestro -->\n"
    assert block.find(text, "claude").version == 7


def test_markers_must_be_whole_lines():
    text = "see `<!-- Maestro claude v1 -->` in the docs\n"
    assert block.find(text, "claude") is None


def test_an_unclosed_block_names_its_line():
    with pytest.raises(InstallError, match="line 2 has no end marker"):
        block.find("x\n<!-- Maestro claude v1 -->\ntext\n", "claude", where="CLAUDE.md")


@pytest.mark.parametrize(
    ("edited", "line"),
    [
        ("<!-- maestro claude v1 -->", 3),  # case changed
        ("<!-- Maestro claude v1-->", 3),  # a space lost
        ("<!-- Maestro claude v1 --> my note", 3),  # text added after it
        ("<!--Maestro claude v2-->", 3),  # version and spacing
        ("<!-- /maestro -->", 5),  # the end marker
        ("<!-- /Maestro --> ", 5),
    ],
)
def test_a_marker_edited_by_hand_names_its_line(edited, line):
    text = "mine\n\n" + block.render("claude", "a\n") + "\n"
    marker = block.END if line == 5 else block.begin_marker("claude")
    text = text.replace(marker, edited)
    with pytest.raises(InstallError, match=r"edited by hand") as caught:
        block.find(text, "claude", where="CLAUDE.md")
    assert caught.value.file == "CLAUDE.md" and caught.value.line == line
    assert edited.strip() in str(caught.value) and "<!-- Maestro claude v1 -->" in caught.value.fix
    with pytest.raises(InstallError):
        block.splice(text, "claude", BODY)
    with pytest.raises(InstallError):
        block.remove(text, "claude")


def test_an_end_marker_without_its_begin_marker_names_its_line():
    text = "mine\n\nwhere the begin marker was\nstub text\n<!-- /Maestro -->\n"
    with pytest.raises(InstallError, match="has no begin marker") as caught:
        block.splice(text, "claude", BODY, where="CLAUDE.md")
    assert caught.value.line == 5


@pytest.mark.parametrize(
    "text",
    [
        "<!-- Maestro notes: run the tests first -->\n",  # a person's own comment
        "<!-- maestro: see docs -->\n",
        "Use `<!-- /Maestro -->` to close a block.\n",  # not a whole line
        block.render("gemini", "g\n")
        + "\n"
        + block.render("codex", "c\n")
        + "\n",  # other hosts' blocks
    ],
)
def test_text_that_only_mentions_maestro_is_not_a_marker(text):
    assert block.find(text, "claude") is None
    assert block.remove(block.splice(text, "claude", BODY), "claude") == text


def test_two_blocks_for_one_host_are_refused():
    text = block.render("claude", "a\n") + "\n" + block.render("claude", "b\n") + "\n"
    with pytest.raises(InstallError, match="more than one"):
        block.find(text, "claude")


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(["a", " ", "\n", "\r", "é", "#"]), max_size=40),
    st.sampled_from(["claude", "gemini", "codex"]),
)
def test_round_trip_for_any_text(original, host):
    spliced = block.splice(original, host, BODY)
    assert block.remove(spliced, host) == original
    assert block.splice(spliced, host, BODY) == spliced


@pytest.mark.parametrize(
    ("original", "added", "expected"),
    [
        ("hello\r\nworld", "mine\n", "hello\r\nworld\r\nmine\n"),
        ("no newline", "# Notes", "no newline\n# Notes"),
        ("ends\n", "mine\n", "ends\nmine\n"),
        ("", "mine\n", "mine\n"),
    ],
)
def test_remove_never_joins_the_users_lines_around_the_block(original, added, expected):
    # Text added after the block is the user's: taking the block away must not glue its
    # first line onto the last line before the block.
    assert block.remove(block.splice(original, "claude", BODY) + added, "claude") == expected


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(["a", " ", "\n", "\r", "é"]), max_size=30),
    st.text(alphabet=st.sampled_from(["a", " ", "\n", "#"]), min_size=1, max_size=20).filter(
        lambda s: not s.startswith("\n")
    ),
)
def test_remove_keeps_text_added_after_the_block_on_its_own_line(original, added):
    spliced = block.splice(original, "claude", BODY)
    kept = block.remove(spliced + added, "claude")
    eol = block.eol_of(original)
    assert kept == (
        original + eol + added if original and not original.endswith("\n") else original + added
    )


@pytest.mark.parametrize("original", ["x", "x\n", "x\r\ny", ""])
def test_two_hosts_blocks_come_off_in_either_order(original):
    both = block.splice(block.splice(original, "claude", BODY), "gemini", BODY)
    assert block.remove(block.remove(both, "claude"), "gemini") == original
    assert block.remove(block.remove(both, "gemini"), "claude") == original
