"""The client's types against docs/openapi.json, the API's source of
truth: each TypedDict names exactly its schema's fields, a response type
requires what the schema requires, and every request body the client
builds uses only its schema's fields."""

from __future__ import annotations

import json
from typing import Any, Dict, get_type_hints

import pytest

from contextasm import _core, _types
from conftest import ROOT

SPEC = json.loads((ROOT / "docs" / "openapi.json").read_text())
SCHEMAS: Dict[str, Any] = SPEC["components"]["schemas"]

RESPONSES = ["DeclareResponse", "ForgetResponse", "Prefix", "Breakpoint", "SummarizeCandidate", "Approximation",
             "KeptBlock", "AssembleResponse", "Ref", "TrustChange", "Violation", "FeedbackResponse", "EndResponse",
             "CountResponse", "AssemblyResponse", "Status", "ToolCall", "Query"]
REQUESTS = ["Declaration", "Provenance", "Citation", "Usage", "AssembleRequest"]


@pytest.mark.parametrize("name", RESPONSES + REQUESTS)
def test_fields(name: str) -> None:
    td = getattr(_types, name)
    assert set(get_type_hints(td)) == set(SCHEMAS[name]["properties"]), name


@pytest.mark.parametrize("name", RESPONSES)
def test_required(name: str) -> None:
    td = getattr(_types, name)
    assert set(td.__required_keys__) == set(SCHEMAS[name].get("required", [])), name


def test_request_bodies() -> None:
    a = _core.assemble({"budget": 1, "sections": []}, "s", "u", ["r"], "2026-11-30T09:00:00Z", "openai", True, 10,
                       True, True, "q", True, {"a": 0.5})
    assert a.body is not None and set(json.loads(a.body)) == set(SCHEMAS["AssembleRequest"]["properties"])
    f = _core.feedback("asm_1", "x", [{"id": "a", "offset": 0}], {"input_tokens": 1})
    assert f.body is not None and set(json.loads(f.body)) == set(SCHEMAS["FeedbackRequest"]["properties"])
    c = _core.count("x", ["y"], "cl100k_base")
    assert c.body is not None and set(json.loads(c.body)) == set(SCHEMAS["CountRequest"]["properties"])
    paths = SPEC["paths"]
    for call, path in ((a, "/v1/assemble"), (f, "/v1/feedback"), (c, "/v1/count"),
                       (_core.end_session("s"), "/v1/sessions/{id}/end"), (_core.assembly("x"), "/v1/assemblies/{id}"),
                       (_core.forget("a/b"), "/v1/declarations/{id}"), (_core.forget_prefix("p"), "/v1/declarations"),
                       (_core.declare([], "p"), "/v1/declarations")):
        assert call.method.lower() in paths[path], (call.method, path)
