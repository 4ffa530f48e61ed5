// Package server is contextasm serve: the engine as an HTTP/JSON service
// for hosts in any language (docs/server.md; the API's source of truth is
// docs/openapi.json).
//
// A Server holds one contextasm.Engine per tenant. API keys (Keys) name
// a key's tenant and the roles it may use; a request narrows those roles
// and never widens them, and reaches its tenant's blocks, sessions and
// assemblies only: another tenant's answer 404, as what does not exist
// does. Each tenant's learned state goes to a store of its own
// (Config.State), so replicas of one tenant on one Redis learn together
// and tenants never mix.
//
// Every failure answers {"error": {"code", "message", "field"}} with the
// status docs/server.md lists; the library's sentinels map to them in
// one place (fromEngine). Bodies are bounded (413), assemblies run in a
// bounded number of slots (503 overloaded past a short wait), every
// request has a deadline, and Run shuts down gracefully, flushing each
// tenant's learned state before it closes the store.
//
// Assemblies are kept for a while (Config.Retain, RetainFor) under an
// unguessable id, for feedback and GET /v1/assemblies/{id}. /metrics is
// Prometheus's text format from a registry of the Server's own, with no
// tenant label. With Config.MCP, /mcp serves a tool and a prompt over the
// Model Context Protocol's streamable HTTP, stateless, each request
// authenticated with the same keys.
package server
