"""What reaches a worktree and what lands from one stays in the project, and the run says
what it is (issue 23: copies that follow links, links that lead out, refused commits,
work that cannot land)."""

from tests.engine.runkit import step, task, write_plan
from tests.engine.test_workspaces import commit_ignoring


def test_a_copy_never_follows_a_link_out_of_the_project_finding_3(cli, project, runenv, tmp_path):
    """An ignored `.env` that is a link to a file outside the project is not copied into
    the worktrees (its content would reach every spoke), and the run says so once, with
    the fix; a link to a file inside the project is copied as before."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    commit_ignoring(project, ".env\n.env.*\nconf/\n")
    (project / ".env").symlink_to(secret)
    (project / "conf").mkdir()
    (project / "conf" / "local.env").write_text("LOCAL=1\n")
    (project / ".env.local").symlink_to("conf/local.env")
    check = "test ! -e .env && grep -q LOCAL=1 .env.local && test -f src/m{}.py"
    write_plan(
        cli,
        project,
        [task(i, files=[f"src/m{i}.py"], validation=check.format(i)) for i in (1, 2)],
    )
    runenv.default("codex", step("src/m{task}.py"))
    res = cli("run")
    assert res.code == 0, res.out + res.err
    said = res.out + res.err
    assert said.count(".env is a symlink leading out of the project") == 1, said
    assert "workspace_copy" in said and "Traceback" not in said
    assert (project / ".env").is_symlink() and secret.read_text() == "TOP SECRET\n"
