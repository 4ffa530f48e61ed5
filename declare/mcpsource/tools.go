package mcpsource

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contextasm/contextasm/declare"
)

// ToolSink is a Sink that also takes tool definitions (*contextasm.Engine
// is one). A server whose Tools is set declares its tools into it: listed
// with tools/list (every page, bounded by MaxResources tools and MaxPages
// pages, like resources), listed again on notifications/tools/list_changed
// and at every periodic re-sync (a notification may be lost), and
// forgotten when the server stops listing them or its session fails (a
// tool of a server that is down cannot be called).
type ToolSink interface {
	DeclareTools(tools ...declare.Tool) error
	ForgetTools(names ...string) int
}

// toolSink returns the sink as a ToolSink when the server collects tools.
func (m *mcpSource) toolSink() (ToolSink, bool) {
	if !m.cfg.Tools {
		return nil, false
	}
	ts, ok := m.st.led.sink.(ToolSink)
	return ts, ok
}

// syncTools lists the server's tools and declares them, forgetting the
// ones it no longer lists. A tool that is not a valid declaration (a name
// too long once prefixed, a schema that is not an object) is skipped and
// logged. The error is a transport failure: it ends the session.
func (m *mcpSource) syncTools(ctx context.Context, cs *mcp.ClientSession, has bool) error {
	sink, ok := m.toolSink()
	if !ok {
		return nil
	}
	var listed []*mcp.Tool
	if has {
		var err error
		if listed, err = m.listTools(ctx, cs); err != nil {
			return err
		}
	}
	var tools []declare.Tool
	for _, t := range listed {
		dt, ok := m.tool(t)
		if !ok {
			continue
		}
		if err := declare.ValidateTools([]declare.Tool{dt}); err != nil {
			m.log.Info("tool not collected", "tool", t.Name, "error", err)
			continue
		}
		tools = append(tools, dt)
	}
	names := make(map[string]bool, len(tools))
	for _, t := range tools {
		names[t.Name] = true
	}
	var gone []string
	for _, n := range m.tools {
		if !names[n] {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		sink.ForgetTools(gone...)
	}
	if len(tools) > 0 {
		if err := sink.DeclareTools(tools...); err != nil {
			m.log.Warn("tools not declared", "error", err)
			return nil
		}
	}
	m.tools = m.tools[:0]
	for _, t := range tools {
		m.tools = append(m.tools, t.Name)
	}
	return nil
}

// forgetTools forgets every tool the server declared.
func (m *mcpSource) forgetTools() {
	if sink, ok := m.toolSink(); ok && len(m.tools) > 0 {
		sink.ForgetTools(m.tools...)
		m.tools = m.tools[:0]
	}
}

// tool returns t as a declaration, false when its name cannot be one.
func (m *mcpSource) tool(t *mcp.Tool) (declare.Tool, bool) {
	name, ok := declare.MCPToolName(m.cfg.Name, t.Name)
	if !ok {
		m.log.Info("tool not collected: its prefixed name is not 1 to 64 characters", "tool", t.Name)
		return declare.Tool{}, false
	}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		schema = []byte(`{"type":"object"}`)
	}
	roles := m.cfg.Roles
	if r, ok := m.cfg.ToolRoles[t.Name]; ok {
		roles = r
	}
	dt := declare.Tool{Name: name, Description: t.Description, InputSchema: schema, Roles: slices.Clone(roles),
		Source: "mcp:" + m.cfg.Name, Untrusted: !m.cfg.Trusted}
	if a := t.Annotations; a != nil {
		if a.ReadOnlyHint {
			dt.Annotations.ReadOnly = &a.ReadOnlyHint
		}
		if a.IdempotentHint {
			dt.Annotations.Idempotent = &a.IdempotentHint
		}
		dt.Annotations.Destructive, dt.Annotations.OpenWorld = a.DestructiveHint, a.OpenWorldHint
	}
	return dt, true
}

// listTools reads every page of tools/list, up to MaxPages pages and
// MaxResources tools; a repeated cursor ends the list.
func (m *mcpSource) listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	cursors := make(map[string]bool)
	params := &mcp.ListToolsParams{}
	for page := 1; ; page++ {
		rctx, cancel := bound(ctx, m.cfg.RequestTimeout, m.raw)
		res, err := cs.ListTools(rctx, params)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		for _, t := range res.Tools {
			if t == nil || t.Name == "" {
				continue
			}
			if len(out) == m.cfg.MaxResources {
				m.log.Warn("tool list cut", "max_resources", m.cfg.MaxResources)
				return out, nil
			}
			out = append(out, t)
		}
		next := res.NextCursor
		if next == "" || cursors[next] || page == m.cfg.MaxPages {
			if next != "" {
				m.log.Warn("tool list cut", "pages", page)
			}
			return out, nil
		}
		cursors[next] = true
		params = &mcp.ListToolsParams{Cursor: next}
	}
}

// notifyTools queues a new tools/list.
func (m *mcpSource) notifyTools() {
	m.mu.Lock()
	m.relistTools = true
	m.mu.Unlock()
	m.poke()
}
