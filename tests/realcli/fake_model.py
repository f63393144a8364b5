"""A loopback stand-in for the three vendors' model APIs, for running the real host CLIs
offline (HOSTS.md section 4).

It records every request (method, path, decoded JSON body) and answers in each API's
streaming format: Anthropic Messages (``POST /v1/messages``), Gemini
(``:streamGenerateContent`` / ``:generateContent``) and OpenAI Responses
(``POST /v1/responses``). A test may script the answers with ``reply``: a function of
(api, body) returning text, or a ``ToolCall`` to make the host run a shell command.
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
    """Ask the host to run one shell command with its own shell tool."""

    command: str


@dataclass
class Request:
    method: str
    path: str
    body: Any

    @property
    def text(self) -> str:
        return json.dumps(self.body, ensure_ascii=False) if self.body is not None else ""


Reply = Callable[[str, Any], "str | ToolCall"]


@dataclass
class FakeModel:
    reply: Reply = field(default=lambda api, body: DEFAULT_TEXT)
    requests: list[Request] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

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
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def model_requests(self) -> list[Request]:
        return [r for r in self.requests if r.method == "POST"]

    def seen(self, needle: str) -> bool:
        return any(needle in r.text for r in self.model_requests())


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
            answer = model.reply("anthropic", body) if _has_user_turn(body) else DEFAULT_TEXT
            if isinstance(answer, ToolCall) and _anthropic_last_command(body) == answer.command:
                answer = "done: " + _anthropic_last_tool_result(body)[:2000]
            usage = {"input_tokens": 100, "output_tokens": 7}
            if isinstance(answer, ToolCall):
                block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_fake{_call_number(body)}", "name": "Bash",
                                         "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps({"command": answer.command, "description": "run"})}
                stop = "tool_use"
            else:
                block = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": answer}
                stop = "end_turn"
            message = {"id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model", "claude"),
                       "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
            if not body.get("stream"):
                content = [{**block, "input": json.loads(delta["partial_json"])} if stop == "tool_use" else {"type": "text", "text": answer}]
                self._json(200, {**message, "content": content, "stop_reason": stop})
                return
            self._sse([
                ("message_start", {"type": "message_start", "message": message}),
                ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                   "usage": {"output_tokens": 7}}),
                ("message_stop", {"type": "message_stop"}),
            ])

        # -- Gemini ---------------------------------------------------------------
        def _gemini_router(self, body: Any) -> None:
            text = json.dumps({"reasoning": "fake", "model_choice": "flash"})
            self._json(200, {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                             "finishReason": "STOP", "index": 0}],
                             "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 18, "totalTokenCount": 118}})

        def _gemini_stream(self, body: Any) -> None:
            answer = model.reply("gemini", body)
            if isinstance(answer, ToolCall) and _gemini_last_command(body) == answer.command:
                answer = "done: " + _gemini_last_tool_result(body)[:2000]
            if isinstance(answer, ToolCall):
                part: dict[str, Any] = {"functionCall": {"name": "run_shell_command",
                                                         "args": {"command": answer.command, "description": "run"}}}
            else:
                part = {"text": answer}
            chunk = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                     "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 7, "totalTokenCount": 107}}
            self._sse([(None, chunk)])

        # -- OpenAI Responses -----------------------------------------------------
        def _openai(self, body: Any) -> None:
            answer = model.reply("openai", body)
            if isinstance(answer, ToolCall) and _openai_last_command(body) == answer.command:
                answer = "done: " + _openai_last_tool_result(body)[:2000]
            if isinstance(answer, ToolCall):
                item: dict[str, Any] = {"type": "function_call", "id": f"fc_fake{_call_number(body)}",
                                        "call_id": f"call_fake{_call_number(body)}",
                                        "name": "exec_command", "arguments": json.dumps({"cmd": answer.command}),
                                        "status": "completed"}
            else:
                item = {"type": "message", "id": "msg_fake1", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": answer, "annotations": []}]}
            usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 7,
                     "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 107}
            events: list[tuple[str | None, Any]] = [
                ("response.created", {"type": "response.created", "response": {"id": "resp_fake", "status": "in_progress"}}),
                ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ]
            if item["type"] == "message":
                events.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                              "output_index": 0, "content_index": 0, "delta": answer}))
            events += [
                ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
                ("response.completed", {"type": "response.completed",
                                        "response": {"id": "resp_fake", "status": "completed", "usage": usage}}),
            ]
            self._sse(events)

    return Handler


def _call_number(body: Any) -> int:
    """1 + the tool calls already in the conversation: each call gets its own id (a host
    keeps one result per id, so a repeated id would drop the earlier exchange)."""
    blocks = _anthropic_blocks(body) if isinstance(body, dict) and "messages" in body else []
    items = _openai_items(body) if isinstance(body, dict) and "input" in body else []
    return 1 + sum(b.get("type") == "tool_use" for b in blocks) + sum(i.get("type") == "function_call" for i in items)


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
    return (calls[-1].get("input") or {}).get("command") if calls and _anthropic_has_result(body) else None


def _anthropic_has_result(body: Any) -> bool:
    return any(b.get("type") == "tool_result" for b in _anthropic_blocks(body))


def _anthropic_last_tool_result(body: Any) -> str:
    results = [b for b in _anthropic_blocks(body) if b.get("type") == "tool_result"]
    content = results[-1].get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def _gemini_parts(body: Any) -> list[dict[str, Any]]:
    return [p for c in body.get("contents") or [] for p in c.get("parts") or [] if isinstance(p, dict)]


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


def tool_results(api: str, body: Any) -> list[str]:
    """The outputs of the tool calls the host has answered so far, in order, for a reply
    that plays a model through several calls (api: anthropic, gemini or openai)."""
    if not isinstance(body, dict):
        return []
    if api == "anthropic":
        found = []
        for block in _anthropic_blocks(body):
            if block.get("type") == "tool_result":
                content = block.get("content")
                parts = content if isinstance(content, list) else [{"text": str(content)}]
                found.append("".join(p.get("text", "") for p in parts if isinstance(p, dict)))
        return found
    if api == "gemini":
        return [json.dumps(p["functionResponse"].get("response")) for p in _gemini_parts(body) if "functionResponse" in p]
    outputs = [i.get("output") for i in _openai_items(body) if i.get("type") == "function_call_output"]
    return [o if isinstance(o, str) else json.dumps(o) for o in outputs]


if __name__ == "__main__":  # a server for poking at the CLIs by hand
    import time

    with FakeModel() as fake:
        print(fake.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
