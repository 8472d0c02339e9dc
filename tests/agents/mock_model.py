"""A mock model server for the real agent CLIs: OpenAI Responses API (Codex), Anthropic Messages API
(Claude Code) and Gemini API (Gemini CLI), streamed as server-sent events, on 127.0.0.1 and a random
port.

Every request is recorded (method, path, parsed JSON body) in memory and, when a log path is
given, appended to a JSON Lines file. Generation requests are answered with one short assistant
text; ``delay_s`` holds a streamed answer open after its first event, so a test can watch the
CLI's busy screen. With ``tool_call`` set to (marker, command), a turn whose prompt holds the marker is
answered with a call of the CLI's own shell tool running the command (Codex's ``exec_command`` asking
to run outside its sandbox, Claude Code's ``Bash``, Gemini's ``run_shell_command``): each CLI asks for
approval before it runs it, unless its approvals are bypassed; the turn that brings the tool's result
back gets the text answer. Gemini's helper calls (``:generateContent``) that ask for JSON by a schema, such as
the router call it makes before every turn (``complexity_score`` 1..100), get an object of that
schema; an invalid one would make Gemini route elsewhere. Everything else the CLIs call is answered
with small JSON (200 or 404).

Run it alone to poke at a CLI by hand: ``python -m tests.agents.mock_model [--port N]``.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

DEFAULT_ANSWER = "Acknowledged."


@dataclass(frozen=True)
class Recorded:
    """One request as the server saw it."""

    seq: int
    at: float
    method: str
    path: str  # with the query string
    body: Any  # parsed JSON, or the raw text when it is not JSON, or None when empty
    raw: str

    @property
    def route(self) -> str:
        return urlsplit(self.path).path

    def prompt_text(self) -> str:
        """The text of the last user message: what was typed into the CLI for this turn
        (Responses ``input`` items, Messages ``messages``, Gemini ``contents``; tool results are not
        prompts). Of Gemini's requests only the streamed turn counts: its helper calls before the turn
        (the router's ``:generateContent``) quote the same message, and would count it twice."""
        if not isinstance(self.body, dict):
            return ""
        if ":" in self.route.rsplit("/", 1)[-1]:
            return _gemini_prompt(self.body) if self.route.endswith(":streamGenerateContent") else ""
        items = self.body.get("input") if self.route.endswith("/responses") else self.body.get("messages")
        if not isinstance(items, list):
            return ""
        for item in reversed(items):
            if isinstance(item, dict) and item.get("role") == "user":
                texts = list(_texts(item.get("content")))
                if texts or item.get("type", "message") == "message":
                    return "\n".join(texts)
        return ""

    def as_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "at": self.at, "method": self.method, "path": self.path, "body": self.body}


def _texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") in ("text", "input_text") and isinstance(
                    block.get("text"), str):
                yield block["text"]


def _gemini_prompt(body: dict[str, Any]) -> str:
    """The texts of the last ``user`` entry of a Gemini request's ``contents`` that has text (a
    ``functionResponse`` part, a tool's result, has none)."""
    contents = body.get("contents")
    for item in reversed(contents if isinstance(contents, list) else []):
        if isinstance(item, dict) and item.get("role") == "user":
            parts = item.get("parts")
            parts = parts if isinstance(parts, list) else []
            texts = [part["text"] for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str)]
            if texts:
                return "\n".join(texts)
    return ""


def _brings_tool_result(body: Any) -> bool:
    """Whether a generation request's last input item is a tool's result (Responses
    ``function_call_output``, Messages ``tool_result`` block, Gemini ``functionResponse`` part)."""
    if not isinstance(body, dict):
        return False
    items = body.get("input") or body.get("messages") or body.get("contents")
    last = items[-1] if isinstance(items, list) and items else None
    if not isinstance(last, dict):
        return False
    if last.get("type") == "function_call_output":
        return True
    blocks = last.get("content") if "content" in last else last.get("parts")
    return isinstance(blocks, list) and any(
        isinstance(b, dict) and (b.get("type") == "tool_result" or "functionResponse" in b) for b in blocks)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@dataclass
