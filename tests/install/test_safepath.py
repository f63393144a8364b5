import pytest

from maestro.errors import InstallError
from maestro.install.safepath import inside


@pytest.mark.parametrize("rel", ["../x", "a/../../x", "/etc/passwd", "", "a//b", "a\\..\\b"])
def test_relative_paths_only(tmp_path, rel):
    with pytest.raises(InstallError, match="refusing"):
        inside(tmp_path, rel)


def test_a_symlink_leading_out_is_refused(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / ".claude").symlink_to(outside)
    with pytest.raises(InstallError, match="leads outside"):
        inside(root, ".claude/commands/maestro/plan.md")


def test_a_symlinked_file_inside_is_followed(tmp_path):
    (tmp_path / "AGENTS.md").write_text("x")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")
    assert inside(tmp_path, "CLAUDE.md") == (tmp_path / "AGENTS.md").resolve()


def test_a_symlinked_root_is_fine(tmp_path):
    real = tmp_path / "dotfiles" / "claude"
    real.mkdir(parents=True)
    (tmp_path / ".claude").symlink_to(real)
    assert (
        inside(tmp_path / ".claude", "commands/maestro/plan.md")
        == real.resolve() / "commands/maestro/plan.md"
    )
