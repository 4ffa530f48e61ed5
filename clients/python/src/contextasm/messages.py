"""The OpenAI and Anthropic SDKs' message shapes, as plain dicts: a
conversation turned into declarations, and a model's reply turned into
feedback and the message to append.

OpenAI: Chat Completions messages ({"role", "content", "tool_calls",
"tool_call_id"}) and a ChatCompletion (completion.model_dump() of the
SDK's object). Anthropic: Messages API messages ({"role", "content":
str or blocks of "text", "tool_use", "tool_result"}) and a Message
(message.model_dump()).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ._types import Citation, Declaration, Format, ToolCall, Usage

Message = Dict[str, Any]


def _text(content: Any) -> str:
    """The text of a message's content: a string, or its text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: List[str] = []
    for p in content:
        if isinstance(p, Mapping) and p.get("type") == "text":
            parts.append(str(p.get("text", "")))
        elif isinstance(p, str):
            parts.append(p)
    return "".join(parts)


def _stamp(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def declarations(messages: Sequence[Mapping[str, Any]], format: Format, *, session: str, prefix: str,
                 times: Sequence[datetime], system: Sequence[str] = ()) -> List[Declaration]:
    """Declarations for a conversation in the SDK's shape (format "openai"
    or "anthropic"), as the Go adapters make them: system texts become
    required constraints, the other messages history blocks of the session
    with their roles, tool calls and answered call ids, each dated by
    times (one per message), the newest required. Ids are prefix and the
    message's position, so a conversation that only grows keeps them."""
    out: List[Declaration] = []
    n = 0

    def add(d: Declaration) -> None:
        nonlocal n
        d["request_id"] = f"{prefix}{n:05d}"
        n += 1
        out.append(d)

    for text in system:
        if text.strip():
            add({"memory_type": "constraint", "scope": "session", "session_id": session, "required": True,
                 "content": text})
    for i, m in enumerate(messages):
        when = times[i]
        role = m.get("role")
        if role in ("system", "developer"):
            text = _text(m.get("content"))
            if text.strip():
                add({"memory_type": "constraint", "scope": "session", "session_id": session, "required": True,
                     "content": text})
            continue
        for j, d in enumerate(_history(m, format)):
            d.update({"memory_type": "history", "scope": "session", "session_id": session,
                      "last_modified": _stamp(when + timedelta(microseconds=j))})
            add(d)
    for d in reversed(out):
        if d["memory_type"] == "history":
            d["required"] = True
            break
    return out


def _history(m: Mapping[str, Any], format: Format) -> List[Declaration]:
    """One message's history blocks, in reading order."""
    role = m.get("role")
    content = m.get("content")
    if format == "anthropic" and not isinstance(content, str) and content is not None:
        blocks: List[Declaration] = []
        text_parts: List[str] = []
        calls: List[ToolCall] = []
        for b in content:
            kind = b.get("type")
            if kind == "text":
                text_parts.append(str(b.get("text", "")))
            elif kind == "tool_use":
                calls.append({"id": str(b["id"]), "name": str(b["name"]),
                              "arguments": json.dumps(b.get("input", {}), separators=(",", ":"))})
            elif kind == "tool_result":
                blocks.append({"role": "tool", "tool_call_id": str(b["tool_use_id"]),
                               "content": _text(b.get("content")) or "(empty)"})
        text = "".join(text_parts)
        if role == "assistant":
            d: Declaration = {"role": "assistant", "content": text}
            if calls:
                d["tool_calls"] = calls
            if text.strip() or calls:
                blocks.append(d)
        elif text.strip():
            blocks.append({"role": "user", "content": text})
        return blocks
    text = _text(content)
    if role == "assistant":
        d = {"role": "assistant", "content": text}
        tcs = m.get("tool_calls") or []
        if tcs:
            d["tool_calls"] = [{"id": str(c["id"]), "name": str(c["function"]["name"]),
                                "arguments": str(c["function"].get("arguments") or "{}")} for c in tcs]
        return [d] if text.strip() or tcs else []
    if role == "tool":
        return [{"role": "tool", "tool_call_id": str(m["tool_call_id"]), "content": text or "(empty)"}]
    return [{"role": "user", "content": text}] if text.strip() else []


class Reply:
    """A model's reply, read from the SDK's shape: its text, the provider's
    citations and usage (for feedback), its tool calls, and the assistant
    message to append to the conversation."""

    def __init__(self, text: str, cited: List[Citation], usage: Usage, tool_calls: List[Tuple[str, str, Any]],
                 message: Message) -> None:
        self.text = text
        self.cited = cited
        self.usage = usage
        self.tool_calls = tool_calls  # (id, name, arguments as a dict)
        self.message = message


def _byte_offset(text: str, char_index: int) -> int:
    return len(text[:max(0, min(char_index, len(text)))].encode())


def openai_reply(completion: Mapping[str, Any]) -> Reply:
    """Reads a ChatCompletion: choices[0].message, its url_citation
    annotations (a character index, made a byte offset) and its usage."""
    msg = completion["choices"][0]["message"]
    text = _text(msg.get("content"))
    cited: List[Citation] = []
    for a in msg.get("annotations") or []:
        if a.get("type") == "url_citation":
            uc = a.get("url_citation", a)
            cited.append({"id": str(uc["url"]), "offset": _byte_offset(text, int(uc.get("start_index", 0)))})
    usage: Usage = {}
    u = completion.get("usage") or {}
    if u:
        details = u.get("prompt_tokens_details") or {}
        usage = {"input_tokens": int(u.get("prompt_tokens", 0)),
                 "cached_tokens": int(details.get("cached_tokens") or 0),
                 "cache_write_tokens": int(details.get("cache_write_tokens") or 0)}
    calls = []
    out: Message = {"role": "assistant", "content": msg.get("content")}
    if msg.get("tool_calls"):
        out["tool_calls"] = [{"id": c["id"], "type": "function",
                              "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}}
                             for c in msg["tool_calls"]]
        for c in msg["tool_calls"]:
            calls.append((str(c["id"]), str(c["function"]["name"]), json.loads(c["function"]["arguments"] or "{}")))
    return Reply(text, cited, usage, calls, out)


def anthropic_reply(message: Mapping[str, Any]) -> Reply:
    """Reads a Message: its text blocks (a citation counts at the start of
    the block it annotates, naming the page's url, the search result's
    source or the document's title), tool_use blocks and usage (input =
    input_tokens + cache reads + cache writes)."""
    text = ""
    cited: List[Citation] = []
    calls = []
    content: List[Dict[str, Any]] = []
    for b in message.get("content") or []:
        if b.get("type") == "text":
            start = len(text.encode())
            for c in b.get("citations") or []:
                name = c.get("url") or c.get("source") or c.get("document_title")
                if name:
                    cited.append({"id": str(name), "offset": start})
            text += str(b.get("text", ""))
            content.append({"type": "text", "text": b.get("text", "")})
        elif b.get("type") == "tool_use":
            calls.append((str(b["id"]), str(b["name"]), b.get("input") or {}))
            content.append({"type": "tool_use", "id": b["id"], "name": b["name"], "input": b.get("input") or {}})
    u = message.get("usage") or {}
    usage: Usage = {}
    if u:
        read, write = int(u.get("cache_read_input_tokens") or 0), int(u.get("cache_creation_input_tokens") or 0)
        usage = {"input_tokens": int(u.get("input_tokens", 0)) + read + write, "cached_tokens": read,
                 "cache_write_tokens": write}
    return Reply(text, cited, usage, calls, {"role": "assistant", "content": content})


def reply(format: Format, response: Mapping[str, Any]) -> Reply:
    """openai_reply or anthropic_reply, by format."""
    if format == "anthropic":
        return anthropic_reply(response)
    if format == "openai":
        return openai_reply(response)
    raise ValueError(f"format {format!r}: the message helpers speak openai and anthropic")


def tool_result(format: Format, call_id: str, content: str) -> Message:
    """The message that answers a tool call, in the SDK's shape."""
    if format == "anthropic":
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": content}]}
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def user(format: Format, text: str) -> Message:
    """A user message in the SDK's shape."""
    return {"role": "user", "content": text}


def now() -> datetime:
    return datetime.now(timezone.utc)


def stamp(t: Optional[datetime]) -> Optional[str]:
    return None if t is None else _stamp(t)
