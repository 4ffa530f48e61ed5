// A client of contextasm serve over fetch: every call of the API, typed,
// and its failures as ContextasmError.
/** The default address of contextasm serve: loopback. */
export const DEFAULT_URL = "http://127.0.0.1:7411";
/** A failure the server reported: its status and the error body. */
export class ContextasmError extends Error {
    status;
    /** What went wrong, for a program to branch on (docs/server.md). */
    code;
    field;
    problems;
    required;
    constructor(status, body) {
        super(`${status} ${body.code}: ${body.message}`);
        this.name = "ContextasmError";
        this.status = status;
        this.code = body.code;
        this.field = body.field;
        this.problems = body.problems ?? [];
        this.required = body.required ?? [];
    }
}
/** A client of contextasm serve. */
export class Client {
    baseUrl;
    #key;
    #fetch;
    #timeout;
    constructor(options = {}) {
        this.baseUrl = (options.baseUrl ?? DEFAULT_URL).replace(/\/+$/, "");
        this.#key = options.apiKey;
        this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
        this.#timeout = options.timeoutMs ?? 30_000;
    }
    async #call(method, path, body) {
        const headers = { accept: "application/json" };
        if (this.#key)
            headers.authorization = `Bearer ${this.#key}`;
        const init = { method, headers, signal: AbortSignal.timeout(this.#timeout) };
        if (body !== undefined) {
            headers["content-type"] = "application/json";
            init.body = typeof body === "string" ? body : JSON.stringify(body);
        }
        const resp = await this.#fetch(this.baseUrl + path, init);
        const text = await resp.text();
        let parsed;
        try {
            parsed = text ? JSON.parse(text) : undefined;
        }
        catch {
            throw new ContextasmError(resp.status, { code: "not_json", message: text.slice(0, 200) });
        }
        if (resp.ok)
            return parsed;
        const err = parsed?.error;
        throw new ContextasmError(resp.status, err ?? { code: "unknown", message: text.slice(0, 200) });
    }
    /** Declares a batch of blocks, all or nothing; with replacePrefix they
     * become the blocks whose request_id starts with it. */
    declare(declarations, options = {}) {
        const q = options.replacePrefix !== undefined ? `?replace_prefix=${encodeURIComponent(options.replacePrefix)}` : "";
        return this.#call("POST", `/v1/declarations${q}`, declarations);
    }
    /** Forgets one block (404 when there is none). */
    forget(requestId) {
        return this.#call("DELETE", `/v1/declarations/${encodeURIComponent(requestId)}`);
    }
    /** Forgets every block whose request_id starts with prefix. */
    forgetPrefix(prefix) {
        return this.#call("DELETE", `/v1/declarations?prefix=${encodeURIComponent(prefix)}`);
    }
    /** Assembles a context: the text, or a chat API's body (format). */
    assemble(request) {
        return this.#call("POST", "/v1/assemble", request);
    }
    /** Learns from the model's response to an assembly, once. */
    feedback(assemblyId, response, options = {}) {
        return this.#call("POST", "/v1/feedback", { assembly_id: assemblyId, response, ...options });
    }
    /** Releases a session's blocks, decisions and retained assemblies. */
    endSession(session) {
        return this.#call("POST", `/v1/sessions/${encodeURIComponent(session)}/end`);
    }
    /** Counts tokens: {text} or {texts}, in encoding (o200k_base). */
    count(request) {
        return this.#call("POST", "/v1/count", request);
    }
    /** The dump of a retained assembly. */
    assembly(assemblyId) {
        return this.#call("GET", `/v1/assemblies/${encodeURIComponent(assemblyId)}`);
    }
    healthz() {
        return this.#call("GET", "/healthz");
    }
    readyz() {
        return this.#call("GET", "/readyz");
    }
}
