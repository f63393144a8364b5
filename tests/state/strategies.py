"""Hypothesis strategies for valid plans: every value the plan file format can hold."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import strategies as st

from maestro.state import model as m

# Text people and CLIs write: any printable character, tabs, inner spaces, Markdown
# syntax characters on purpose.
_CHARS = st.characters(
    blacklist_categories=("Cs", "Cc", "Zl", "Zp"),
    blacklist_characters="\u0085",
)
_MARKDOWNISH = st.sampled_from(
    [
        "#",
        "##",
        "- ",
        "* ",
        "1. ",
        "`",
        "```",
        "~~~",
        "|",
        "\\",
        "**",
        ":",
        "<!--",
        "-->",
        "<div>",
        "> ",
        "---",
        "===",
        "    ",
        "\t",
        "[x]",
        "Task 1: ",
        "[major] ",
        "none",
        "$",
        "(estimate)",
    ]
)


def _clean(text: str) -> str:
    return text.strip()


line_text = (
    st.lists(
        st.one_of(st.text(_CHARS, min_size=1, max_size=8), _MARKDOWNISH), min_size=1, max_size=6
    )
    .map("".join)
    .map(_clean)
    .filter(bool)
)
multi_text = (
    st.lists(
        st.one_of(line_text, st.just(""), line_text.map(lambda s: "  " + s)), min_size=1, max_size=5
    )
    .map("\n".join)
    .map(_clean)
    .filter(bool)
)
names = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)
isos = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))
stamps = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)).map(
    lambda d: d.strftime("%Y-%m-%d %H:%M UTC")
)
costs = st.one_of(
    st.none(), st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
)
counts = st.integers(min_value=0, max_value=10**9)
usages = st.builds(m.Usage, counts, counts, counts)
paths = st.lists(
    st.one_of(st.from_regex(r"[A-Za-z0-9_./-]{1,20}", fullmatch=True), line_text), max_size=3
)


def task_ids(n: int) -> list[str]:
    return [str(i + 1) if i % 4 else f"{i // 4 + 1}.{i % 3 + 1}" for i in range(n)]


def _cost_pair(draw):  # type: ignore[no-untyped-def]  # @st.composite supplies draw
    cost = draw(costs)
    return cost, (draw(st.booleans()) if cost is not None else False)


@st.composite
def receipts(draw):  # type: ignore[no-untyped-def]  # @st.composite supplies draw
    return m.Receipt(
        diff_stat=draw(st.one_of(st.just(""), line_text)),
        files_changed=draw(paths),
        validation=draw(st.one_of(st.none(), line_text)),
        validation_exit=draw(st.one_of(st.none(), st.integers(-255, 255))),
        commit=draw(st.one_of(st.none(), line_text)),
        diff_sha=draw(st.one_of(st.none(), st.from_regex(r"[0-9a-f]{64}", fullmatch=True))),
    )


@st.composite
def tasks(draw, task_id: str, earlier: list[str]):  # type: ignore[no-untyped-def]  # @st.composite supplies draw
    opt = lambda s: draw(st.one_of(st.none(), s))
    cost, estimated = _cost_pair(draw)
    return m.Task(
        id=task_id,
        title=draw(line_text),
        status=draw(st.sampled_from(m.STATUSES)),
        specialist=opt(st.sampled_from(m.SPECIALISTS)),
        agent=opt(names),
        tool=opt(st.sampled_from(m.TOOLS)),
        depends=draw(st.lists(st.sampled_from(earlier), max_size=3)) if earlier else [],
        files=draw(paths),
        criteria=draw(st.lists(multi_text, max_size=3)),
        validation=opt(line_text),
        risk=opt(st.sampled_from(m.RISKS)),
        result=opt(multi_text),
        attempts=draw(st.integers(0, 9)),
        usage=draw(usages),
        cost=cost,
        cost_estimated=estimated,
        started=opt(isos),
        finished=opt(isos),
        session=opt(line_text),
        pid=opt(st.integers(1, 2**22)),
        run_id=opt(names),
        receipt=opt(receipts()),
        review=opt(st.sampled_from(m.REVIEW_STATES)),
        downstream_context=opt(multi_text),
    )


findings = st.builds(
    m.Finding,
    multi_text,
    st.one_of(st.none(), st.sampled_from(task_ids(6))),
    st.one_of(st.none(), st.sampled_from(m.SEVERITIES)),
)


@st.composite
def challenges(draw, cid: str):  # type: ignore[no-untyped-def]  # @st.composite supplies draw
    cost, estimated = _cost_pair(draw)
    keys = draw(st.lists(st.sampled_from([k for k, _ in m.CHALLENGE_CATEGORIES]), unique=True))
    return m.Challenge(
        id=cid,
        challenger=draw(line_text),
        time=draw(isos),
        parsed=draw(st.booleans()),
        findings={
            k: draw(st.lists(findings.map(lambda f: m.Finding(f.text, f.task)), max_size=3))
            for k in keys
        },
        usage=draw(usages),
        cost=cost,
        cost_estimated=estimated,
        raw=draw(
            st.one_of(
                st.none(),
                st.text(
                    st.characters(
                        blacklist_categories=("Cs",),
                        blacklist_characters="\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\x00",
                    ),
                    max_size=80,
                ),
            )
        ),
    )


@st.composite
def reviews(draw, rid: str):  # type: ignore[no-untyped-def]  # @st.composite supplies draw
    cost, estimated = _cost_pair(draw)
    return m.Review(
        id=rid,
        task=draw(st.sampled_from(task_ids(6))),
        reviewer=draw(names),
        round=draw(st.integers(0, 5)),
        time=draw(isos),
        verdict=draw(st.one_of(st.none(), st.sampled_from(m.VERDICTS))),
        findings=draw(st.lists(findings, max_size=3)),
        usage=draw(usages),
        cost=cost,
        cost_estimated=estimated,
        diff_sha=draw(st.one_of(st.none(), st.from_regex(r"[0-9a-f]{12}", fullmatch=True))),
        outcome=draw(
            st.one_of(
                st.none(),
                st.sampled_from(
                    ("accepted", "revising", "blocked", "needs-human", "format-failure")
                ),
            )
        ),
    )


cells = st.one_of(st.just(""), line_text)
log_entries = st.builds(
    m.LogEntry,
    cells,
    cells,
    cells,
    cells,
    cells,
    st.one_of(st.none(), counts),
    st.one_of(st.none(), line_text),
)


@st.composite
def plans(draw, max_tasks: int = 6):  # type: ignore[no-untyped-def]  # @st.composite supplies draw
    ids = task_ids(draw(st.integers(0, max_tasks)))
    return m.Plan(
        goal=draw(multi_text),
        tasks=[draw(tasks(tid, ids[:i])) for i, tid in enumerate(ids)],
        challenges=[draw(challenges(str(i + 1))) for i in range(draw(st.integers(0, 2)))],
        reviews=[draw(reviews(f"R{i + 1}")) for i in range(draw(st.integers(0, 2)))],
        log=draw(st.lists(log_entries, max_size=4)),
        source=draw(st.one_of(st.none(), st.builds(m.Source, names, stamps))),
        title=draw(st.one_of(st.just("Maestro Orchestration"), line_text)),
    )
