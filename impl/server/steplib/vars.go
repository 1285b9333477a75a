package steplib

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/sdods/sdods/impl/server/redact"
)

// Variables resolves ${name} references. Lookups go through the layers from the most specific
// (values captured by steps) to the least (environment variables).
type Variables struct {
	captured map[string]string
	example  map[string]string
	account  map[string]string
	env      map[string]string
	secrets  []string
	// users are names a secret may be sent with in basic authentication ("user:secret").
	users []string

	mu       sync.Mutex
	redactor *redact.Redactor // built from secrets and users when first needed
}

// Bounds on the names paired with secrets for redaction of basic-authentication credentials.
const (
	maxRedactUsers    = 100
	maxRedactUserSize = 128
)

// NewVariables returns variables seeded with the environment's variables, the current example
// row's columns and the secret values that are masked in logs, messages and attachments.
func NewVariables(env, example map[string]string, secrets []string) *Variables {
	v := &Variables{env: env, example: example} // captured and account are made when first set
	for _, s := range secrets {
		if s != "" {
			v.secrets = append(v.secrets, s)
		}
	}
	for _, val := range env {
		v.addUser(val)
	}
	return v
}

func (v *Variables) addUser(u string) {
	if u != "" && len(u) <= maxRedactUserSize && len(v.users) < maxRedactUsers {
		v.users = append(v.users, u)
	}
}

// Set stores a captured value.
func (v *Variables) Set(name, value string) {
	if v.captured == nil {
		v.captured = map[string]string{}
	}
	v.captured[name] = value
}

// SetAccount replaces the leased account's fields, visible as ${user.<field>}; its password is masked.
func (v *Variables) SetAccount(fields map[string]string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.account = map[string]string{}
	for k, val := range fields {
		v.account["user."+k] = val
		if k == "password" && val != "" {
			v.secrets = append(v.secrets, val)
		}
	}
	v.addUser(fields["username"])
	v.redactor = nil
}

// NoteCredential records a user name and password sent together (basic authentication): when
// the password holds a secret, the whole password and its pairing with user are masked too.
func (v *Variables) NoteCredential(user, password string) {
	held := v.Mask(password) != password
	v.mu.Lock()
	defer v.mu.Unlock()
	v.addUser(user)
	if held {
		v.secrets = append(v.secrets, password)
	}
	v.redactor = nil
}

// Get returns the variable's value and whether it is defined.
func (v *Variables) Get(name string) (string, bool) {
	for _, m := range []map[string]string{v.captured, v.example, v.account, v.env} {
		if val, ok := m[name]; ok {
			return val, true
		}
	}
	return "", false
}

// Names returns every defined variable name, sorted.
func (v *Variables) Names() []string {
	seen := map[string]bool{}
	for _, m := range []map[string]string{v.captured, v.example, v.account, v.env} {
		for k := range m {
			seen[k] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Interpolate replaces each ${name} with its value; $${name} yields ${name} literally. It refuses
// an undefined variable or an unclosed reference.
func (v *Variables) Interpolate(s string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1])
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String(), nil
			}
			b.WriteString(s[i : i+end+1])
			s = s[i+end+1:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unclosed variable reference %q", s[i:])
		}
		name := strings.TrimSpace(s[i+2 : i+end])
		val, ok := v.Get(name)
		if !ok {
			return "", fmt.Errorf("undefined variable ${%s}; defined: %s", name, v.describeNames())
		}
		b.WriteString(val)
		s = s[i+end+1:]
	}
}

func (v *Variables) describeNames() string {
	names := v.Names()
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 20 {
		names = append(names[:20], "…")
	}
	return strings.Join(names, ", ")
}

// Mask replaces every secret value in s with "***", in each form it may be echoed in
// (percent-encoded, JSON-escaped, base64, base64 of "user:secret"; see impl/server/redact).
func (v *Variables) Mask(s string) string { return v.redact().String(s) }

// MaskBytes is Mask for an attachment's content.
func (v *Variables) MaskBytes(b []byte) []byte { return v.redact().Bytes(b) }

func (v *Variables) redact() *redact.Redactor {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.redactor == nil {
		v.redactor = redact.New(v.secrets, v.users)
	}
	return v.redactor
}
