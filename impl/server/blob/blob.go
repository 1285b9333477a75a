// Package blob stores immutable content by its SHA-256: the filesystem store under the data
// directory is the default; Store is the interface another backend (S3) implements.
package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
)

// ErrNotFound is returned for a key the store does not hold.
var ErrNotFound = errors.New("blob not found")

// ErrTooLarge is returned by Put when the content exceeds the given limit; nothing is stored.
var ErrTooLarge = errors.New("blob too large")

// Info describes stored content.
type Info struct {
	Key    string // the hex SHA-256 of the content
	Size   int64
	SHA256 string
}

// Store keeps content addressed by its hash. Putting the same content twice stores it once.
type Store interface {
	// Put stores the content of r (at most limit bytes when limit > 0) and returns its key.
	Put(ctx context.Context, r io.Reader, limit int64) (Info, error)
	// Open returns the content of key, or ErrNotFound.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

var keyPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// FS is the filesystem store: dir/ab/abcdef… per key, written through a temporary file and a
// rename so that a reader never sees partial content.
type FS struct {
	dir string
}

// NewFS returns a filesystem store rooted at dir, creating it.
func NewFS(dir string) (*FS, error) {
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o750); err != nil {
		return nil, fmt.Errorf("blob store: %w", err)
	}
	return &FS{dir: dir}, nil
}

func (s *FS) path(key string) (string, error) {
	if !keyPattern.MatchString(key) {
		return "", fmt.Errorf("blob key %q: %w", key, ErrNotFound)
	}
	return filepath.Join(s.dir, key[:2], key), nil
}

// Put implements Store.
func (s *FS) Put(ctx context.Context, r io.Reader, limit int64) (Info, error) {
	tmp, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "put-*")
	if err != nil {
		return Info{}, fmt.Errorf("blob put: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	h := sha256.New()
	src := r
	if limit > 0 {
		src = io.LimitReader(r, limit+1)
	}
	n, err := io.Copy(io.MultiWriter(tmp, h), src)
	if err == nil && limit > 0 && n > limit {
		err = ErrTooLarge
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Info{}, fmt.Errorf("blob put: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	final, _ := s.path(sum)
	if err := os.MkdirAll(filepath.Dir(final), 0o750); err != nil {
		return Info{}, fmt.Errorf("blob put: %w", err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return Info{}, fmt.Errorf("blob put: %w", err)
	}
	return Info{Key: sum, Size: n, SHA256: sum}, nil
}

// Open implements Store.
func (s *FS) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("blob %s: %w", key, ErrNotFound)
	}
	return f, err
}

// Delete implements Store.
func (s *FS) Delete(ctx context.Context, key string) error {
	p, err := s.path(key)
	if err != nil {
		return nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("blob delete: %w", err)
	}
	return nil
}
