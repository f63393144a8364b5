"""Token counting with cl100k, offline.

tiktoken downloads its encodings on first use, which cannot work without network, so
the ``cl100k_base`` ranks ship in this package (``maestro/data/cl100k_base.tiktoken``,
the file tiktoken itself downloads, under tiktoken's MIT licence) and are checked
against the sha256 tiktoken pins for it before use. The pattern and special tokens are
tiktoken's own for cl100k_base (``tiktoken_ext/openai_public.py``).
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from maestro.errors import MaestroError

ENCODING = "cl100k_base"
RANKS = Path(__file__).parent / "data" / "cl100k_base.tiktoken"
RANKS_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def load_ranks(path: Path = RANKS) -> dict[bytes, int]:
    """The byte-pair ranks of a ``.tiktoken`` file (a base64 token and its rank a line),
    refused unless the file is the one tiktoken pins."""
    raw = path.read_bytes()
    if hashlib.sha256(raw).hexdigest() != RANKS_SHA256:
        raise MaestroError(
            f"{path} is not the cl100k_base data this Maestro ships (its sha256 differs).",
            "reinstall Maestro; the file is part of the package.",
        )
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in raw.splitlines() if line)
    }


@lru_cache(maxsize=1)
def _encoding() -> Any:
    # local: tiktoken takes 10 ms to import, and `maestro status` imports this module
    # without counting a token.
    import tiktoken

    return tiktoken.Encoding(
        ENCODING, pat_str=PATTERN, mergeable_ranks=load_ranks(), special_tokens=SPECIAL_TOKENS
    )


def count_tokens(text: str) -> int:
    if not text:
        return 0
    return len(_encoding().encode(text, disallowed_special=()))
