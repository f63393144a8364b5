"""The one table module: cells escape and split back, tables render the same everywhere."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from maestro import tables

one_line = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=30).map(
    str.strip
)


@given(st.lists(one_line, min_size=1, max_size=5))
def test_split_row_undoes_escape(cells):
    assert tables.split_row(tables.row([tables.escape(c) for c in cells])) == cells


def test_a_backslash_is_doubled_only_where_it_would_escape():
    assert tables.escape(r"C:\tmp | a\|b \\ end") == r"C:\tmp \| a\\\|b \\\ end"
    assert tables.split_row(r"| C:\tmp \| a\\\|b \\\ end |") == [r"C:\tmp | a\|b \\ end"]


def test_newlines_are_br_and_read_back_only_when_asked():
    line = tables.row([tables.escape("a\nb")])
    assert line == "| a<br>b |"
    assert tables.split_row(line, breaks=True) == ["a\nb"] and tables.split_row(line) == ["a<br>b"]


def test_markdown_and_aligned_tables():
    assert tables.markdown(["A", "B"], [["x|y", ""]]) == ["| A | B |", "|---|---|", "| x\\|y | - |"]
    assert tables.separator(["Time", "Task"]) == "|------|------|"
    assert tables.aligned(["ID", "Title"], [["10", "a"], ["2", "bb"]]) == [
        "ID  Title",
        "10  a",
        "2   bb",
    ]


def test_aligned_paints_the_status_column_and_keeps_the_cells_inert():
    from maestro.formatting import Frame
    from maestro.tables import aligned

    head, row = aligned(("ID", "STATUS", "TITLE"), [["1", "failed", "a \x1b[2J title"]], status=1)
    assert isinstance(row, Frame) and not isinstance(head, Frame)
    assert row == "1   \x1b[31mfailed\x1b[0m  a \\x1b[2J title"
    assert aligned(("ID", "STATUS"), [["1", "pending"]], status=1)[1] == "1   pending"
