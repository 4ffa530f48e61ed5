"""The clients against the real server: every call, its errors, and a
tenant's isolation."""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from typing import Callable, List

import pytest

from contextasm import AsyncClient, Client, ContextasmError, Declaration
from conftest import HERE, KEYS, Server, start

NOW = "2026-11-30T09:00:00Z"


def fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def memory(session: str) -> List[Declaration]:
    return [
        {"request_id": f"{session}/rule", "memory_type": "constraint", "scope": "session", "session_id": session,
         "required": True, "content": "Cite what you use with <memory_ref id=\"...\"/>."},
        {"request_id": f"{session}/refunds", "memory_type": "constraint", "scope": "session", "session_id": session,
         "roles": ["support"], "content": "Refunds above EUR 100 need a supervisor."},
        {"request_id": f"{session}/audit", "memory_type": "constraint", "scope": "session", "session_id": session,
         "roles": ["auditor"], "content": "Auditors see every refund decision."},
        {"request_id": f"{session}/policy", "memory_type": "external", "scope": "session", "session_id": session,
         "provenance": {"uri": "kb://refund-policy"}, "content": "Full refund within 30 days."},
    ]


def test_declare_assemble_feedback(server: Server) -> None:
    s = fresh("s")
    with Client(server.url, api_key=KEYS["support"]) as c:
        assert c.healthz() == {"status": "ok"}
        assert c.declare(memory(s))["declared"] == 4
        out = c.assemble("support", session=s, now=NOW, blocks=True)
        ids = [b["request_id"] for b in out["blocks"]]
        assert f"{s}/refunds" in ids and f"{s}/audit" not in ids
        assert out["roles"] == ["support"]
        assert out["text"].startswith("[MODEL_CONTEXT_PROTOCOL v1.2")
        fb = c.feedback(out["assembly_id"], "A full refund.", cited=[{"id": "kb://refund-policy", "offset": 0}],
                        usage={"input_tokens": 120, "cached_tokens": 64})
        assert [t["request_id"] for t in fb["trust_changes"]] == [f"{s}/policy"]
        assert fb["stored"] is False  # no --state
        with pytest.raises(ContextasmError) as e:
            c.feedback(out["assembly_id"], "again")
        assert (e.value.status, e.value.code, e.value.field) == (409, "already_fed_back", "assembly_id")
        got = c.assembly(out["assembly_id"])
        assert got["fed_back"] is True and got["dump"]["text"] == out["text"]
        end = c.end_session(s)
        assert end["blocks"] == 4 and end["assemblies"] == 1


def test_chat_bodies(server: Server) -> None:
    s = fresh("chat")
    with Client(server.url, api_key=KEYS["support"]) as c:
        c.declare(memory(s) + [{"request_id": f"{s}/t1", "memory_type": "history", "scope": "session",
                                "session_id": s, "content": "Can I get a refund?",
                                "last_modified": "2026-11-30T08:59:00Z"}])
        o = c.assemble("support", session=s, now=NOW, format="openai")
        assert o["format"] == "openai"
        msgs = o["body"]["messages"]
        assert msgs[0]["role"] == "system" and msgs[-1] == {"role": "user", "content": "Can I get a refund?"}
        a = c.assemble("support", session=s, now=NOW, format="anthropic")
        assert a["body"]["system"][0]["type"] == "text"
        assert a["body"]["messages"][0]["role"] == "user"


def test_query_and_relevance(server: Server) -> None:
    s = fresh("q")
    policy = f"{s}/policy"
    with Client(server.url, api_key=KEYS["support"]) as c:
        c.declare(memory(s))
        by_text = c.assemble("support", session=s, now=NOW, fresh=True, dump=True, query="refund within 30 days")
        assert by_text["dump"]["query"]["from"] == "request"
        assert "refund within" not in str(by_text["dump"]["query"])  # named by hash, never by text
        scored = c.assemble("support", session=s, now=NOW, fresh=True, dump=True, relevance={policy: 0.75})
        assert scored["dump"]["query"] == {"from": "host", "sha256": scored["dump"]["query"]["sha256"], "scores": 1}
        rows = {b["request_id"]: b for sec in scored["dump"]["sections"] for b in sec["blocks"]}
        assert rows[policy]["relevance"] == 0.75
        none = c.assemble("support", session=s, now=NOW, fresh=True, dump=True, no_query=True)
        assert "query" not in none["dump"]
        for kwargs, field in (({"relevance": {policy: 1.5}}, f"relevance.{policy}"),
                              ({"query": "x", "no_query": True}, "no_query"),
                              ({"query": "x", "relevance": {}}, "relevance")):
            with pytest.raises(ContextasmError) as e:
                c.assemble("support", session=s, now=NOW, **kwargs)  # type: ignore[arg-type]
            assert (e.value.status, e.value.code, e.value.field) == (400, "invalid_request", field), kwargs


