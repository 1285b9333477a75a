package blob

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"
)

// Lister is a Store that can enumerate its content, for the periodic clean-up of content nothing
// references any more (impl/server/jobs). A Store without it is never cleaned up.
type Lister interface {
	// List calls fn with every key and the time its content was last written (a Put of content
	// that exists writes it again), until fn returns an error, which List returns.
	List(ctx context.Context, fn func(key string, written time.Time) error) error
}

// List implements Lister: the files dir/ab/abcdef… (not the temporary files of Puts in progress).
func (s *FS) List(ctx context.Context, fn func(key string, written time.Time) error) error {
	return filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if path != s.dir && filepath.Dir(path) == s.dir && len(d.Name()) != 2 {
				return filepath.SkipDir // tmp/ and anything that is not a key prefix
			}
			return nil
		}
		if !keyPattern.MatchString(d.Name()) || filepath.Base(filepath.Dir(path)) != d.Name()[:2] {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		return fn(d.Name(), info.ModTime())
	})
}
