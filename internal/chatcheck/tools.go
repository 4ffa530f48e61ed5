package chatcheck

import (
	"encoding/json"
	"fmt"
)

// Tools, by the APIs' references: OpenAI's "tools" is a list of
// {"type":"function","function":{"name","description","parameters"}}
// (the Responses API's of {"type":"function","name","description",
// "parameters"}),
// Anthropic's a list of {"name","description","input_schema"} (with an
// optional cache_control, counted among the 4); a name is 1 to 64
// characters of [A-Za-z0-9_-], unique in the request; a schema is a JSON
// object whose "type" is "object".

// tools checks a Chat Completions body's tools.
func (c *openaiCheck) tools(raw json.RawMessage) {
	seen := make(map[string]bool)
	for i, t := range list(raw, "tools", &c.p) {
		at := fmt.Sprintf("tools[%d]", i)
		o := object(t, at, []string{"type", "function"}, &c.p)
		if o == nil {
			continue
		}
		if typ, _ := str(o["type"], at+".type", &c.p); typ != "function" {
			c.p.add("%s.type: %q, want \"function\"", at, typ)
		}
		f := object(o["function"], at+".function", []string{"name", "description", "parameters", "strict"}, &c.p)
		if f == nil {
			continue
		}
		toolDef(f, at+".function", "parameters", seen, &c.p)
	}
}

// tools checks a Responses API body's tools: function tools, flat.
func (c *responsesCheck) tools(raw json.RawMessage) {
	seen := make(map[string]bool)
	for i, t := range list(raw, "tools", &c.p) {
		at := fmt.Sprintf("tools[%d]", i)
		o := object(t, at, []string{"type", "name", "description", "parameters", "strict"}, &c.p)
		if o == nil {
			continue
		}
		if typ, _ := str(o["type"], at+".type", &c.p); typ != "function" {
			c.p.add("%s.type: %q, want \"function\"", at, typ)
		}
		toolDef(o, at, "parameters", seen, &c.p)
	}
}

// tools checks a Messages API body's tools.
func (c *anthropicCheck) tools(raw json.RawMessage) {
	seen := make(map[string]bool)
	for i, t := range list(raw, "tools", &c.p) {
		at := fmt.Sprintf("tools[%d]", i)
		o := object(t, at, []string{"name", "description", "input_schema", "cache_control"}, &c.p)
		if o == nil {
			continue
		}
		toolDef(o, at, "input_schema", seen, &c.p)
		c.cache(o, at)
	}
}

// toolDef checks a definition's name, description and schema.
func toolDef(o map[string]json.RawMessage, at, schemaKey string, seen map[string]bool, p *problems) {
	name, _ := str(o["name"], at+".name", p)
	switch {
	case !toolName.MatchString(name):
		p.add("%s.name: %q is not 1 to 64 characters of [A-Za-z0-9_-]", at, name)
	case seen[name]:
		p.add("%s.name: %q given twice", at, name)
	}
	seen[name] = true
	if d, ok := o["description"]; ok {
		str(d, at+".description", p)
	}
	var schema map[string]json.RawMessage
	if json.Unmarshal(o[schemaKey], &schema) != nil || schema == nil {
		p.add("%s.%s: not an object", at, schemaKey)
		return
	}
	var typ string
	if json.Unmarshal(schema["type"], &typ) != nil || typ != "object" {
		p.add("%s.%s.type: want \"object\"", at, schemaKey)
	}
}
