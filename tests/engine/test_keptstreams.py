"""A reviewer's or challenger's kept stream: its description gets the record's id, even
when what lies there was garbled (the state folder is within a spoke's reach)."""

import json

import pytest

from maestro.engine.keptstreams import about_file, recorded, stream_file
from maestro.paths import ProjectPaths


@pytest.mark.parametrize("found", ["{not json", "[1, 2]", None])
def test_the_id_is_recorded_whatever_the_description_holds(tmp_path, found):
    stream = stream_file(ProjectPaths(tmp_path), "reviews", "review-t1-abc", task="1", round=1)
    about = about_file(stream)
    assert json.loads(about.read_text())["task"] == "1"
    if found is None:
        about.unlink()
    else:
        about.write_text(found)
    recorded(stream, "R3")
    written = json.loads(about.read_text())
    assert written["id"] == "R3" and written["session"] == "review-t1-abc"


def test_a_readable_description_keeps_what_it_says(tmp_path):
    stream = stream_file(ProjectPaths(tmp_path), "challenges", "challenge-x", cli="codex")
    recorded(stream, "C1")
    written = json.loads(about_file(stream).read_text())
    assert written["cli"] == "codex" and written["id"] == "C1"
