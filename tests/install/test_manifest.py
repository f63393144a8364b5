import json

import pytest

from maestro.errors import InstallError
from maestro.install.manifest import FileRecord, Install, Manifest, load, parse, sha256


def sample(path):
    manifest = Manifest(path)
    manifest.put(
        Install(
            "codex",
            "files",
            "user",
            "/h/.codex",
            "0.1.0",
            "/v/bin/maestro",
            files=[
                FileRecord("skills/maestro/SKILL.md", sha256("b")),
                FileRecord("a.md", sha256("a")),
            ],
            blocks=[FileRecord("AGENTS.md", sha256("c"), True)],
            dirs=["skills/maestro", "skills"],
        )
    )
    manifest.put(Install("claude", "files", "user", "/h/.claude", "0.1.0", "/v/bin/maestro"))
    return manifest


def test_round_trip_and_canonical_bytes(tmp_path):
    manifest = sample(tmp_path / "m.json")
    text = manifest.render()
    again = parse(text, tmp_path / "m.json")
    assert again.render() == text
    assert [i["host"] for i in json.loads(text)["installs"]] == ["claude", "codex"]
    assert again.get("codex", "files").blocks[0].created is True


def test_save_twice_keeps_the_file_untouched(tmp_path):
    manifest = sample(tmp_path / "m.json")
    manifest.save()
    before = (tmp_path / "m.json").stat().st_mtime_ns
    load(tmp_path / "m.json").save()
    assert (tmp_path / "m.json").stat().st_mtime_ns == before


def test_empty_manifest_is_deleted(tmp_path):
    manifest = sample(tmp_path / "m.json")
    manifest.save()
    manifest.drop("claude", "files")
    manifest.drop("codex", "files")
    manifest.save()
    assert not (tmp_path / "m.json").exists()


def test_missing_manifest_is_empty(tmp_path):
    assert load(tmp_path / "none.json").installs == []


def test_newer_format_is_refused_with_upgrade_hint(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"format": 2, "installs": []}))
    with pytest.raises(InstallError, match="newer") as caught:
        load(path)
    assert "upgrade Maestro" in str(caught.value)


@pytest.mark.parametrize(
    "text, where",
    [
        ("{not json", "not valid JSON"),
        ('{"format": 1, "installs": [{"host": "vim"}]}', "installs/0"),
        (
            (
                '{"format": 1, "installs": [{"host": "claude", "form": "files", "scope": "project", "root": ".", '
                '"maestro": "0.1.0", "files": [{"path": "x", "sha256": "short"}], "blocks": [], "dirs": []}]}'
            ),
            "sha256",
        ),
    ],
)
def test_malformed_manifest_names_the_problem(tmp_path, text, where):
    path = tmp_path / "m.json"
    path.write_text(text)
    with pytest.raises(InstallError, match=where) as caught:
        load(path)
    assert caught.value.file == str(path)
