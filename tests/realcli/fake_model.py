"""A loopback stand-in for the three vendors' model APIs, for running the real host CLIs
offline (HOSTS.md section 4).

It records every request (method, path, decoded JSON body) and answers in each API's
streaming format: Anthropic Messages (``POST /v1/messages``), Gemini
(``:streamGenerateContent`` / ``:generateContent``) and OpenAI Responses
(``POST /v1/responses``). A test may script the answers with ``reply``: a function of
(api, body) returning one of

- text: the model's final answer;
- ``ToolCall``: run a shell command with the host's own shell tool;
- ``WriteFile``: write a file with the host's own write tool (Claude ``Write``, Gemini
  ``write_file``, Codex ``apply_patch``);
- ``Call``: call any tool the host offers, by its own name, with these arguments (a
  subagent: Claude ``Agent``, Gemini ``invoke_agent``, Codex ``spawn_agent``);
- ``HttpError``: fail the request with that HTTP status, in the vendor's error format;
- ``Hang``: never answer (the request stays open until the client goes or the server stops).

``tool_results(api, body)`` gives what the host sent back for the tool calls so far, so a
reply can write first and answer once the write came back (or was refused). Every answer
reports ``usage`` tokens; ``reported`` lists what each answered request reported.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

DEFAULT_TEXT = "FAKE-REPLY: hello from the fake model server."


@dataclass
class ToolCall:
    """Ask the host to run one shell command with its own shell tool. ``options``: the
    tool's other arguments (Claude's Bash ``timeout``, Codex's ``yield_time_ms``).
    ``poll``: a Codex session to poll with ``write_stdin`` instead (``command`` unused)."""

    command: str
    options: dict[str, Any] = field(default_factory=dict)
    poll: int | None = None


@dataclass
class WriteFile:
    """Ask the host to write ``content`` to ``path`` (absolute) with its own write tool."""

    path: str
    content: str


@dataclass
class Call:
    """Ask the host to call its tool ``name`` with ``args``, as the host names them.
    ``namespace``: the Codex tool namespace it belongs to (a deferred tool's, such as
    ``multi_agent_v1``)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    namespace: str | None = None


@dataclass
class HttpError:
    """Answer the request with this HTTP status and the vendor's error body."""

    status: int
    message: str = ""


@dataclass
class Hang:
    """Never answer: keep the request open until the client goes away or the server stops."""


@dataclass
class Reported:
    """The usage one answered model request reported, in the vendor's own fields."""

    api: str
    input: int
    output: int


@dataclass
class Request:
    method: str
    path: str
    body: Any

    @property
    def text(self) -> str:
        return json.dumps(self.body, ensure_ascii=False) if self.body is not None else ""


Answer = "str | ToolCall | WriteFile | Call | HttpError | Hang"
Reply = Callable[[str, Any], Answer]

# Longest a Hang holds a request when the server is never stopped (a test's timeout is far shorter).
HANG_LIMIT_S = 600.0


@dataclass
class FakeModel:
    reply: Reply = field(default=lambda api, body: DEFAULT_TEXT)
    requests: list[Request] = field(default_factory=list)
    # Tokens every answer reports: (input, output).
    usage: tuple[int, int] = (100, 7)
    reported: list[Reported] = field(default_factory=list)
    # Requests a Hang answer is holding open right now.
    hanging: int = 0
    _server: ThreadingHTTPServer | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Self:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def model_requests(self) -> list[Request]:
        return [r for r in self.requests if r.method == "POST"]

    def seen(self, needle: str) -> bool:
        return any(needle in r.text for r in self.model_requests())

    def tokens(self) -> tuple[int, int]:
        """(input, output) summed over every answer the server gave."""
        return sum(r.input for r in self.reported), sum(r.output for r in self.reported)

    def report(self, api: str) -> dict[str, int]:
        """Record one answer's usage and return it."""
        self.reported.append(Reported(api, *self.usage))
        return {"input": self.usage[0], "output": self.usage[1]}

    def hang(self) -> None:
        self.hanging += 1
        try:
            self._stop.wait(HANG_LIMIT_S)
        finally:
            self.hanging -= 1


