"""A JSON Schema check that costs little when the data is right.

Session manifests are checked on every write and read (a dispatch checks several) and
persona files on every catalog load, so both sit on the path from `maestro run` to its
first spoke. jsonschema is the authority on what is wrong and how to say it, but its import
alone takes about 50 ms. fastjsonschema compiles a schema to a Python function (a few ms,
once per process) that answers yes or no in microseconds. A yes is final; on a no,
jsonschema is imported and its findings are the verdict, so every message is jsonschema's
and nothing the compiled check might reject differently (``1.0`` as an integer, say) is
refused by it alone. tests/test_schemas.py holds the two to agreeing on generated data.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from typing import Any


class FastCheck:
    """``passes(data)``: True when ``data`` is valid for the schema ``build()`` returns;
    False means "ask jsonschema". ``build`` is called each time (a schema may follow the
    roster) and each different schema compiled once."""

    def __init__(self, build: Callable[[], dict[str, Any]]) -> None:
        self._build = build
        self._compiled: dict[str, Callable[[Any], Any]] = {}
        self._lock = threading.Lock()

    def passes(self, data: Any) -> bool:
        import fastjsonschema

        try:
            self._function()(data)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    def _function(self) -> Callable[[Any], Any]:
        schema = self._build()
        key = json.dumps(schema, sort_keys=True)
        with self._lock:
            if key not in self._compiled:
                import fastjsonschema

                # fastjsonschema knows drafts 4, 6 and 7: the keywords these schemas use
                # mean the same there as in 2020-12 (tests/test_schemas.py checks them).
                draft7 = {k: v for k, v in schema.items() if k != "$schema"}
                draft7["$schema"] = "http://json-schema.org/draft-07/schema#"
                self._compiled[key] = _load(draft7, fastjsonschema)
            return self._compiled[key]


def _load(schema: dict[str, Any], fastjsonschema: Any) -> Callable[[Any], Any]:
    """The schema's validating function. fastjsonschema writes Python source for it and
    Python compiles that (~5 ms a schema, in every process that checks one); the compiled
    code is kept in the user's cache folder (``marshal``, as ``.pyc`` files are) under a
    key of the schema, fastjsonschema's version and the interpreter's bytecode magic."""
    import hashlib
    import importlib.util
    import marshal

    from maestro.fsutil import read_own, write_cache
    from maestro.paths import user_cache_dir

    stamp = [schema, fastjsonschema.VERSION, importlib.util.MAGIC_NUMBER.hex()]
    key = hashlib.sha256(json.dumps(stamp, sort_keys=True).encode("utf-8")).hexdigest()[:32]
    path = user_cache_dir() / "schemas" / f"{key}.marshal"
    kept = read_own(path)
    if kept is not None:
        with contextlib.suppress(Exception):  # a cache that does not load is made again
            return _run(marshal.loads(kept))
    code = compile(fastjsonschema.compile_to_code(schema), f"<schema {key}>", "exec")
    write_cache(path, marshal.dumps(code), private=True)
    return _run(code)


def _run(code: Any) -> Callable[[Any], Any]:
    """Run fastjsonschema's compiled module (as its own ``compile`` does) and give its
    ``validate``."""
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # noqa: S102 - fastjsonschema's module, compiled from its own source
    validate: Callable[[Any], Any] = namespace["validate"]
    return validate
