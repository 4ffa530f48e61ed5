import type { AssembleRequest, AssembleResponse, AssemblyResponse, Citation, CountRequest, CountResponse, Declaration, DeclareResponse, EndResponse, ErrorBody, FeedbackResponse, ForgetResponse, Problem, RequiredMiss, Status, Usage } from "./types.js";
export type * from "./types.js";
/** The default address of contextasm serve: loopback. */
export declare const DEFAULT_URL = "http://127.0.0.1:7411";
/** A failure the server reported: its status and the error body. */
export declare class ContextasmError extends Error {
    readonly status: number;
    /** What went wrong, for a program to branch on (docs/server.md). */
    readonly code: string;
    readonly field: string | undefined;
    readonly problems: Problem[];
    readonly required: RequiredMiss[];
    constructor(status: number, body: ErrorBody);
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
export declare class Client {
    #private;
    readonly baseUrl: string;
    constructor(options?: ClientOptions);
    /** Declares a batch of blocks, all or nothing; with replacePrefix they
     * become the blocks whose request_id starts with it. */
    declare(declarations: Declaration[], options?: {
        replacePrefix?: string;
    }): Promise<DeclareResponse>;
    /** Forgets one block (404 when there is none). */
    forget(requestId: string): Promise<ForgetResponse>;
    /** Forgets every block whose request_id starts with prefix. */
    forgetPrefix(prefix: string): Promise<ForgetResponse>;
    /** Assembles a context: the text, or a chat API's body (format). */
    assemble(request: AssembleRequest): Promise<AssembleResponse>;
    /** Learns from the model's response to an assembly, once. */
    feedback(assemblyId: string, response: string, options?: {
        cited?: Citation[];
        usage?: Usage;
    }): Promise<FeedbackResponse>;
    /** Releases a session's blocks, decisions and retained assemblies. */
    endSession(session: string): Promise<EndResponse>;
    /** Counts tokens: {text} or {texts}, in encoding (o200k_base). */
    count(request: CountRequest): Promise<CountResponse>;
    /** The dump of a retained assembly. */
    assembly(assemblyId: string): Promise<AssemblyResponse>;
    healthz(): Promise<Status>;
    readyz(): Promise<Status>;
}