def tool_results(api: str, body: Any) -> list[str]:
    """What the host sent back for each tool call of the conversation so far, oldest first
    (a refused call comes back as its error text); api: anthropic, gemini or openai."""
    if not isinstance(body, dict):
        return []
    if api == "anthropic":
        return [
            _anthropic_text(b) for b in _anthropic_blocks(body) if b.get("type") == "tool_result"
        ]
    if api == "gemini":
        return [
            json.dumps(p["functionResponse"].get("response"))
            for p in _gemini_parts(body)
            if "functionResponse" in p
        ]
    outputs = [
        i
        for i in _openai_items(body)
        if i.get("type") in ("function_call_output", "custom_tool_call_output")
    ]
    return [
        o["output"] if isinstance(o.get("output"), str) else json.dumps(o.get("output"))
        for o in outputs
    ]


def apply_patch_add(path: str, content: str) -> str:
    """Codex's apply_patch input that creates ``path`` holding ``content``."""
    lines = "".join(f"+{line}\n" for line in content.splitlines())
    return f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n"


# The vendors' error bodies: (Anthropic error type, Gemini status, OpenAI type/code, message).
_ERRORS: dict[int, tuple[str, str, str, str]] = {
    401: ("authentication_error", "UNAUTHENTICATED", "invalid_api_key", "invalid x-api-key"),
    403: ("permission_error", "PERMISSION_DENIED", "permission_denied", "permission denied"),
    429: (
        "rate_limit_error",
        "RESOURCE_EXHAUSTED",
        "rate_limit_exceeded",
        "Rate limit reached; please try again later.",
    ),
    500: ("api_error", "INTERNAL", "server_error", "Internal server error."),
    529: ("overloaded_error", "UNAVAILABLE", "server_error", "Overloaded"),
}


def error_body(api: str, error: HttpError) -> dict[str, Any]:
    kind, status, code, message = _ERRORS.get(
        error.status, ("api_error", "UNKNOWN", "error", "error")
    )
    message = error.message or message
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    if api == "gemini":
        return {"error": {"code": error.status, "message": message, "status": status}}
    return {"error": {"message": message, "type": code, "param": None, "code": code}}


