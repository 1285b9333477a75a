package store

import (
	"context"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/blob"
)

// DropBlob deletes content nothing references any more (after a refused, replaced or deleted
// dataset, say); "" is nothing to do. The blob store is shared: datasets, artifacts and visual
// baselines are all counted, under the key's lock (the lock KeepBlob takes), so that a writer
// referencing the same content at the same moment keeps it.
func (s *Store) DropBlob(ctx context.Context, blobs blob.Store, key string) error {
	if key == "" {
		return nil
	}
	return s.WithTx(ctx, func(q *db.Queries) error {
		if err := q.LockBlob(ctx, key); err != nil {
			return err
		}
		if n, err := q.CountBlobReferences(ctx, key); err != nil || n > 0 {
			return err
		}
		return blobs.Delete(ctx, key)
	})
}
