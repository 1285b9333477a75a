// Package identity is who calls the test automation server: users and their passwords, browser
// sessions, API tokens, the first-run setup and the login throttle. Secrets are only ever stored
// as hashes.
package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// argon2id parameters: OWASP's recommended minimum (19 MiB, 2 passes, 1 lane).
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
)

var b64 = base64.RawStdEncoding

// HashPassword returns the argon2id hash of password in the PHC string format.
func HashPassword(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("read random salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// ErrMalformedHash is returned for a stored hash that is not an argon2id PHC string.
var ErrMalformedHash = errors.New("malformed password hash")

// VerifyPassword reports whether password matches the PHC hash, in constant time.
func VerifyPassword(hash, password string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, ErrMalformedHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, ErrMalformedHash
	}
	var mem, iters uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &iters, &threads); err != nil || mem == 0 || iters == 0 || threads == 0 {
		return false, ErrMalformedHash
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, ErrMalformedHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, ErrMalformedHash
	}
	got := argon2.IDKey([]byte(password), salt, iters, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// TokenPrefix starts every API token.
const TokenPrefix = "amx_"

// randomSecret returns 32 random bytes (256 bits) in URL-safe base64 without padding.
func randomSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("read random bytes: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// NewTokenSecret returns a new API token (amx_ and 256 random bits) and the hash to store.
func NewTokenSecret() (token string, hash []byte, err error) {
	s, err := randomSecret()
	if err != nil {
		return "", nil, err
	}
	token = TokenPrefix + s
	return token, HashSecret(token), nil
}

// NewSessionSecret returns a new session id for the cookie and the hash to store.
func NewSessionSecret() (secret string, hash []byte, err error) {
	s, err := randomSecret()
	if err != nil {
		return "", nil, err
	}
	return s, HashSecret(s), nil
}

// HashSecret hashes a high-entropy secret (session id or API token) for storage and lookup.
// SHA-256 suffices: the secrets carry 256 random bits, so there is nothing to brute-force.
func HashSecret(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// CSRFToken derives the CSRF token of a session from its secret, so nothing more is stored; a
// page of another origin can read neither the cookie nor GET /api/auth/me, so it cannot know it.
func CSRFToken(sessionSecret string) string {
	sum := sha256.Sum256([]byte("sdods-csrf\x00" + sessionSecret))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// CSRFMatches compares a presented CSRF header with the session's token in constant time.
func CSRFMatches(sessionSecret, presented string) bool {
	return presented != "" && subtle.ConstantTimeCompare([]byte(CSRFToken(sessionSecret)), []byte(presented)) == 1
}
