export type Format = "text" | "openai" | "anthropic" | "responses";
export interface ToolCall {
    id: string;
    name: string;
    arguments: string;
}
export interface Provenance {
    source_id?: string;
    source_format?: string;
    source_location?: string;
    uri?: string;
}
/** A memory block (docs/declarations.md). */
export interface Declaration {
    request_id: string;
    memory_type: "constraint" | "context" | "history" | "external";
    scope: "session" | "user" | "global";
    session_id?: string;
    user_id?: string;
    content?: string;
    semantic_weight?: number;
    trust_score?: number;
    priority?: number;
    required?: boolean;
    audience?: Array<"user" | "assistant">;
    valid_until?: string | number;
    stale_after?: string;
    idle_ttl?: string;
    last_modified?: string;
    roles?: string[];
    /** Blocks with the same key exclude each other: the most trusted eligible one enters (docs/declarations.md). */
    conflict_key?: string;
    /** An assistant turn's reasoning items, written unchanged where the provider needs them. */
    reasoning?: Array<Record<string, unknown>>;
    provenance?: Provenance;
    break_on_violation?: boolean;
    violation_patterns?: string[];
    role?: "user" | "assistant" | "tool";
    tool_calls?: ToolCall[];
    tool_call_id?: string;
    group?: string;
    variants?: string[];
    max_tokens?: number;
    supersedes?: string[];
    replaces?: string[];
}
export interface DeclareResponse {
    declared: number;
    blocks: number;
}
export interface ForgetResponse {
    forgotten: number;
    blocks: number;
}
/** An inline template (docs/templates.md). */
export interface TemplateDefinition {
    template_version?: string;
    budget: number;
    encoding?: string;
    sections: Array<Record<string, unknown>>;
    [key: string]: unknown;
}
export interface AssembleRequest {
    template: string | TemplateDefinition;
    session?: string;
    user?: string;
    roles?: string[];
    now?: string;
    format?: Format;
    fresh?: boolean;
    budget?: number;
    /** What the call is about (docs/relevance.md); absent: with a session,
     * the session's newest user turn. At most one of query, no_query and
     * relevance. */
    query?: string;
    /** Rank without relevance, whatever the session holds. */
    no_query?: boolean;
    /** A retriever's relevance of blocks by request_id, each from 0 to 1, in
     * place of the built-in scorer's; a block it leaves out scores 0. */
    relevance?: Record<string, number>;
    dump?: boolean;
    blocks?: boolean;
}
export interface Prefix {
    stable_bytes: number;
    stable_tokens: number;
    first_changed_section?: string;
    first_changed_block?: string;
    reason: string;
}
export interface Breakpoint {
    section: string;
    offset: number;
    tokens: number;
}
export interface SummarizeCandidate {
    section: string;
    ids: string[];
    tokens: number;
    from?: string;
    to?: string;
}
export interface Approximation {
    family: string;
    basis: string;
    ratio?: number;
    reports: number;
}
export interface KeptBlock {
    request_id: string;
    section: string;
    status: "kept" | "cut";
    tokens: number;
}
/** A chat format's request body: add the model and send it. */
export interface ChatBody {
    system?: Array<Record<string, unknown>>;
    /** openai and anthropic. */
    messages?: Array<Record<string, unknown>>;
    /** responses: the system part. */
    instructions?: string;
    /** responses: the conversation's items. */
    input?: Array<Record<string, unknown>>;
}
export interface AssembleResponse {
    assembly_id: string;
    format: Format;
    text: string;
    body?: ChatBody;
    total_tokens: number;
    budget: number;
    encoding: string;
    fingerprint: string;
    render_hash: string;
    now: string;
    roles: string[];
    state_version?: number;
    excluded_counts?: Record<string, number>;
    prefix?: Prefix;
    cache_breakpoints?: Breakpoint[];
    summarize_candidates?: SummarizeCandidate[];
    approximate?: Approximation;
    blocks?: KeptBlock[];
    dump?: Dump;
}
/** An assembly's dump (docs/dump.md). */
export interface Dump {
    protocol_version: string;
    fingerprint: string;
    render_hash: string;
    encoding: string;
    budget: number;
    total_tokens: number;
    now: string;
    sections: Array<SectionResult>;
    events: Array<Event>;
    excluded_counts?: Record<string, number>;
    prefix?: Prefix;
    cache_breakpoints?: Array<Breakpoint>;
    summarize_candidates?: Array<SummarizeCandidate>;
    text: string;
    state_version?: number;
    approximate?: Approximation;
    query?: Query;
    conflicts?: Array<Conflict>;
    template?: TemplateChoice;
    tools?: Tools;
}
/** A chat request's tools part: the tools sent and left out, with their tokens; hidden tools counted, never named. */
export interface Tools {
    kept: Array<{
        name: string;
        source: string;
        tokens: number;
        relevance?: number;
        required?: boolean;
    }>;
    left_out?: Array<{
        name: string;
        source: string;
        tokens: number;
        relevance?: number;
        reason: string;
    }>;
    hidden?: Record<string, number>;
    tokens: number;
    cap: number;
    method: string;
    approximate?: boolean;
}
/** What an assembly was about: named by hash and count, never by its text. */
export interface Query {
    from: "request" | "newest_user_turn" | "host";
    sha256: string;
    tokens?: number;
    block?: string;
    scores?: number;
}
export interface SectionResult {
    name: string;
    priority: number;
    max_tokens: number;
    used_tokens: number;
    blocks: Array<BlockResult>;
}
export interface BlockResult {
    request_id: string;
    memory_type: string;
    tokens: number;
    score: number;
    relevance?: number;
    relevance_points?: number;
    /** A block dropped for room that a block kept above it outranked by relevance alone. */
    lost_on_relevance?: boolean;
    status: "kept" | "cut" | "dropped";
    reason?: string;
    required?: boolean;
    trust: number;
    violation_patterns?: Array<string>;
    offset?: number;
    length?: number;
    source_id?: string;
    source_location?: string;
    uri?: string;
    group?: string;
    message?: number;
    variant?: number;
    by?: string;
}
export interface Event {
    kind: "excluded" | "dropped" | "cut" | "notice" | "source";
    section?: string;
    request_id: string;
    reason: string;
    tokens: number;
    group?: string;
    by?: string;
    variant?: number;
    conflict?: EventConflict;
}
/** The comparison that decided a conflict: the first on which the two blocks differ. */
export type ConflictRule = "required" | "trust" | "last_modified" | "semantic_weight" | "request_id";
/** What a conflict event compared: the key and the two blocks' trusts. */
export interface EventConflict {
    key: string;
    trust: number;
    by_trust: number;
    rule: ConflictRule;
}
/** One conflict_key among the eligible blocks: the block that entered and those it excluded. No content. */
export interface Conflict {
    key: string;
    winner: string;
    winner_trust: number;
    losers: Array<{
        request_id: string;
        trust: number;
        rule: ConflictRule;
    }>;
}
/** Which template of a fallback chain was used, and why the earlier ones were not. */
export interface TemplateChoice {
    used: number;
    fingerprint: string;
    skipped?: Array<{
        fingerprint: string;
        protocol_version: string;
        reason: "not_accepted" | "budget_too_small";
        detail?: string;
    }>;
}
export interface Citation {
    id: string;
    offset?: number;
    type?: string;
}
export interface Usage {
    input_tokens?: number;
    cached_tokens?: number;
    cache_write_tokens?: number;
}
export interface FeedbackRequest {
    assembly_id: string;
    response?: string;
    cited?: Citation[];
    usage?: Usage;
}
export interface Ref {
    request_id: string;
    type: string;
    position: "start" | "middle" | "end";
}
export interface TrustChange {
    request_id: string;
    from: number;
    to: number;
}
export interface Violation {
    request_id: string;
    pattern: string;
}
export interface FeedbackResponse {
    refs: Ref[];
    unknown_refs: string[];
    trust_changes: TrustChange[];
    violations: Violation[];
    model_response_hash: string;
    stored: boolean;
}
export interface EndResponse {
    blocks: number;
    decisions: number;
    assemblies: number;
    stored: boolean;
}
export interface CountRequest {
    encoding?: string;
    text?: string;
    texts?: string[];
}
export interface CountResponse {
    encoding: string;
    tokens: number;
    counts?: number[];
    approximate?: Approximation;
}
export interface AssemblyResponse {
    assembly_id: string;
    session?: string;
    created: string;
    fed_back: boolean;
    dump: Dump;
}
export interface Status {
    status: "ok" | "ready" | "not_ready";
}
export interface Problem {
    index?: number;
    line?: number;
    request_id?: string;
    field?: string;
    message: string;
}
export interface RequiredMiss {
    request_id: string;
    section?: string;
    tokens: number;
    limit: number;
    reason: string;
}
export interface ErrorBody {
    code: string;
    message: string;
    field?: string;
    problems?: Problem[];
    required?: RequiredMiss[];
}
