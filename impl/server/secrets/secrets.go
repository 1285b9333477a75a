// Package secrets encrypts secret values at rest (environment secrets, pool passwords, Git tokens,
// webhook secrets) with AES-256-GCM under one server key. The key comes from configuration or, when
// none is configured, from a key file in the data directory that the first start creates.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeyFile is the name of the generated key file inside the data directory.
const KeyFile = "secret.key"

// version prefixes every ciphertext so that the format (and a future key rotation) can be told apart.
const version byte = 1

// Box seals and opens secret values with the server key.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box for a 32-byte key; other sizes are refused.
func New(key []byte) (*Box, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("secret key: want 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	return &Box{aead: aead}, nil
}

// ParseKey decodes a configured key: 64 hex digits or standard/URL base64 of 32 bytes.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return b, nil
		}
	}
	return nil, errors.New("secret key: want 32 bytes as 64 hex digits or base64")
}

// LoadOrCreate returns the configured key when configured is not empty; otherwise the key kept in
// dataDir/secret.key, which it creates (mode 0600, random 32 bytes) when missing. It refuses a key
// file readable by others, since anyone who reads it can decrypt every stored secret.
func LoadOrCreate(configured, dataDir string) ([]byte, error) {
	if configured != "" {
		return ParseKey(configured)
	}
	path := filepath.Join(dataDir, KeyFile)
	raw, err := os.ReadFile(path)
	if err == nil {
		st, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("secret key file: %w", err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("secret key file %s: permissions %o are too open; chmod 600 it", path, st.Mode().Perm())
		}
		return ParseKey(string(raw))
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("secret key file: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate secret key: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return nil, fmt.Errorf("secret key file: %w", err)
	}
	// O_EXCL: when two processes start at once on one data dir, the loser reads the winner's key.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return LoadOrCreate("", dataDir)
	}
	if err != nil {
		return nil, fmt.Errorf("secret key file: %w", err)
	}
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("write secret key file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write secret key file: %w", err)
	}
	return key, nil
}

// Seal encrypts plaintext; additional binds the ciphertext to its place (for example a project id
// and a variable name) so that a ciphertext copied elsewhere does not open.
func (b *Box) Seal(plaintext, additional []byte) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	out := append([]byte{version}, nonce...)
	return b.aead.Seal(out, nonce, plaintext, additional), nil
}

// Open decrypts a ciphertext made by Seal with the same additional data; a wrong key, tampered
// data or different additional data fail.
func (b *Box) Open(ciphertext, additional []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(ciphertext) < 1+n || ciphertext[0] != version {
		return nil, errors.New("open secret: malformed ciphertext")
	}
	pt, err := b.aead.Open(nil, ciphertext[1:1+n], ciphertext[1+n:], additional)
	if err != nil {
		return nil, errors.New("open secret: wrong key or tampered ciphertext")
	}
	return pt, nil
}

// SealString seals s and returns base64 text, for JSON columns.
func (b *Box) SealString(s string, additional string) (string, error) {
	ct, err := b.Seal([]byte(s), []byte(additional))
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(ct), nil
}

// OpenString opens a value made by SealString.
func (b *Box) OpenString(s string, additional string) (string, error) {
	ct, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", errors.New("open secret: malformed ciphertext")
	}
	pt, err := b.Open(ct, []byte(additional))
	return string(pt), err
}
