// Command testserver is a small MCP server over stdio for the tests of
// package mcpsource and of the contextasm command: they build it from this
// source into a temporary directory, so no test needs npm or a network.
//
//	testserver [-name NAME] [-resources N] [-mode ok|hang|crash|crash-on-read|empty]
//
// Modes: ok serves N text resources test://NAME/doc/I; hang reads stdin
// and never answers; crash exits at once with a message on stderr;
// crash-on-read serves the list and dies on the first read; empty answers
// every read with no contents (a lie the 2026-07-28 revision forbids).
// In every mode the server exits when its stdin is closed, so a client's
// Close never has to wait for it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	name := flag.String("name", "test", "server name, used in URIs and contents")
	n := flag.Int("resources", 3, "number of resources")
	mode := flag.String("mode", "ok", "ok, hang, crash, crash-on-read or empty")
	pad := flag.Int("pad", 0, "bytes added to the last resource's text")
	flag.Parse()
	switch *mode {
	case "hang":
		_, _ = io.Copy(io.Discard, os.Stdin)
		return
	case "crash":
		fmt.Fprintln(os.Stderr, "testserver: crashing on purpose")
		os.Exit(3)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "testserver-" + *name, Version: "1"}, nil)
	for i := range *n {
		uri := fmt.Sprintf("test://%s/doc/%d", *name, i)
		text := fmt.Sprintf("Document %d of server %s.", i, *name)
		if i == *n-1 {
			text += strings.Repeat("p", *pad)
		}
		res := &mcp.Resource{URI: uri, Name: fmt.Sprintf("doc-%d", i), MIMEType: "text/plain"}
		if i == 0 {
			res.Annotations = &mcp.Annotations{Priority: 0.8, Audience: []mcp.Role{"assistant"}, LastModified: "2026-11-01T10:00:00Z"}
		}
		srv.AddResource(res, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			switch *mode {
			case "crash-on-read":
				fmt.Fprintln(os.Stderr, "testserver: dying mid-session")
				os.Exit(4)
			case "empty":
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}, nil
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}}, nil
		})
	}
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
	}
}
