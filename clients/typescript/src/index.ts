// A client of contextasm serve over fetch: every call of the API, typed,
// and its failures as ContextasmError.

import type {
  AssembleRequest, AssembleResponse, AssemblyResponse, Citation, CountRequest, CountResponse, Declaration,
  DeclareResponse, EndResponse, ErrorBody, FeedbackResponse, ForgetResponse, Problem, RequiredMiss, Status, Usage,
} from "./types.js";

export type * from "./types.js";

/** The default address of contextasm serve: loopback. */
export const DEFAULT_URL = "http://127.0.0.1:7411";

/** A failure the server reported: its status and the error body. */
export class ContextasmError extends Error {
  readonly status: number;
  /** What went wrong, for a program to branch on (docs/server.md). */
  readonly code: string;
  readonly field: string | undefined;
  readonly problems: Problem[];
  readonly required: RequiredMiss[];

  constructor(status: number, body: ErrorBody) {
    super(`${status} ${body.code}: ${body.message}`);
    this.name = "ContextasmError";
    this.status = status;
    this.code = body.code;
    this.field = body.field;
    this.problems = body.problems ?? [];
    this.required = body.required ?? [];
  }
}

export interface ClientOptions {
  /** http://host:port of the server (DEFAULT_URL). */
  baseUrl?: string;
  /** The API key, sent as a bearer token; a server without keys takes none. */
  apiKey?: string;
  /** The fetch to use (globalThis.fetch). */
  fetch?: typeof fetch;
  /** Each request's timeout, in milliseconds (30 s). */
  timeoutMs?: number;
}

/** A client of contextasm serve. */
export class Client {
  readonly baseUrl: string;
  readonly #key: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #timeout: number;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? DEFAULT_URL).replace(/\/+$/, "");
    this.#key = options.apiKey;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#timeout = options.timeoutMs ?? 30_000;
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.#key) headers.authorization = `Bearer ${this.#key}`;
    const init: RequestInit = { method, headers, signal: AbortSignal.timeout(this.#timeout) };
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      init.body = typeof body === "string" ? body : JSON.stringify(body);
    }
    const resp = await this.#fetch(this.baseUrl + path, init);
    const text = await resp.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new ContextasmError(resp.status, { code: "not_json", message: text.slice(0, 200) });
    }
    if (resp.ok) return parsed as T;
    const err = (parsed as { error?: ErrorBody } | undefined)?.error;
    throw new ContextasmError(resp.status, err ?? { code: "unknown", message: text.slice(0, 200) });
  }

  /** Declares a batch of blocks, all or nothing; with replacePrefix they
   * become the blocks whose request_id starts with it. */
  declare(declarations: Declaration[], options: { replacePrefix?: string } = {}): Promise<DeclareResponse> {
    const q = options.replacePrefix !== undefined ? `?replace_prefix=${encodeURIComponent(options.replacePrefix)}` : "";
    return this.#call("POST", `/v1/declarations${q}`, declarations);
  }

  /** Forgets one block (404 when there is none). */
  forget(requestId: string): Promise<ForgetResponse> {
    return this.#call("DELETE", `/v1/declarations/${encodeURIComponent(requestId)}`);
  }

  /** Forgets every block whose request_id starts with prefix. */
  forgetPrefix(prefix: string): Promise<ForgetResponse> {
    return this.#call("DELETE", `/v1/declarations?prefix=${encodeURIComponent(prefix)}`);
  }

  /** Assembles a context: the text, or a chat API's body (format). */
  assemble(request: AssembleRequest): Promise<AssembleResponse> {
    return this.#call("POST", "/v1/assemble", request);
  }

  /** Learns from the model's response to an assembly, once. */
  feedback(assemblyId: string, response: string, options: { cited?: Citation[]; usage?: Usage } = {}): Promise<FeedbackResponse> {
    return this.#call("POST", "/v1/feedback", { assembly_id: assemblyId, response, ...options });
  }

  /** Releases a session's blocks, decisions and retained assemblies. */
  endSession(session: string): Promise<EndResponse> {
    return this.#call("POST", `/v1/sessions/${encodeURIComponent(session)}/end`);
  }

  /** Counts tokens: {text} or {texts}, in encoding (o200k_base). */
  count(request: CountRequest): Promise<CountResponse> {
    return this.#call("POST", "/v1/count", request);
  }

  /** The dump of a retained assembly. */
  assembly(assemblyId: string): Promise<AssemblyResponse> {
    return this.#call("GET", `/v1/assemblies/${encodeURIComponent(assemblyId)}`);
  }

  healthz(): Promise<Status> {
    return this.#call("GET", "/healthz");
  }

  readyz(): Promise<Status> {
    return this.#call("GET", "/readyz");
  }
}
