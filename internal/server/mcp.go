package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP tool and prompt of serve --mcp.
const (
	mcpTool   = "assemble_context"
	mcpPrompt = "context"
)

// mcpArgs are the tool's arguments: an assemble request's, the template
// by name.
type mcpArgs struct {
	Template string   `json:"template" jsonschema:"the name of a template of the server's directory"`
	Session  string   `json:"session,omitempty" jsonschema:"the session whose context to assemble"`
	User     string   `json:"user,omitempty" jsonschema:"the user the context is for"`
	Roles    []string `json:"roles,omitempty" jsonschema:"the roles the request holds, within the API key's; absent: all of the key's"`
	Format   string   `json:"format,omitempty" jsonschema:"text (the default), openai, anthropic or responses"`
	Fresh    bool     `json:"fresh,omitempty" jsonschema:"decide from scratch rather than follow the session's previous assembly"`
	Now      string   `json:"now,omitempty" jsonschema:"the instant to judge expiry at, RFC 3339; absent: the server's clock"`
	Query    string   `json:"query,omitempty" jsonschema:"what the call is about: relevant blocks rank higher; absent: the session's newest user turn"`
	NoQuery  bool     `json:"no_query,omitempty" jsonschema:"rank without relevance, whatever the session holds"`
	// Relevance is a retriever's scores by request_id, from 0 to 1.
	Relevance map[string]float64 `json:"relevance,omitempty" jsonschema:"a retriever's relevance of blocks by request_id, each from 0 to 1, in place of the built-in scorer's"`
}

// mcpResult is the tool's structured result.
type mcpResult struct {
	AssemblyID  string `json:"assembly_id" jsonschema:"for POST /v1/feedback with the model's response"`
	Format      string `json:"format"`
	TotalTokens int    `json:"total_tokens"`
	Fingerprint string `json:"fingerprint"`
}

// mcpHandler serves MCP over streamable HTTP, stateless: every request
// carries its own API key, so no MCP session can pass from one key to
// another.
func (s *Server) mcpHandler() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "contextasm", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: mcpTool,
		Description: "Assemble the context for a session from the memory declared to the server: the text (or a chat API's request body) to send the model."},
		func(ctx context.Context, req *mcp.CallToolRequest, args mcpArgs) (*mcp.CallToolResult, mcpResult, error) {
			a, aerr := s.mcpAssemble(ctx, req.Extra, args)
			if aerr != nil {
				return nil, mcpResult{}, errors.New(aerr.Error())
			}
			text := a.res.Text
			if a.res.Format != 0 {
				text = string(a.res.Body())
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}},
				mcpResult{AssemblyID: a.id, Format: formatName(a.res.Format), TotalTokens: a.res.TotalTokens, Fingerprint: a.res.Fingerprint}, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: mcpPrompt, Description: "The assembled context of a session, as one message.",
		Arguments: []*mcp.PromptArgument{
			{Name: "template", Description: "the name of a template of the server's directory", Required: true},
			{Name: "session", Description: "the session whose context to assemble"},
			{Name: "user", Description: "the user the context is for"},
			{Name: "query", Description: "what the call is about; absent: the session's newest user turn"},
		}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			args := req.Params.Arguments
			a, aerr := s.mcpAssemble(ctx, req.Extra, mcpArgs{Template: args["template"], Session: args["session"], User: args["user"], Query: args["query"]})
			if aerr != nil {
				return nil, errors.New(aerr.Error())
			}
			return &mcp.GetPromptResult{Description: "assembly " + a.id,
				Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: a.res.Text}}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, aerr := s.authorize(r); aerr != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="contextasm"`)
			s.fail(w, r, "/mcp", aerr)
			return
		}
		if s.closed.Load() {
			s.fail(w, r, "/mcp", newError(http.StatusServiceUnavailable, codeShuttingDown, "", "the server is shutting down"))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		h.ServeHTTP(w, r)
	})
}

// mcpAssemble runs a tool or prompt call's assembly with the key its HTTP
// request carried.
func (s *Server) mcpAssemble(ctx context.Context, extra *mcp.RequestExtra, args mcpArgs) (*assembly, *apiError) {
	r := &http.Request{Header: http.Header{}}
	if extra != nil && extra.Header != nil {
		r.Header = extra.Header
	}
	key, aerr := s.authorize(r)
	if aerr != nil {
		return nil, aerr
	}
	name, err := json.Marshal(args.Template)
	if err != nil {
		return nil, badRequest(codeInvalid, "template", "%v", err)
	}
	req := &assembleRequest{Template: name, Session: args.Session, User: args.User, Format: args.Format, Fresh: args.Fresh,
		Query: args.Query, NoQuery: args.NoQuery, Relevance: args.Relevance}
	if args.Roles != nil {
		req.Roles = &args.Roles
	}
	if args.Now != "" {
		req.Now = &args.Now
	}
	if strings.TrimSpace(args.Template) == "" {
		return nil, badRequest(codeInvalid, "template", "missing: the name of a template of the server's directory")
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	a, _, aerr := s.run(ctx, s.tenants[key.Tenant], key, req)
	return a, aerr
}