def _handler(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

        def do_HEAD(self) -> None:
            model.requests.append(Request("HEAD", self.path, None))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            model.requests.append(Request("GET", self.path, None))
            self._json(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = raw.decode("utf-8", "replace")
            model.requests.append(Request("POST", self.path, body))
            path = self.path.split("?")[0]
            if path.endswith("/v1/messages"):
                self._anthropic(body)
            elif ":streamGenerateContent" in path:
                self._gemini_stream(body)
            elif ":generateContent" in path:
                self._gemini_router(body)
            elif path.endswith("/responses"):
                self._openai(body)
            else:
                self._json(404, {"error": {"message": f"unknown path {path}"}})

        # -- plumbing -------------------------------------------------------------
        def _answer(self, api: str, body: Any) -> Any:
            """The scripted answer, or None once an error or a hang has been served."""
            answer = model.reply(api, body)
            if isinstance(answer, HttpError):
                self._json(answer.status, error_body(api, answer))
                return None
            if isinstance(answer, Hang):
                model.hang()
                self.close_connection = True
                return None
            return answer

        def _json(self, status: int, obj: Any) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _sse(self, events: list[tuple[str | None, Any]]) -> None:
            chunks = []
            for name, obj in events:
                head = f"event: {name}\n" if name else ""
                chunks.append(f"{head}data: {json.dumps(obj)}\n\n")
            data = "".join(chunks).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        # -- Anthropic Messages ---------------------------------------------------
        def _anthropic(self, body: Any) -> None:
            answer = self._answer("anthropic", body) if _has_user_turn(body) else DEFAULT_TEXT
            if answer is None:
                return
            if isinstance(answer, ToolCall) and _anthropic_last_command(body) == answer.command:
                answer = "done: " + _anthropic_last_tool_result(body)[:2000]
            tokens = model.report("anthropic")
            usage = {"input_tokens": tokens["input"], "output_tokens": tokens["output"]}
            if isinstance(answer, (ToolCall, WriteFile, Call)):
                name, args = (
                    ("Bash", {"command": answer.command, "description": "run", **answer.options})
                    if isinstance(answer, ToolCall)
                    else ("Write", {"file_path": answer.path, "content": answer.content})
                    if isinstance(answer, WriteFile)
                    else (answer.name, answer.args)
                )
                block: dict[str, Any] = {
                    "type": "tool_use",
                    "id": f"toolu_fake{_call_number(body)}",
                    "name": name,
                    "input": {},
                }
                delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
                stop = "tool_use"
            else:
                block = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": answer}
                stop = "end_turn"
            message = {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "claude"),
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            }
            if not body.get("stream"):
                content = [
                    {**block, "input": json.loads(delta["partial_json"])}
                    if stop == "tool_use"
                    else {"type": "text", "text": answer}
                ]
                self._json(200, {**message, "content": content, "stop_reason": stop})
                return
            self._sse(
                [
                    ("message_start", {"type": "message_start", "message": message}),
                    (
                        "content_block_start",
                        {"type": "content_block_start", "index": 0, "content_block": block},
                    ),
                    (
                        "content_block_delta",
                        {"type": "content_block_delta", "index": 0, "delta": delta},
                    ),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": tokens["output"]},
                        },
                    ),
                    ("message_stop", {"type": "message_stop"}),
                ]
            )

        # -- Gemini ---------------------------------------------------------------
        def _gemini_router(self, body: Any) -> None:
            text = json.dumps({"reasoning": "fake", "model_choice": "flash"})
            tokens = model.report("gemini")
            self._json(
                200,
                {
                    "candidates": [
                        {
                            "content": {"role": "model", "parts": [{"text": text}]},
                            "finishReason": "STOP",
                            "index": 0,
                        }
                    ],
                    "usageMetadata": {
                        "promptTokenCount": tokens["input"],
                        "candidatesTokenCount": tokens["output"],
                        "totalTokenCount": tokens["input"] + tokens["output"],
                    },
                },
            )

        def _gemini_stream(self, body: Any) -> None:
            answer = self._answer("gemini", body)
            if answer is None:
                return
            if isinstance(answer, ToolCall) and _gemini_last_command(body) == answer.command:
                answer = "done: " + _gemini_last_tool_result(body)[:2000]
            if isinstance(answer, ToolCall):
                part: dict[str, Any] = {
                    "functionCall": {
                        "name": "run_shell_command",
                        "args": {"command": answer.command, "description": "run", **answer.options},
                    }
                }
            elif isinstance(answer, WriteFile):
                part = {
                    "functionCall": {
                        "name": "write_file",
                        "args": {"file_path": answer.path, "content": answer.content},
                    }
                }
            elif isinstance(answer, Call):
                part = {"functionCall": {"name": answer.name, "args": answer.args}}
            else:
                part = {"text": answer}
            tokens = model.report("gemini")
            chunk = {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [part]},
                        "finishReason": "STOP",
                        "index": 0,
                    }
                ],
                "usageMetadata": {
                    "promptTokenCount": tokens["input"],
                    "candidatesTokenCount": tokens["output"],
                    "totalTokenCount": tokens["input"] + tokens["output"],
                },
            }
            self._sse([(None, chunk)])

        # -- OpenAI Responses -----------------------------------------------------
        def _openai(self, body: Any) -> None:
            answer = self._answer("openai", body)
            if answer is None:
                return
            if (
                isinstance(answer, ToolCall)
                and answer.poll is None
                and _openai_last_command(body) == answer.command
            ):
                answer = "done: " + _openai_last_tool_result(body)[:2000]
            call_id = f"call_fake{_call_number(body)}"
            if isinstance(answer, ToolCall):
                item: dict[str, Any] = {
                    "type": "function_call",
                    "id": f"fc_fake{_call_number(body)}",
                    "call_id": call_id,
                    "name": "exec_command" if answer.poll is None else "write_stdin",
                    "arguments": json.dumps(
                        {"cmd": answer.command, **answer.options}
                        if answer.poll is None
                        else {"session_id": answer.poll, "chars": "", **answer.options}
                    ),
                    "status": "completed",
                }
            elif isinstance(answer, Call) and answer.name == "tool_search":
                # Codex's search over its deferred tools is an item type of its own.
                item = {
                    "type": "tool_search_call",
                    "id": f"ts_fake{_call_number(body)}",
                    "call_id": call_id,
                    "execution": "client",
                    "arguments": answer.args,
                    "status": "completed",
                }
            elif isinstance(answer, Call):
                item = {
                    "type": "function_call",
                    "id": f"fc_fake{_call_number(body)}",
                    "call_id": call_id,
                    "name": answer.name,
                    "arguments": json.dumps(answer.args),
                    "status": "completed",
                    **({"namespace": answer.namespace} if answer.namespace else {}),
                }
            elif isinstance(answer, WriteFile):
                item = {
                    "type": "custom_tool_call",
                    "id": f"ctc_fake{_call_number(body)}",
                    "call_id": call_id,
                    "name": "apply_patch",
                    "input": apply_patch_add(answer.path, answer.content),
                    "status": "completed",
                }
            else:
                item = {
                    "type": "message",
                    "id": "msg_fake1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": answer, "annotations": []}],
                }
            tokens = model.report("openai")
            usage = {
                "input_tokens": tokens["input"],
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": tokens["output"],
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": tokens["input"] + tokens["output"],
            }
            events: list[tuple[str | None, Any]] = [
                (
                    "response.created",
                    {
                        "type": "response.created",
                        "response": {"id": "resp_fake", "status": "in_progress"},
                    },
                ),
                (
                    "response.output_item.added",
                    {"type": "response.output_item.added", "output_index": 0, "item": item},
                ),
            ]
            if item["type"] == "message":
                events.append(
                    (
                        "response.output_text.delta",
                        {
                            "type": "response.output_text.delta",
                            "item_id": item["id"],
                            "output_index": 0,
                            "content_index": 0,
                            "delta": answer,
                        },
                    )
                )
            events += [
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": 0, "item": item},
                ),
                (
                    "response.completed",
                    {
                        "type": "response.completed",
                        "response": {"id": "resp_fake", "status": "completed", "usage": usage},
                    },
                ),
            ]
            self._sse(events)

    return Handler


