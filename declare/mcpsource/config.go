package mcpsource

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contextasm/contextasm/declare"
)

// Defaults for the zero values of [Server] and [Files].
const (
	DefaultConnectTimeout    = 10 * time.Second
	DefaultRequestTimeout    = 10 * time.Second
	DefaultListInterval      = time.Minute
	DefaultScanInterval      = 30 * time.Second
	DefaultKeepFor           = 15 * time.Minute
	DefaultMinBackoff        = time.Second
	DefaultMaxBackoff        = time.Minute
	DefaultTerminateDuration = time.Second
	DefaultMaxResources      = 1000
	DefaultMaxPages          = 100
	DefaultMaxFiles          = 10000
	// DefaultMaxSourceBytes bounds the content all the blocks of one
	// source hold together.
	DefaultMaxSourceBytes = 64 << 20
)

// DefaultMaxResponseBytes returns the bound of one HTTP response from a
// server whose blocks may hold maxContent bytes: room for that content
// JSON-escaped (six bytes a byte at worst) and 1 MiB more; 7 MiB for the
// default content limit.
func DefaultMaxResponseBytes(maxContent int) int { return 6*maxContent + 1<<20 }

// ErrConfig is wrapped by every error about an invalid [Config].
var ErrConfig = errors.New("mcpsource: invalid configuration")

// Config lists the sources a [Collector] runs. Its zero value runs none.
type Config struct {
	// Servers are the MCP servers to collect resources from.
	Servers []Server
	// Files are the local directories to collect text files from.
	Files []Files
	// Logger, when set, receives the sources' connection and sync problems
	// (they also reach the engine as events, and [Collector.Status]).
	Logger *slog.Logger
}

// Server configures one MCP server. Exactly one of Command, URL and
// Transport says how to reach it. Zero values mean the documented defaults.
type Server struct {
	// Name is the server's name in request_ids ("mcp:<Name>:<uri>"):
	// 1 to 64 ASCII letters, digits, '.', '_' or '-', starting with a letter
	// or digit, unique among the servers of one Config.
	Name string
	// Command starts the server as a subprocess and talks to it over its
	// stdin and stdout (argv: program first; no shell is involved).
	Command []string
	// Env, when set, is the subprocess's environment (default: ours).
	Env []string
	// URL is a streamable HTTP endpoint.
	URL string
	// HTTPClient is used for URL (default http.DefaultClient).
	HTTPClient *http.Client
	// Transport, when set, makes the transport of each connection attempt:
	// for in-process servers and transports of the host's own.
	Transport func() (mcp.Transport, error)

	// MemoryType of the blocks (default declare.External).
	MemoryType declare.MemoryType
	// Trusted lets the server's priority annotation of 1 make a block
	// required. Blocks of an untrusted server (the default) take their
	// priority as a ranking hint only, so the server cannot make assembly
	// fail.
	Trusted bool
	// Roles, when set, restrict the blocks to requests holding one of them.
	Roles []string
	// DefaultPriority is the priority of a resource whose annotations carry
	// none, or carry 0: the two look the same on the wire. Nil (the default)
	// means no priority hint, which the engine scores as 0.5.
	DefaultPriority *float64

	// ConnectTimeout bounds one connection attempt, handshake included
	// (DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// RequestTimeout bounds each list, read and subscribe request
	// (DefaultRequestTimeout). A request that exceeds it counts as the
	// server failing: the session is closed and re-opened with backoff.
	// It also bounds closing a session: past it, and past it for a
	// request stuck writing to a server that stopped reading, the
	// connection is closed under the SDK.
	RequestTimeout time.Duration
	// ListInterval is the period of the full re-sync (list and read
	// everything) that runs even when the server sends notifications,
	// because notifications can be lost (DefaultListInterval). Negative
	// disables it.
	ListInterval time.Duration
	// KeepFor is how long a block's last good content is kept after the
	// server, or that one read, fails transiently (DefaultKeepFor): the
	// block gets valid_until = last good read + KeepFor. Negative drops
	// blocks at once.
	KeepFor time.Duration
	// MinBackoff and MaxBackoff bound the wait between reconnection
	// attempts, which doubles from MinBackoff after every failure
	// (DefaultMinBackoff, DefaultMaxBackoff).
	MinBackoff, MaxBackoff time.Duration
	// TerminateDuration is how long closing a Command server waits for it
	// to exit after its stdin is closed, before SIGTERM and then SIGKILL
	// (DefaultTerminateDuration).
	TerminateDuration time.Duration
	// MaxResources caps the resources collected from one listing, in list
	// order (DefaultMaxResources); MaxPages caps the pages read for it
	// (DefaultMaxPages), against a server that pages forever.
	MaxResources int
	// MaxPages caps the pages read for one listing (DefaultMaxPages).
	MaxPages int
	// MaxContentBytes bounds a block's content (declare's 1 MiB default).
	// A larger resource is not declared; it gets a source_unavailable event.
	MaxContentBytes int
	// MaxResponseBytes bounds the body of one HTTP response of a URL
	// server, each event of its notification stream, and each message of
	// a Command server, so that a server cannot make the process hold
	// more (DefaultMaxResponseBytes of MaxContentBytes). A larger response
	// ends the session like a transport failure, with an error naming the
	// limit: the source's blocks keep their last good content (KeepFor),
	// and a resource whose read was too large gets a source_unavailable
	// event and is not read again until its listing changes or the server
	// notifies an update.
	MaxResponseBytes int
	// MaxSourceBytes bounds the content all the server's blocks hold
	// together (DefaultMaxSourceBytes). A read that would take the source
	// past it is not declared: the block keeps its last good content
	// (KeepFor) with a source_unavailable event.
	MaxSourceBytes int
	// Tools collects the server's tools (tools/list) into a Sink that is a
	// ToolSink, named "<Name>__<tool>", with the server's Roles (ToolRoles
	// overriding them per tool) and Trusted (tools.go).
	Tools bool
	// ToolRoles, when set, are the roles a request needs for a tool, by
	// the tool's own name on the server, in place of Roles.
	ToolRoles map[string][]string
}

