package store

import (
	"bytes"
	"context"
	"errors"

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