def _call_number(body: Any) -> int:
    """1 + the tool calls already in the conversation: each call gets its own id (a host
    keeps one result per id, so a repeated id would drop the earlier exchange)."""
    blocks = _anthropic_blocks(body) if isinstance(body, dict) and "messages" in body else []
    items = _openai_items(body) if isinstance(body, dict) and "input" in body else []
    calls = ("function_call", "custom_tool_call", "tool_search_call")
    return (
        1
        + sum(b.get("type") == "tool_use" for b in blocks)
        + sum(i.get("type") in calls for i in items)
    )


def _has_user_turn(body: Any) -> bool:
    return isinstance(body, dict) and bool(body.get("messages"))


def _anthropic_blocks(body: Any) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            blocks += [b for b in content if isinstance(b, dict)]
    return blocks


def _anthropic_last_command(body: Any) -> str | None:
    """The command of the last tool call already answered: asked again, the fake ends."""
    calls = [b for b in _anthropic_blocks(body) if b.get("type") == "tool_use"]
    return (
        (calls[-1].get("input") or {}).get("command")
        if calls and _anthropic_has_result(body)
        else None
    )


def _anthropic_has_result(body: Any) -> bool:
    return any(b.get("type") == "tool_result" for b in _anthropic_blocks(body))


def _anthropic_last_tool_result(body: Any) -> str:
    results = [b for b in _anthropic_blocks(body) if b.get("type") == "tool_result"]
    return _anthropic_text(results[-1])


def _anthropic_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def _gemini_parts(body: Any) -> list[dict[str, Any]]:
    return [
        p for c in body.get("contents") or [] for p in c.get("parts") or [] if isinstance(p, dict)
    ]


def _gemini_last_command(body: Any) -> str | None:
    calls = [p["functionCall"] for p in _gemini_parts(body) if "functionCall" in p]
    answered = any("functionResponse" in p for p in _gemini_parts(body))
    return (calls[-1].get("args") or {}).get("command") if calls and answered else None


def _gemini_last_tool_result(body: Any) -> str:
    results = [p["functionResponse"] for p in _gemini_parts(body) if "functionResponse" in p]
    return json.dumps(results[-1].get("response"))


def _openai_items(body: Any) -> list[dict[str, Any]]:
    items = body.get("input") if isinstance(body, dict) else None
    return [i for i in items or [] if isinstance(i, dict)]


def _openai_last_command(body: Any) -> str | None:
    calls = [i for i in _openai_items(body) if i.get("type") == "function_call"]
    answered = any(i.get("type") == "function_call_output" for i in _openai_items(body))
    if not calls or not answered:
        return None
    try:
        return json.loads(calls[-1].get("arguments") or "{}").get("cmd")
    except ValueError:
        return None


def _openai_last_tool_result(body: Any) -> str:
    results = [i for i in _openai_items(body) if i.get("type") == "function_call_output"]
    output = results[-1].get("output")
    return output if isinstance(output, str) else json.dumps(output)


if __name__ == "__main__":  # a server for poking at the CLIs by hand
    import time

    with FakeModel() as fake:
        print(fake.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
