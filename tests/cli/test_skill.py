import json

from maestro.install import invocation
from maestro.install.sources import ON_DEMAND_SKILLS


def test_lists_the_on_demand_skills(cli, project):
    res = cli("skill", "--json")
    assert res.code == 0
    names = [s["name"] for s in json.loads(res.out)["data"]["skills"]]
    assert names == list(ON_DEMAND_SKILLS)


def test_prints_a_skill_with_maestro_calls_pinned(cli, project):
    res = cli("skill", "recover")
    assert res.code == 0 and "# Recovering a failed or blocked task" in res.out
    assert "name:" not in res.out  # the body only, without frontmatter
    assert f"{invocation.resolve()} doctor" in res.out


def test_unknown_skill(cli, project):
    res = cli("skill", "maestro-juggle")
    assert res.code == 1 and "maestro-decompose" in res.err