def test_forget_and_count(server: Server) -> None:
    s = fresh("f")
    with Client(server.url, api_key=KEYS["support"]) as c:
        c.declare(memory(s))
        assert c.forget(f"{s}/rule")["forgotten"] == 1
        with pytest.raises(ContextasmError) as e:
            c.forget(f"{s}/rule")
        assert e.value.status == 404 and e.value.code == "not_found"
        assert c.forget_prefix(f"{s}/")["forgotten"] == 3
        assert c.count("hello world")["tokens"] == 2
        counts = c.count(texts=["hello world", "a b c"], encoding="cl100k_base")
        assert counts["counts"] == [2, 3] and counts["tokens"] == 5


def test_errors_name_the_field(server: Server) -> None:
    s = fresh("e")
    with Client(server.url, api_key=KEYS["support"]) as c:
        with pytest.raises(ContextasmError) as e:
            c.declare([{"request_id": "ok", "memory_type": "context", "scope": "global", "content": "x"},
                       {"request_id": "bad", "memory_type": "context", "scope": "session", "content": "x"}])
        assert e.value.code == "invalid_declarations" and e.value.field == "declarations[1].session_id"
        assert e.value.problems[0]["index"] == 1
        with pytest.raises(ContextasmError) as e:
            c.assemble("support", session=s, roles=["auditor"])
        assert (e.value.status, e.value.code, e.value.field) == (403, "role_not_allowed", "roles[0]")
        with pytest.raises(ContextasmError) as e:
            c.assemble("nope")
        assert e.value.code == "unknown_template"
        c.declare(memory(s))
        with pytest.raises(ContextasmError) as e:
            c.assemble("support", session=s, now=NOW, budget=10)
        assert e.value.status == 422 and e.value.required[0]["request_id"] == f"{s}/rule"
    with Client(server.url, api_key="not-a-key-at-all") as c:
        with pytest.raises(ContextasmError) as e:
            c.assemble("support")
        assert e.value.status == 401


def test_tenants_do_not_meet(server: Server) -> None:
    s = fresh("t")
    with Client(server.url, api_key=KEYS["support"]) as acme, Client(server.url, api_key=KEYS["other"]) as beta:
        acme.declare(memory(s))
        out = acme.assemble("support", session=s, now=NOW)
        calls: List[Callable[[], object]] = [lambda: beta.assembly(out["assembly_id"]), lambda: beta.forget(f"{s}/rule"),
                                             lambda: beta.end_session(s), lambda: beta.feedback(out["assembly_id"], "x")]
        for call in calls:
            with pytest.raises(ContextasmError) as e:
                call()
            assert e.value.status == 404
        assert beta.forget_prefix(f"{s}/")["forgotten"] == 0
        assert acme.assembly(out["assembly_id"])["fed_back"] is False
        # Beta's own session of the same name holds nothing of acme's.
        b = beta.assemble("support", session=s, now=NOW, dump=True)
        assert "Refund" not in str(b) and s not in str(b["dump"])


def test_async_client(server: Server) -> None:
    s = fresh("a")

    async def main() -> None:
        async with AsyncClient(server.url, api_key=KEYS["support"]) as c:
            assert (await c.readyz())["status"] == "ready"
            await c.declare(memory(s))
            outs = await asyncio.gather(*(c.assemble("support", session=f"{s}", now=NOW) for _ in range(8)))
            assert len({o["text"] for o in outs}) == 1 and len({o["assembly_id"] for o in outs}) == 8
            fb = await c.feedback(outs[0]["assembly_id"], f"<memory_ref id=\"{s}/rule\"/>")
            assert fb["refs"][0]["request_id"] == f"{s}/rule"
            with pytest.raises(ContextasmError) as e:
                await c.count()
            assert e.value.code == "invalid_request" and e.value.field == "text"
            assert (await c.end_session(s))["assemblies"] == 8

    asyncio.run(main())


def test_unix_socket(binary: str) -> None:
    sock = os.path.join(tempfile.mkdtemp(), "s.sock")
    srv = start(binary, "--listen", "unix:" + sock, "--templates", str(HERE / "testdata" / "templates"))
    try:
        assert srv.url == "unix:" + sock
        with Client(srv.url, api_key=KEYS["support"]) as c:
            assert c.count("hello world")["tokens"] == 2

        async def main() -> int:
            return (await AsyncClient(srv.url, api_key=KEYS["support"]).count("hello world"))["tokens"]
        assert asyncio.run(main()) == 2
    finally:
        srv.proc.terminate()
        srv.proc.wait(timeout=20)