class MockModel:
    """``with MockModel(answer=...) as mock:`` starts it; ``mock.base_url`` is ``http://127.0.0.1:PORT``."""

    answer: str = DEFAULT_ANSWER
    delay_s: float = 0.0
    log_path: Path | None = None
    port: int = 0
    tool_call: tuple[str, str] | None = None  # (marker, command): see the module docstring
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> MockModel:
        handler = type("Handler", (_Handler,), {"mock": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, name="mock-model", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> MockModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------------ recording

    def record(self, method: str, path: str, raw: str) -> Recorded:
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                body = raw
        with self._lock:
            entry = Recorded(seq=len(self.requests) + 1, at=time.time(), method=method, path=path, body=body, raw=raw)
            self.requests.append(entry)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(entry.as_json()) + "\n")
        return entry

    def snapshot(self) -> list[Recorded]:
        with self._lock:
            return list(self.requests)

    def requests_containing(self, text: str, *, prompt_only: bool = False) -> list[Recorded]:
        """Requests whose body holds ``text`` anywhere (any JSON string), or, with ``prompt_only``,
        in the last user message only (what was typed into the CLI for that turn)."""
        found = []
        for entry in self.snapshot():
            if prompt_only:
                hit = text in entry.prompt_text()
            else:
                hit = text in entry.raw or any(text in s for s in _strings(entry.body))
            if hit:
                found.append(entry)
        return found

    def generation_requests(self) -> list[Recorded]:
        return [r for r in self.snapshot() if r.method == "POST" and (
            r.route in ("/v1/responses", "/v1/messages") or r.route.endswith(":streamGenerateContent"))]

    def wait_for(self, text: str, timeout_s: float, *, prompt_only: bool = True, count: int = 1) -> list[Recorded]:
        deadline = time.monotonic() + timeout_s
        while True:
            found = self.requests_containing(text, prompt_only=prompt_only)
            if len(found) >= count or time.monotonic() >= deadline:
                return found
            time.sleep(0.2)

    def settings(self) -> tuple[str, float]:
        with self._lock:
            return self.answer, self.delay_s

    def tool_command(self, entry: Recorded) -> str | None:
        """The command to answer ``entry`` with a tool call of, or None for a text answer."""
        with self._lock:
            tool_call = self.tool_call
        offers_tools = isinstance(entry.body, dict) and bool(entry.body.get("tools"))
        if (tool_call is None or not offers_tools or tool_call[0] not in entry.prompt_text()
                or _brings_tool_result(entry.body)):
            return None
        return tool_call[1]

    def configure(self, *, answer: str | None = None, delay_s: float | None = None,
                  tool_call: tuple[str, str] | None | bool = False) -> None:
        """Change the answers from now on; ``tool_call=None`` turns tool calls off (``False``: unchanged)."""
        with self._lock:
            if answer is not None:
                self.answer = answer
            if delay_s is not None:
                self.delay_s = delay_s
            if tool_call is not False:
                assert tool_call is None or isinstance(tool_call, tuple)
                self.tool_call = tool_call


# ---------------------------------------------------------------------- wire formats


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def responses_events(answer: str, seq: int) -> list[bytes]:
    """The Responses API stream Codex consumes: created, one finished assistant message, completed."""
    item = {"type": "message", "role": "assistant", "id": f"msg_mock_{seq}", "status": "completed",
            "content": [{"type": "output_text", "text": answer, "annotations": []}]}
    return _responses_stream(item, seq)


def _responses_stream(item: dict[str, Any], seq: int) -> list[bytes]:
    """A Responses stream of one finished output ``item``."""
    rid = f"resp_mock_{seq}"
    usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
             "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
    return [
        _sse("response.created", {"type": "response.created", "response": {"id": rid}}),
        _sse("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        _sse("response.completed", {"type": "response.completed", "response": {"id": rid, "usage": usage}}),
    ]


def responses_tool_events(command: str, seq: int, tools: list[str]) -> list[bytes]:
    """A Responses stream that calls Codex's shell tool with ``command``, asking to run it outside the
    sandbox (``require_escalated``), which Codex puts to the user unless approvals are bypassed. The tool
    is the one the request offers: ``exec_command`` (0.169.0's default), ``shell_command`` or ``shell``
    (the models whose catalog entry names another shell)."""
    escalate = {"sandbox_permissions": "require_escalated", "justification": "The mock model needs this command run."}
    if "exec_command" in tools:
        name, arguments = "exec_command", {"cmd": command, **escalate}
    elif "shell_command" in tools:
        name, arguments = "shell_command", {"command": command, **escalate}
    else:
        name, arguments = "shell", {"command": ["bash", "-lc", command], **escalate}
    item = {"type": "function_call", "id": f"fc_mock_{seq}", "call_id": f"call_mock_{seq}", "name": name,
            "arguments": json.dumps(arguments), "status": "completed"}
    return _responses_stream(item, seq)


def _message(answer: str, seq: int, model: str) -> dict[str, Any]:
    return {"id": f"msg_mock_{seq}", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": answer}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}


def messages_events(answer: str, seq: int, model: str) -> list[bytes]:
    """The Messages API stream Claude Code consumes: one text block, then end_turn."""
    return _messages_stream({"type": "text", "text": ""}, {"type": "text_delta", "text": answer}, "end_turn", seq,
                            model)


def messages_tool_events(command: str, seq: int, model: str) -> list[bytes]:
    """A Messages stream with one ``tool_use`` of Claude Code's ``Bash`` tool running ``command``."""
    tool = {"type": "tool_use", "id": f"toolu_mock_{seq}", "name": "Bash", "input": {}}
    arguments = json.dumps({"command": command, "description": "Run the command the mock model asks for"})
    return _messages_stream(tool, {"type": "input_json_delta", "partial_json": arguments}, "tool_use", seq, model)


def _messages_stream(block: dict[str, Any], delta: dict[str, Any], stop_reason: str, seq: int,
                     model: str) -> list[bytes]:
    """A Messages stream of one content ``block`` filled by one ``delta``, ending for ``stop_reason``."""
    start = {**_message("", seq, model), "content": [], "stop_reason": None,
             "usage": {"input_tokens": 10, "output_tokens": 1}}
    return [
        _sse("message_start", {"type": "message_start", "message": start}),
        _sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
        _sse("message_stop", {"type": "message_stop"}),
    ]


def _gemini_response(parts: list[dict[str, Any]], finish: str | None, model: str) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": model,
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}


def gemini_events(answer: str, model: str) -> list[bytes]:
    """The ``:streamGenerateContent?alt=sse`` stream Gemini CLI consumes: the text, then an empty
    ``model`` chunk that ends the turn (``finishReason: STOP``, ``usageMetadata``)."""
    chunks = [_gemini_response([{"text": answer}], None, model), _gemini_response([{"text": ""}], "STOP", model)]
    return [f"data: {json.dumps(chunk)}\r\n\r\n".encode() for chunk in chunks]


def gemini_tool_events(command: str, model: str) -> list[bytes]:
    """A Gemini stream whose one part calls its ``run_shell_command`` tool with ``command``."""
    call = {"functionCall": {"name": "run_shell_command",
                             "args": {"command": command, "description": "Run the command the mock model asks for"}}}
    return [f"data: {json.dumps(_gemini_response([call], 'STOP', model))}\r\n\r\n".encode()]


def schema_example(schema: Any) -> Any:
    """A smallest value of a Gemini response schema (OpenAPI-style ``type`` names, either case)."""
    if not isinstance(schema, dict):
        return None
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = str(schema.get("type", "")).lower()
    if kind == "object":
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        return {name: schema_example(sub) for name, sub in properties.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        low = schema.get("minimum", 1)
        return low if isinstance(low, int | float) else 1
    if kind == "boolean":
        return False
    return "mock"


def gemini_helper_answer(body: dict[str, Any], answer: str, model: str) -> dict[str, Any]:
    """A ``:generateContent`` answer: JSON of the schema asked for (the router's ``complexity_score``
    a low 10, within its 1..100), else ``answer`` as text."""
    config = body.get("generationConfig")
    config = config if isinstance(config, dict) else {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    if config.get("responseMimeType") == "application/json" and isinstance(schema, dict):
        value = schema_example(schema)
        if isinstance(value, dict) and "complexity_score" in value:
            value.update(complexity_reasoning="mock: a simple request", complexity_score=10)
        return _gemini_response([{"text": json.dumps(value)}], "STOP", model)
    return _gemini_response([{"text": answer}], "STOP", model)


class _Handler(BaseHTTPRequestHandler):
    mock: MockModel
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def _body(self) -> str:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length).decode("utf-8", "replace") if length else ""

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, events: list[bytes], delay_s: float) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for index, event in enumerate(events):
                self.wfile.write(event)
                self.wfile.flush()
                if index == 0 and delay_s > 0:
                    time.sleep(delay_s)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the CLI gave up on the answer (interrupted, or exited)

    def do_GET(self) -> None:
        entry = self.mock.record("GET", self.path, "")
        route = entry.route
        if route.endswith("/models"):
            # both shapes at once: OpenAI's {"data": [...]} and Codex's own {"models": [...]}
            self._json(200, {"object": "list", "data": [], "models": [], "has_more": False})
        else:
            self._json(404, {"error": {"type": "not_found_error", "message": f"mock: no route {route}"}})

    def do_HEAD(self) -> None:
        self.mock.record("HEAD", self.path, "")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        entry = self.mock.record("POST", self.path, self._body())
        route, body = entry.route, entry.body if isinstance(entry.body, dict) else {}
        answer, delay_s = self.mock.settings()
        model = route.rsplit("/", 1)[-1].split(":", 1)[0]
        command = self.mock.tool_command(entry)
        if route.endswith(":streamGenerateContent"):
            events = gemini_events(answer, model) if command is None else gemini_tool_events(command, model)
            self._stream(events, delay_s)
        elif route.endswith(":generateContent"):
            self._json(200, gemini_helper_answer(body, answer, model))
        elif route.endswith(":countTokens"):
            self._json(200, {"totalTokens": max(1, len(entry.raw) // 4)})
        elif route.endswith("/responses"):
            offered = [str(tool.get("name")) for tool in body.get("tools") or [] if isinstance(tool, dict)]
            events = (responses_events(answer, entry.seq) if command is None
                      else responses_tool_events(command, entry.seq, offered))
            self._stream(events, delay_s)
        elif route.endswith("/messages/count_tokens"):
            self._json(200, {"input_tokens": max(1, len(entry.raw) // 4)})
        elif route.endswith("/messages"):
            model = str(body.get("model") or "mock-model")
            if body.get("stream"):
                events = (messages_events(answer, entry.seq, model) if command is None
                          else messages_tool_events(command, entry.seq, model))
                self._stream(events, delay_s)
            else:
                self._json(200, _message(answer, entry.seq, model))
        else:
            self._json(404, {"error": {"type": "not_found_error", "message": f"mock: no route {route}"}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--answer", default=DEFAULT_ANSWER)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--log", type=Path, default=None, help="append every request to this JSONL file")
    args = parser.parse_args()
    with MockModel(answer=args.answer, delay_s=args.delay, log_path=args.log, port=args.port) as mock:
        print(mock.base_url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
