package main

import (
	"strings"
	"testing"

	"github.com/contextasm/contextasm/internal/chatcheck"
)

const demoToolsFile = "demo/tools.jsonl"

// TestRenderTools: --tools puts the tools a role may see into the body,
// the others nowhere; a bad tools file is a usage error naming its line.
func TestRenderTools(t *testing.T) {
	args := []string{"render", "-t", "demo/template.json", "-m", "demo/memories.jsonl", "--tools", demoToolsFile,
		"--session", "sess-4711", "--user", "u-ana", "--now", "2026-11-30T09:00:00Z", "--format", "anthropic"}
	code, out, errOut := runCLI(t, append(args, "--role", "loan-agent")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if err := chatcheck.Anthropic([]byte(out), chatcheck.Options{}); err != nil {
		t.Error(err)
	}
	if !strings.Contains(out, `"name": "send_offer_email"`) || strings.Contains(out, "get_credit_report") {
		t.Errorf("a loan agent's tools are wrong:\n%s", out)
	}
	_, out, _ = runCLI(t, append(args, "--role", "credit-officer")...)
	if !strings.Contains(out, `"name": "get_credit_report"`) || strings.Contains(out, "send_offer_email") {
		t.Errorf("a credit officer's tools are wrong")
	}
	bad := writeFile(t, t.TempDir(), "bad.jsonl", `{"name":"x","input_schema":{"type":"array"}}`+"\n")
	code, _, errOut = runCLI(t, "render", "-t", "demo/template.json", "-m", "demo/memories.jsonl", "--tools", bad, "--format", "openai")
	if code != exitUsage || !strings.Contains(errOut, "bad.jsonl:1: input_schema: tool \"x\"") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestAuthorizeCLI(t *testing.T) {
	base := []string{"authorize", "-t", "demo/template.json", "--tools", demoToolsFile}
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"--tool", "get_credit_report", "--role", "credit-officer"}, exitOK, "allowed: get_credit_report"},
		{[]string{"--tool", "get_credit_report", "--role", "loan-agent"}, exitRefused, `tool "get_credit_report" refused: the request holds roles loan-agent, which does not include the role credit-officer`},
		{[]string{"--tool", "get_credit_report"}, exitRefused, "the request holds no role"},
		{[]string{"--tool", "wire_money", "--role", "loan-agent"}, exitRefused, `unknown tool: "wire_money"`},
		{[]string{"--role", "loan-agent"}, exitUsage, "--tool NAME are required"},
	} {
		code, out, errOut := runCLI(t, append(base, tc.args...)...)
		if code != tc.code || !strings.Contains(out+errOut, tc.out) {
			t.Errorf("%v: exit %d, %q%q; want %d, %q", tc.args, code, out, errOut, tc.code, tc.out)
		}
	}
}