// Files configures one local directory whose regular text files become
// blocks, read through an [os.Root] so that nothing outside it is reached.
type Files struct {
	// Name is the root's name in request_ids ("file:<Name>:<path>"), with
	// the rules of [Server.Name], unique among the roots of one Config.
	Name string
	// Dir is the directory.
	Dir string
	// MemoryType, Trusted, Roles and MaxContentBytes mean what they mean
	// for a [Server].
	MemoryType declare.MemoryType
	// Trusted marks the root's blocks as from a source the host controls,
	// as [Server.Trusted] does.
	Trusted bool
	// Roles, when set, restrict the root's blocks to requests holding one of
	// them.
	Roles []string
	// MaxContentBytes bounds a file's content (declare's 1 MiB default).
	MaxContentBytes int
	// MaxSourceBytes bounds the content all the root's blocks hold
	// together (DefaultMaxSourceBytes): a scan stops taking files once
	// they would pass it, and the files it leaves get source_unavailable
	// events.
	MaxSourceBytes int
	// ScanInterval is the period of re-scans (DefaultScanInterval);
	// negative scans once.
	ScanInterval time.Duration
	// MaxFiles caps the files read per scan, in walk order
	// (DefaultMaxFiles).
	MaxFiles int
}

// withDefaults returns s with its zero values replaced by the defaults.
func (s Server) withDefaults() Server {
	if s.MemoryType == "" {
		s.MemoryType = declare.External
	}
	setDur(&s.ConnectTimeout, DefaultConnectTimeout)
	setDur(&s.RequestTimeout, DefaultRequestTimeout)
	setDur(&s.ListInterval, DefaultListInterval)
	setDur(&s.KeepFor, DefaultKeepFor)
	setDur(&s.MinBackoff, DefaultMinBackoff)
	setDur(&s.MaxBackoff, DefaultMaxBackoff)
	setDur(&s.TerminateDuration, DefaultTerminateDuration)
	if s.MaxBackoff < s.MinBackoff {
		s.MaxBackoff = s.MinBackoff
	}
	setInt(&s.MaxResources, DefaultMaxResources)
	setInt(&s.MaxPages, DefaultMaxPages)
	setInt(&s.MaxContentBytes, declare.DefaultMaxContentBytes)
	setInt(&s.MaxResponseBytes, DefaultMaxResponseBytes(s.MaxContentBytes))
	setInt(&s.MaxSourceBytes, DefaultMaxSourceBytes)
	return s
}

// withDefaults returns f with its zero values replaced by the defaults.
func (f Files) withDefaults() Files {
	if f.MemoryType == "" {
		f.MemoryType = declare.External
	}
	setDur(&f.ScanInterval, DefaultScanInterval)
	setInt(&f.MaxFiles, DefaultMaxFiles)
	setInt(&f.MaxContentBytes, declare.DefaultMaxContentBytes)
	setInt(&f.MaxSourceBytes, DefaultMaxSourceBytes)
	return f
}

func setDur(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

func setInt(n *int, def int) {
	if *n <= 0 {
		*n = def
	}
}

// validate checks the configuration and returns every problem.
func (c *Config) validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	seen := make(map[string]bool)
	for i, s := range c.Servers {
		where := fmt.Sprintf("Servers[%d] (%q)", i, s.Name)
		if !validName(s.Name) {
			bad("%s: Name must be 1 to 64 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit", where)
		}
		if seen[s.Name] {
			bad("%s: Name is used twice", where)
		}
		seen[s.Name] = true
		n := 0
		if len(s.Command) > 0 {
			n++
			if s.Command[0] == "" {
				bad("%s: Command has an empty program name", where)
			}
		}
		if s.URL != "" {
			n++
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad("%s: URL %q is not an http or https URL", where, s.URL)
			}
		}
		if s.Transport != nil {
			n++
		}
		if n != 1 {
			bad("%s: set exactly one of Command, URL and Transport (got %d)", where, n)
		}
		if s.MemoryType != "" && !s.MemoryType.Valid() {
			bad("%s: MemoryType %q is not a memory type", where, s.MemoryType)
		}
		if p := s.DefaultPriority; p != nil && !(*p >= 0 && *p <= 1) {
			bad("%s: DefaultPriority %v is not between 0 and 1", where, *p)
		}
		if s.MaxResponseBytes < 0 || s.MaxSourceBytes < 0 {
			bad("%s: MaxResponseBytes and MaxSourceBytes must not be negative", where)
		}
	}
	seen = make(map[string]bool)
	for i, f := range c.Files {
		where := fmt.Sprintf("Files[%d] (%q)", i, f.Name)
		if !validName(f.Name) {
			bad("%s: Name must be 1 to 64 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit", where)
		}
		if seen[f.Name] {
			bad("%s: Name is used twice", where)
		}
		seen[f.Name] = true
		if f.Dir == "" {
			bad("%s: Dir is empty", where)
		}
		if f.MemoryType != "" && !f.MemoryType.Valid() {
			bad("%s: MemoryType %q is not a memory type", where, f.MemoryType)
		}
		if f.MaxSourceBytes < 0 {
			bad("%s: MaxSourceBytes must not be negative", where)
		}
	}
	return errors.Join(errs...)
}

// validName reports whether name may name a source: it is embedded in
// request_ids between colons, so it must not contain one.
func validName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}
