package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/contextasm/contextasm/internal/strictjson"
)

// ErrKeys is wrapped by the errors about a keys file.
var ErrKeys = errors.New("server: invalid keys")

// AnyRole in a key's roles lets it use every role.
const AnyRole = "*"

// DefaultTenant is the one tenant of a server without keys.
const DefaultTenant = "default"

// Keys are the API keys a server accepts, each naming its tenant and the
// roles it may use. Build them with ParseKeys; the zero value (no keys)
// means no authentication: one tenant, DefaultTenant, with every role.
type Keys struct {
	byHash  map[[32]byte]*Key
	tenants []string // sorted
}

// Key is one API key's authority.
type Key struct {
	// Tenant is the tenant whose blocks, sessions and assemblies the key
	// reaches, and no other's.
	Tenant string
	// Roles are the roles a request with the key may hold; AnyRole allows
	// every role.
	Roles []string
	// id names the key in logs and MCP sessions: the first 12 hex digits
	// of its SHA-256, never the key.
	id string
}

// keysFile is the JSON document ParseKeys reads.
type keysFile struct {
	Keys []keyEntry `json:"keys"`
}

type keyEntry struct {
	Key       string   `json:"key"`
	KeySHA256 string   `json:"key_sha256"`
	Tenant    string   `json:"tenant"`
	Roles     []string `json:"roles"`
}

var (
	keysSchema = strictjson.For(reflect.TypeFor[keysFile]())
	tenantName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
)

// minKeyBytes is the shortest plain key accepted: a key is a bearer
// secret, and a short one is guessed.
const minKeyBytes = 16

// ParseKeys reads a keys document:
//
//	{"keys": [{"key_sha256": "<64 hex digits>", "tenant": "acme", "roles": ["support"]},
//	          {"key": "<the key itself>", "tenant": "beta", "roles": ["*"]}]}
//
// Each entry gives the key or its SHA-256 in hex (so the file need not
// hold the secret), a tenant (1 to 64 of a-z, 0-9, '_', '-', starting
// with a letter or digit) and the roles the key may use. Every problem is
// reported, naming the entry and field.
func ParseKeys(data []byte) (*Keys, error) {
	var f keysFile
	if err := decodeStrict(data, keysSchema, &f); err != nil {
		field := ""
		if err.body.Field != "" {
			field = err.body.Field + ": "
		}
		return nil, fmt.Errorf("%w: %s%s", ErrKeys, field, err.body.Message)
	}
	var probs []string
	add := func(i int, field, format string, args ...any) {
		probs = append(probs, fmt.Sprintf("keys[%d].%s: %s", i, field, fmt.Sprintf(format, args...)))
	}
	k := &Keys{byHash: make(map[[32]byte]*Key, len(f.Keys))}
	for i, e := range f.Keys {
		var sum [32]byte
		switch {
		case e.Key != "" && e.KeySHA256 != "":
			add(i, "key", "give the key or key_sha256, not both")
		case e.Key != "":
			if len(e.Key) < minKeyBytes {
				add(i, "key", "is %d bytes; a key needs at least %d", len(e.Key), minKeyBytes)
			}
			sum = sha256.Sum256([]byte(e.Key))
		case e.KeySHA256 != "":
			b, err := hex.DecodeString(e.KeySHA256)
			if err != nil || len(b) != 32 {
				add(i, "key_sha256", "must be 64 hex digits (the SHA-256 of the key)")
			}
			copy(sum[:], b)
		default:
			add(i, "key", "missing: give the key or key_sha256")
		}
		if !tenantName.MatchString(e.Tenant) {
			add(i, "tenant", "%q must be 1 to 64 of a-z, 0-9, '_', '-', starting with a letter or digit", e.Tenant)
		}
		for j, r := range e.Roles {
			if r == "" || strings.IndexFunc(r, func(c rune) bool { return c < 0x21 || c > 0x7e }) >= 0 {
				add(i, fmt.Sprintf("roles[%d]", j), "%q must be printable ASCII without spaces", r)
			}
		}
		if _, dup := k.byHash[sum]; dup {
			add(i, "key", "the same key is listed twice")
		}
		k.byHash[sum] = &Key{Tenant: e.Tenant, Roles: slices.Clone(e.Roles), id: hex.EncodeToString(sum[:6])}
		if !slices.Contains(k.tenants, e.Tenant) {
			k.tenants = append(k.tenants, e.Tenant)
		}
	}
	if len(f.Keys) == 0 {
		probs = append(probs, "keys: no key: a keys file needs at least one")
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("%w:\n%s", ErrKeys, strings.Join(probs, "\n"))
	}
	slices.Sort(k.tenants)
	return k, nil
}

// Tenants returns the tenants the keys name, sorted; DefaultTenant for no
// keys.
func (k *Keys) Tenants() []string {
	if k == nil || len(k.byHash) == 0 {
		return []string{DefaultTenant}
	}
	return slices.Clone(k.tenants)
}

// open reports whether there are no keys: no authentication.
func (k *Keys) open() bool { return k == nil || len(k.byHash) == 0 }

// openKey is the authority of every request to a server without keys.
var openKey = &Key{Tenant: DefaultTenant, Roles: []string{AnyRole}, id: "open"}

// lookup returns the key whose SHA-256 a bearer token has. The map is
// keyed by the hash, so the lookup's timing tells nothing of the key.
func (k *Keys) lookup(token string) (*Key, bool) {
	if k.open() {
		return openKey, true
	}
	key, ok := k.byHash[sha256.Sum256([]byte(token))]
	return key, ok
}

// roles returns the roles a request holds: the key's, narrowed to those
// asked for. Asking for a role the key lacks is refused (403), naming it,
// rather than dropped: a host that thinks it holds a role should hear
// that it does not.
func (key *Key) roles(asked *[]string) ([]string, *apiError) {
	every := slices.Contains(key.Roles, AnyRole)
	if asked == nil {
		return slices.DeleteFunc(slices.Clone(key.Roles), func(r string) bool { return r == AnyRole }), nil
	}
	out := make([]string, 0, len(*asked))
	for i, r := range *asked {
		if !every && !slices.Contains(key.Roles, r) {
			return nil, newError(http.StatusForbidden, codeRoleNotAllowed, fmt.Sprintf("roles[%d]", i), "the API key may not use the role %q", r)
		}
		if r == AnyRole {
			return nil, badRequest(codeInvalid, fmt.Sprintf("roles[%d]", i), "%q is not a role a request can hold", r)
		}
		out = append(out, r)
	}
	return out, nil
}
