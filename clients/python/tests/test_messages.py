"""The SDKs' message shapes: a conversation declared and assembled back
comes out as it went in; replies give their text, citations and usage."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List

from contextasm import Client, messages
from conftest import KEYS, Server

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=timezone.utc)
NOW = "2026-11-30T09:00:00Z"

OPENAI: List[Dict[str, Any]] = [
    {"role": "user", "content": "What is the rate for a car loan?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "get_rate", "arguments": '{"product":"car"}'}},
        {"id": "call_b", "type": "function", "function": {"name": "get_fees", "arguments": '{"product":"car"}'}}]},
    {"role": "tool", "tool_call_id": "call_a", "content": "6.9% APR"},
    {"role": "tool", "tool_call_id": "call_b", "content": "EUR 120 origination"},
    {"role": "assistant", "content": "6.9% APR, and a EUR 120 fee."},
    {"role": "user", "content": [{"type": "text", "text": "And over 48 months?"}]},
]

ANTHROPIC: List[Dict[str, Any]] = [
    {"role": "user", "content": "What is the rate for a car loan?"},
    {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
                                      {"type": "tool_use", "id": "toolu_a", "name": "get_rate", "input": {"p": "car"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "6.9% APR"},
                                 {"type": "text", "text": "Thanks. And over 48 months?"}]},
]


def times(n: int) -> List[datetime]:
    return [T0 + timedelta(seconds=i) for i in range(n)]


def test_declarations_openai() -> None:
    d = messages.declarations(OPENAI, "openai", session="s", prefix="p/", times=times(len(OPENAI)), system=["Be brief."])
    assert [x["request_id"] for x in d] == [f"p/{i:05d}" for i in range(7)]
    assert d[0]["memory_type"] == "constraint" and d[0]["required"] is True
    assert d[2]["tool_calls"] == [{"id": "call_a", "name": "get_rate", "arguments": '{"product":"car"}'},
                                  {"id": "call_b", "name": "get_fees", "arguments": '{"product":"car"}'}]
    assert (d[3]["role"], d[3]["tool_call_id"]) == ("tool", "call_a")
    assert d[-1]["content"] == "And over 48 months?" and d[-1]["required"] is True
    assert not any(x.get("required") for x in d[1:-1])


def test_declarations_anthropic() -> None:
    d = messages.declarations(ANTHROPIC, "anthropic", session="s", prefix="p/", times=times(len(ANTHROPIC)))
    assert [x["role"] for x in d] == ["user", "assistant", "tool", "user"]
    assert d[1]["tool_calls"] == [{"id": "toolu_a", "name": "get_rate", "arguments": '{"p":"car"}'}]
    assert d[2]["last_modified"] < d[3]["last_modified"]  # the result, then the text after it


def test_round_trip_through_the_server(server: Server) -> None:
    """Declared and assembled for the same SDK, a conversation comes back
    as it went in (the system prompt first)."""
    with Client(server.url, api_key=KEYS["support"]) as c:
        for shape, convo in (("openai", OPENAI), ("anthropic", ANTHROPIC)):
            s = f"rt-{uuid.uuid4().hex[:8]}"
            c.declare(messages.declarations(convo, shape, session=s, prefix=f"{s}/", times=times(len(convo))))  # type: ignore[arg-type]
            body = c.assemble("support", session=s, now=NOW, format=shape)["body"]  # type: ignore[arg-type]
            got = body["messages"]
            if shape == "openai":
                assert got[0]["role"] == "system"
                got = got[1:]
                want = [dict(m) for m in OPENAI]
                want[1] = {"role": "assistant", "tool_calls": OPENAI[1]["tool_calls"]}  # no content when it says nothing
                want[5] = {"role": "user", "content": "And over 48 months?"}
            else:
                want = [
                    {"role": "user", "content": [{"type": "text", "text": "What is the rate for a car loan?"}]},
                    {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
                                                      {"type": "tool_use", "id": "toolu_a", "name": "get_rate",
                                                       "input": {"p": "car"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "6.9% APR"},
                                                 {"type": "text", "text": "Thanks. And over 48 months?"}]},
                ]
                for m in got:  # the marks of a cache breakpoint are not the conversation's
                    for b in m["content"]:
                        b.pop("cache_control", None)
            assert got == want, shape


def test_openai_reply() -> None:
    text = "Café prices: see the page."
    r = messages.openai_reply({"choices": [{"message": {"role": "assistant", "content": text, "annotations": [
        {"type": "url_citation", "url_citation": {"url": "https://x/p", "start_index": 14, "end_index": 26}}]}}],
        "usage": {"prompt_tokens": 900, "prompt_tokens_details": {"cached_tokens": 512}}})
    assert r.text == text
    assert r.cited == [{"id": "https://x/p", "offset": len(text[:14].encode())}]  # a character index made a byte offset
    assert r.cited[0]["offset"] == 15
    assert r.usage == {"input_tokens": 900, "cached_tokens": 512, "cache_write_tokens": 0}
    assert r.tool_calls == [] and r.message == {"role": "assistant", "content": text}


def test_anthropic_reply() -> None:
    r = messages.anthropic_reply({"content": [
        {"type": "text", "text": "First. "},
        {"type": "text", "text": "Second.", "citations": [
            {"type": "char_location", "document_title": "Policy"},
            {"type": "web_search_result_location", "url": "https://w"}]},
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}}],
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5}})
    assert r.text == "First. Second."
    assert r.cited == [{"id": "Policy", "offset": 7}, {"id": "https://w", "offset": 7}]
    assert r.usage == {"input_tokens": 115, "cached_tokens": 100, "cache_write_tokens": 5}
    assert r.tool_calls == [("toolu_1", "f", {"a": 1})]
    assert r.message["content"][-1] == {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}}
