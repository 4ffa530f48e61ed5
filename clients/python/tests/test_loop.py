"""A tool-using conversation through the real server, in both SDKs'
shapes: each call assembled, each reply fed back, the tool run between.
The model is a function that answers as the SDK's response would (dicts
of completion.model_dump() / message.model_dump()); it checks what it is
sent, as a provider's API would refuse a malformed conversation."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any, Callable, Dict, List

from contextasm import AsyncClient, AsyncConversation, Client, Conversation
from conftest import KEYS, Server


def knowledge(session: str) -> List[Any]:
    return [{"request_id": f"kb/{session}/policy", "memory_type": "external", "scope": "session", "session_id": session,
             "provenance": {"uri": f"kb://{session}/refund-policy"}, "content": "Full refund within 30 days."}]


def get_order(order: str) -> Dict[str, Any]:
    return {"order": order, "amount_eur": 80, "delivered": "2026-11-20"}


def openai_model(calls: List[Dict[str, Any]], session: str) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
    def model(body: Dict[str, Any]) -> Dict[str, Any]:
        calls.append(body)
        msgs = body["messages"]
        assert msgs[0]["role"] == "system" and "Full refund within 30 days." in msgs[0]["content"]
        if len(calls) == 1:
            assert msgs[-1] == {"role": "user", "content": "Where is my order A-17, and can I return it?"}
            return {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": '{"order":"A-17"}'}}]}}],
                "usage": {"prompt_tokens": 200, "prompt_tokens_details": {"cached_tokens": 0}}}
        assert msgs[-2]["tool_calls"][0]["id"] == "call_1"
        assert msgs[-1]["role"] == "tool" and msgs[-1]["tool_call_id"] == "call_1"
        assert json.loads(msgs[-1]["content"])["amount_eur"] == 80
        text = "It arrived on 2026-11-20; you can return it for a full refund."
        return {"choices": [{"message": {"role": "assistant", "content": text, "annotations": [
            {"type": "url_citation",
             "url_citation": {"url": f"kb://{session}/refund-policy", "start_index": 0, "end_index": 60}}]}}],
                "usage": {"prompt_tokens": 260, "prompt_tokens_details": {"cached_tokens": 128}}}
    return model


def test_openai_tool_loop(server: Server) -> None:
    s = f"loop-{uuid.uuid4().hex[:8]}"
    with Client(server.url, api_key=KEYS["support"]) as c:
        c.declare(knowledge(s))
        conv = Conversation(c, template="support", session=s, format="openai", system=["You are a support agent."])
        conv.add_user("Where is my order A-17, and can I return it?")
        calls: List[Dict[str, Any]] = []
        final = conv.run(openai_model(calls, s), tools={"get_order": get_order})
        assert len(calls) == 2
        assert final["choices"][0]["message"]["content"].startswith("It arrived")
        assert conv.feedback is not None
        assert [t["request_id"] for t in conv.feedback["trust_changes"]] == [f"kb/{s}/policy"]
        assert [m["role"] for m in conv.messages] == ["user", "assistant", "tool", "assistant"]
        assert conv.last is not None and c.assembly(conv.last["assembly_id"])["fed_back"] is True
        # The system text became a required rule of the session.
        assert "You are a support agent." in calls[1]["messages"][0]["content"]


def anthropic_model(calls: List[Dict[str, Any]], session: str) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
    def model(body: Dict[str, Any]) -> Dict[str, Any]:
        calls.append(body)
        msgs = body["messages"]
        assert msgs[0]["role"] == "user"
        if len(calls) == 1:
            return {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_01", "name": "get_order", "input": {"order": "A-17"}}],
                "usage": {"input_tokens": 150, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 40}}
        last = msgs[-1]
        assert last["role"] == "user" and last["content"][0]["type"] == "tool_result"
        assert last["content"][0]["tool_use_id"] == "toolu_01"
        assert msgs[-2]["content"][-1]["type"] == "tool_use"
        return {"role": "assistant", "content": [{"type": "text", "text": "You can return it.", "citations": [
            {"type": "search_result_location", "source": f"kb://{session}/refund-policy"}]}],
                "usage": {"input_tokens": 20, "cache_read_input_tokens": 190, "cache_creation_input_tokens": 0}}
    return model


def test_anthropic_tool_loop_async(server: Server) -> None:
    s = f"aloop-{uuid.uuid4().hex[:8]}"

    async def main() -> None:
        c = AsyncClient(server.url, api_key=KEYS["support"])
        await c.declare(knowledge(s))
        conv = AsyncConversation(c, template="support", session=s, format="anthropic")
        conv.add_user("Where is my order A-17, and can I return it?")
        calls: List[Dict[str, Any]] = []
        sync_model = anthropic_model(calls, s)

        async def model(body: Dict[str, Any]) -> Dict[str, Any]:
            return sync_model(body)

        async def tool(order: str) -> Dict[str, Any]:
            return get_order(order)

        final = await conv.run(model, tools={"get_order": tool})
        assert final["content"][0]["text"] == "You can return it."
        assert len(calls) == 2
        assert conv.feedback is not None
        assert [t["request_id"] for t in conv.feedback["trust_changes"]] == [f"kb/{s}/policy"]
        assert [m["role"] for m in conv.messages] == ["user", "assistant", "user", "assistant"]

    asyncio.run(main())


def test_a_retrievers_scores_each_call(server: Server) -> None:
    s = f"rel-{uuid.uuid4().hex[:8]}"
    policy = f"kb/{s}/policy"
    seen: List[int] = []

    def retriever(messages: Any) -> Dict[str, float]:
        seen.append(len(messages))
        return {policy: 0.8}

    async def aretriever(messages: Any) -> Dict[str, float]:
        return retriever(messages)

    with Client(server.url, api_key=KEYS["support"]) as c:
        c.declare(knowledge(s))
        conv = Conversation(c, template="support", session=s, format="openai", relevance=retriever)
        conv.add_user("Can I return it?")
        conv.request()
        assert conv.last is not None
        dump = c.assembly(conv.last["assembly_id"])["dump"]
        assert dump["query"]["from"] == "host" and seen == [1]
        rows = {b["request_id"]: b for sec in dump["sections"] for b in sec["blocks"]}
        assert rows[policy]["relevance"] == 0.8

    async def main() -> None:
        c = AsyncClient(server.url, api_key=KEYS["support"])
        conv = AsyncConversation(c, template="support", session=s, format="openai", relevance=aretriever)
        conv.add_user("Can I return it?")
        await conv.request()
        assert conv.last is not None
        assert (await c.assembly(conv.last["assembly_id"]))["dump"]["query"]["from"] == "host"

    asyncio.run(main())
    assert seen == [1, 1]
