"""Token counts with the cl100k ranks shipped in the package, checked by sha256."""

import pytest

from maestro import tokens
from maestro.errors import MaestroError


def test_counts_are_tiktokens_cl100k():
    encoding = tokens._encoding()
    assert encoding.encode("hello world") == [15339, 1917]  # tiktoken's README
    assert encoding.encode("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]
    assert tokens.count_tokens("<|endoftext|>") == 7  # special tokens counted as text
    assert tokens.count_tokens("") == 0


def test_the_ranks_ship_in_the_package_and_no_other_encoding_is_needed():
    assert tokens.RANKS.is_file() and len(tokens.load_ranks()) == 100256


def test_ranks_that_are_not_the_pinned_file_are_refused(tmp_path):
    changed = tmp_path / "cl100k_base.tiktoken"
    changed.write_bytes(tokens.RANKS.read_bytes().replace(b" 0\n", b" 1\n", 1))
    with pytest.raises(MaestroError, match="sha256 differs"):
        tokens.load_ranks(changed)
