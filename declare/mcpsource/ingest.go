package mcpsource

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contextasm/contextasm/declare"
)

// What cannot become a block. Ingest and Root wrap them; the collector turns
// them into events (binary, source_unavailable, outside_root).
var (
	// ErrBinary: the contents are binary (MCP blobs, or a file that is not
	// valid UTF-8 or holds a NUL byte).
	ErrBinary = errors.New("mcpsource: binary contents")
	// ErrEmpty: a read returned no contents, or only empty text. It is an
	// error for that resource, never an empty block.
	ErrEmpty = errors.New("mcpsource: empty contents")
	// ErrTooLarge: the contents exceed the content limit.
	ErrTooLarge = errors.New("mcpsource: contents too large")
	// ErrOutsideRoot: a path names something outside a file root.
	ErrOutsideRoot = errors.New("mcpsource: outside the root")
)

// RequestID returns the request_id of resource uri of MCP server server:
// "mcp:<server>:<uri>". Characters a request_id may not hold (whitespace,
// unprintable ones, invalid UTF-8) are percent-encoded byte by byte. An id
// longer than declare.MaxRequestIDLen characters keeps its first
// characters and ends in "~" and 16 hex digits of the SHA-256 of the whole
// uri, so that it stays unique and valid; provenance.uri keeps the uri whole.
func RequestID(server, uri string) string { return makeID("mcp:"+server+":", uri) }

// FileRequestID returns the request_id of the file at slash-separated path
// rel under file root root: "file:<root>:<rel>", encoded like [RequestID].
func FileRequestID(root, rel string) string { return makeID("file:"+root+":", rel) }

// hashSuffixLen is the length of "~" and 16 hex digits.
const hashSuffixLen = 17

func makeID(prefix, rest string) string {
	var b strings.Builder
	b.Grow(len(prefix) + len(rest))
	b.WriteString(prefix)
	for i := 0; i < len(rest); {
		r, size := utf8.DecodeRuneInString(rest[i:])
		if (r == utf8.RuneError && size == 1) || !unicode.IsPrint(r) || unicode.IsSpace(r) {
			for _, c := range []byte(rest[i : i+size]) {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		} else {
			b.WriteString(rest[i : i+size])
		}
		i += size
	}
	id := b.String()
	if utf8.RuneCountInString(id) <= declare.MaxRequestIDLen {
		return id
	}
	keep, n := 0, 0
	for i := range id {
		if n == declare.MaxRequestIDLen-hashSuffixLen {
			keep = i
			break
		}
		n++
	}
	sum := sha256.Sum256([]byte(rest))
	return id[:keep] + "~" + hex.EncodeToString(sum[:8])
}

// Ingest turns a listed resource r of server s and the result rr of reading
// it into a declaration (docs/sources.md): request_id [RequestID], memory type
// s.MemoryType (external by default), scope global, priority, audience and
// last_modified from r's annotations, provenance source_id s.Name,
// source_format the MIME type, uri r.URI. The declaration is valid for
// declare with s.MaxContentBytes.
//
// Text contents are joined with "\n" in the order read. Blob contents are
// skipped and counted in skippedBlobs; when nothing but blobs is left the
// error wraps ErrBinary. No contents, or only empty text, is ErrEmpty;
// content over the limit is ErrTooLarge.
//
// Annotations are hints from a server the host does not control: unless s
// is Trusted, the block is Untrusted and its priority never makes it
// required. A priority of 0 cannot be told from a missing one (the SDK
// omits a zero priority), so both mean s.DefaultPriority; a priority out
// of [0, 1] is clamped, NaN ignored. Audience values other than "user" and
// "assistant" are dropped; an audience of only unknown values means "not
// for the assistant" (declared as ["user"]). A lastModified that is not
// RFC 3339 is ignored.
func Ingest(s Server, r *mcp.Resource, rr *mcp.ReadResourceResult) (d declare.Declaration, skippedBlobs int, err error) {
	s = s.withDefaults()
	if r == nil || rr == nil {
		return d, 0, fmt.Errorf("mcpsource: Ingest: nil resource or read result")
	}
	var texts []string
	mime := ""
	for _, c := range rr.Contents {
		switch {
		case c == nil:
		case len(c.Blob) > 0:
			skippedBlobs++
		case c.Text != "":
			texts = append(texts, c.Text)
			if mime == "" {
				mime = c.MIMEType
			}
		}
	}
	if len(texts) == 0 {
		if skippedBlobs > 0 {
			return d, skippedBlobs, fmt.Errorf("%w: %s (%d blob(s), no text)", ErrBinary, r.URI, skippedBlobs)
		}
		return d, 0, fmt.Errorf("%w: %s", ErrEmpty, r.URI)
	}
	content := strings.Join(texts, "\n")
	if len(content) > s.MaxContentBytes {
		return d, skippedBlobs, fmt.Errorf("%w: %s is %d bytes, more than the limit of %d", ErrTooLarge, r.URI, len(content), s.MaxContentBytes)
	}
	if mime == "" {
		mime = r.MIMEType
	}
	d = declare.Declaration{
		RequestID:  RequestID(s.Name, r.URI),
		MemoryType: s.MemoryType,
		Scope:      declare.ScopeGlobal,
		Content:    content,
		Roles:      slices.Clone(s.Roles),
		Provenance: declare.Provenance{SourceID: s.Name, SourceFormat: mime, URI: r.URI},
		Untrusted:  !s.Trusted,
		Priority:   clonePtr(s.DefaultPriority),
	}
	if a := r.Annotations; a != nil {
		if p := a.Priority; p != 0 && !math.IsNaN(p) {
			p = min(max(p, 0), 1)
			d.Priority = &p
		}
		d.Audience = audience(a.Audience)
		if t, err := time.Parse(time.RFC3339Nano, a.LastModified); err == nil {
			t = t.UTC()
			d.LastModified = &t
		}
	}
	if err := (declare.Config{MaxContentBytes: s.MaxContentBytes}).Validate(&d); err != nil {
		return declare.Declaration{}, skippedBlobs, fmt.Errorf("mcpsource: %s: %w", r.URI, err)
	}
	return d, skippedBlobs, nil
}

// audience keeps the known audience values, once each, in order.
func audience(roles []mcp.Role) []string {
	if len(roles) == 0 {
		return nil
	}
	var out []string
	for _, r := range roles {
		if v := string(r); (v == declare.AudienceUser || v == declare.AudienceAssistant) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return []string{declare.AudienceUser}
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
