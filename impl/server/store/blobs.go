package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/blob"
)

// KeepBlob makes sure that content data, stored under key, is in the blob store and stays there
// until the transaction of q ends, so that the row the caller is about to insert in q references
// content that exists. The blob store is shared and content-addressed, and content nothing
// references is deleted under the key's advisory lock (LockBlob); KeepBlob takes that lock, and
// puts the content back when a delete came between the caller's Put and the lock.
func KeepBlob(ctx context.Context, q *db.Queries, blobs blob.Store, key string, data []byte) error {
	if err := q.LockBlob(ctx, key); err != nil {
		return err
	}
	rc, err := blobs.Open(ctx, key)
	if err == nil {
		return rc.Close()
	}
	if !errors.Is(err, blob.ErrNotFound) {
		return err
	}
	_, err = blobs.Put(ctx, bytes.NewReader(data), 0)
	return err
}

// DeleteBlobIfUnreferenced deletes the content stored under key when no row references it, under
// the key's advisory lock (see KeepBlob), and reports whether it did.
func (s *Store) DeleteBlobIfUnreferenced(ctx context.Context, blobs blob.Store, key string) (bool, error) {
	deleted := false
	err := s.WithTx(ctx, func(q *db.Queries) error {
		if err := q.LockBlob(ctx, key); err != nil {
			return err
		}
		refs, err := q.CountBlobReferences(ctx, key)
		if err != nil || refs > 0 {
			return err
		}
		if err := blobs.Delete(ctx, key); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	return deleted, err
}

// InlineContentMax is the largest attachment of a run kept in the database with its artifacts
// row (blob key "") instead of in the blob store: a passed attempt's trace manifest, a small
// response body. Such content is written with the batch of its event, without a file and an fsync
// of its own (docs/runs.md, "Attachments").
const InlineContentMax = 64 << 10

// OpenArtifact returns the content of the artifact id stored under blobKey: the blob store's, or
// the database's when blobKey is "" (InlineContentMax). Content that is in neither is an error
// that wraps blob.ErrNotFound. The database's content is an io.ReadSeeker.
func (s *Store) OpenArtifact(ctx context.Context, blobs blob.Store, id uuid.UUID, blobKey string) (io.ReadCloser, error) {
	if blobKey != "" {
		return blobs.Open(ctx, blobKey)
	}
	data, err := s.ArtifactContent(ctx, id)
	if IsNotFound(err) {
		return nil, fmt.Errorf("artifact %s: %w", id, blob.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return inlineContent{bytes.NewReader(data)}, nil
}

// OpenArtifactRange returns length bytes of the artifact's content from start (see OpenArtifact),
// asking the blob store for the range when it serves ranges.
func (s *Store) OpenArtifactRange(ctx context.Context, blobs blob.Store, id uuid.UUID, blobKey string, start, length int64) (io.ReadCloser, error) {
	var rc io.ReadCloser
	var err error
	ranged := false
	if ro, ok := blobs.(blob.RangeOpener); ok && start > 0 && blobKey != "" {
		rc, err = ro.OpenRange(ctx, blobKey, start, length)
		ranged = true
	} else {
		rc, err = s.OpenArtifact(ctx, blobs, id, blobKey)
	}
	if err != nil {
		return nil, err
	}
	if start > 0 && !ranged {
		if sk, ok := rc.(io.Seeker); ok {
			_, err = sk.Seek(start, io.SeekStart)
		} else {
			_, err = io.CopyN(io.Discard, rc, start)
		}
		if err != nil {
			_ = rc.Close()
			return nil, fmt.Errorf("seek artifact %s: %w", id, err)
		}
	}
	return limitedReadCloser{Reader: io.LimitReader(rc, length), Closer: rc}, nil
}

type inlineContent struct{ *bytes.Reader }

func (inlineContent) Close() error { return nil }

type limitedReadCloser struct {
	io.Reader
	io.Closer
}
