"""The API's bodies as typed dictionaries, as docs/openapi.json describes
them (tests/test_openapi.py holds each to its schema)."""

from typing import Any, Dict, List, Literal, NotRequired, TypedDict, Union

Format = Literal["text", "openai", "anthropic", "responses"]


class ToolCall(TypedDict):
    id: str
    name: str
    arguments: str


class Provenance(TypedDict, total=False):
    source_id: str
    source_format: str
    source_location: str
    uri: str


class Declaration(TypedDict, total=False):
    """A memory block (docs/declarations.md)."""

    request_id: str
    memory_type: Literal["constraint", "context", "history", "external"]
    scope: Literal["session", "user", "global"]
    session_id: str
    user_id: str
    content: str
    semantic_weight: float
    trust_score: float
    priority: float
    required: bool
    audience: List[str]
    valid_until: Union[str, float]
    stale_after: str
    idle_ttl: str
    last_modified: str
    roles: List[str]
    conflict_key: str
    reasoning: List[Dict[str, Any]]
    provenance: Provenance
    break_on_violation: bool
    violation_patterns: List[str]
    role: Literal["user", "assistant", "tool"]
    tool_calls: List[ToolCall]
    tool_call_id: str
    group: str
    variants: List[str]
    max_tokens: int
    supersedes: List[str]
    replaces: List[str]


class DeclareResponse(TypedDict):
    declared: int
    blocks: int


class ForgetResponse(TypedDict):
    forgotten: int
    blocks: int


class Prefix(TypedDict):
    stable_bytes: int
    stable_tokens: int
    first_changed_section: NotRequired[str]
    first_changed_block: NotRequired[str]
    reason: str


class Breakpoint(TypedDict):
    section: str
    offset: int
    tokens: int


# "from" is a Python keyword: these two are spelled as calls.
SummarizeCandidate = TypedDict("SummarizeCandidate", {
    "section": str, "ids": List[str], "tokens": int, "from": NotRequired[str], "to": NotRequired[str]})


class Approximation(TypedDict):
    family: str
    basis: str
    ratio: NotRequired[float]
    reports: int


class AssembleRequest(TypedDict, total=False):
    """The body of POST /v1/assemble (Client.assemble builds it)."""

    template: Union[str, Dict[str, Any]]
    session: str
    user: str
    roles: List[str]
    now: str
    format: Format
    fresh: bool
    budget: int
    query: str
    no_query: bool
    relevance: Dict[str, float]
    dump: bool
    blocks: bool


# What an assembly was about (a dump's "query"): named by hash and count.
Query = TypedDict("Query", {
    "from": Literal["request", "newest_user_turn", "host"], "sha256": str, "tokens": NotRequired[int],
    "block": NotRequired[str], "scores": NotRequired[int]})


class KeptBlock(TypedDict):
    request_id: str
    section: str
    status: Literal["kept", "cut"]
    tokens: int


class AssembleResponse(TypedDict):
    assembly_id: str
    format: Format
    text: str
    body: NotRequired[Dict[str, Any]]
    total_tokens: int
    budget: int
    encoding: str
    fingerprint: str
    render_hash: str
    now: str
    roles: List[str]
    state_version: NotRequired[int]
    excluded_counts: NotRequired[Dict[str, int]]
    prefix: NotRequired[Prefix]
    cache_breakpoints: NotRequired[List[Breakpoint]]
    summarize_candidates: NotRequired[List[SummarizeCandidate]]
    approximate: NotRequired[Approximation]
    blocks: NotRequired[List[KeptBlock]]
    dump: NotRequired[Dict[str, Any]]


class Citation(TypedDict, total=False):
    id: str
    offset: int
    type: str


class Usage(TypedDict, total=False):
    input_tokens: int
    cached_tokens: int
    cache_write_tokens: int


class Ref(TypedDict):
    request_id: str
    type: str
    position: Literal["start", "middle", "end"]


TrustChange = TypedDict("TrustChange", {"request_id": str, "from": float, "to": float})


class Violation(TypedDict):
    request_id: str
    pattern: str


class FeedbackResponse(TypedDict):
    refs: List[Ref]
    unknown_refs: List[str]
    trust_changes: List[TrustChange]
    violations: List[Violation]
    model_response_hash: str
    stored: bool


class EndResponse(TypedDict):
    blocks: int
    decisions: int
    assemblies: int
    stored: bool


class CountResponse(TypedDict):
    encoding: str
    tokens: int
    counts: NotRequired[List[int]]
    approximate: NotRequired[Approximation]


class AssemblyResponse(TypedDict):
    assembly_id: str
    session: NotRequired[str]
    created: str
    fed_back: bool
    dump: Dict[str, Any]


class Status(TypedDict):
    status: str
