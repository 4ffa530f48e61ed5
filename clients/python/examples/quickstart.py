"""A tool-using conversation through a local contextasm serve.

    contextasm serve &                       # loopback, no keys
    python3 examples/quickstart.py           # CONTEXTASM_URL, CONTEXTASM_API_KEY to point elsewhere

The model here is a stand-in that answers as OpenAI's SDK would (the
dict of completion.model_dump()), so the example runs without an API key;
with the SDK, call_model is

    lambda body: openai.OpenAI().chat.completions.create(model="gpt-5.5", tools=TOOLS, **body).model_dump()
"""

from __future__ import annotations

import os
import uuid
from typing import Any, Dict

from contextasm import Client, Conversation

TEMPLATE = {"budget": 2000, "sections": [
    {"name": "RULES", "priority": 1, "memory_types": ["constraint"], "max_tokens": 400, "render": "{content}"},
    {"name": "DOCS", "priority": 2, "memory_types": ["external"], "max_tokens": 600,
     "render": "<doc id=\"{request_id}\">{content}</doc>"},
    {"name": "HISTORY", "priority": 3, "memory_types": ["history"], "max_tokens": 900, "render": "{content}",
     "order": "time", "partial": True}]}


def get_order(order: str) -> Dict[str, Any]:
    return {"order": order, "delivered": "2026-11-20", "amount_eur": 80}


def call_model(body: Dict[str, Any]) -> Dict[str, Any]:
    """Calls get_order first, then answers citing the policy."""
    last = body["messages"][-1]
    if last["role"] != "tool":
        return {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": '{"order": "A-17"}'}}]}}]}
    return {"choices": [{"message": {"role": "assistant",
                                     "content": '<memory_ref id="refund-policy"/> Delivered 2026-11-20: refundable.'}}],
            "usage": {"prompt_tokens": 300, "prompt_tokens_details": {"cached_tokens": 0}}}


def main() -> None:
    client = Client(os.environ.get("CONTEXTASM_URL", "http://127.0.0.1:7411"), api_key=os.environ.get("CONTEXTASM_API_KEY"))
    client.declare([{"request_id": "refund-policy", "memory_type": "external", "scope": "global",
                     "content": "Full refund within 30 days of delivery."}])
    conv = Conversation(client, template=TEMPLATE, session="demo-" + uuid.uuid4().hex[:6], format="openai",
                        system=["You are a support agent. Cite with <memory_ref id=\"...\"/>."])
    conv.add_user("My order A-17 arrived broken. Can I get a refund?")
    final = conv.run(call_model, tools={"get_order": get_order})
    print(final["choices"][0]["message"]["content"])
    assert conv.feedback is not None
    for change in conv.feedback["trust_changes"]:
        print(f"trust of {change['request_id']}: {change['from']:.2f} -> {change['to']:.2f}")
    client.end_session(conv.session)


if __name__ == "__main__":
    main()
