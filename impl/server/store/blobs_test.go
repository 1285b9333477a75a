package store_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/store"
	"github.com/sdods/sdods/impl/server/store/storetest"
)

// KeepBlob waits for the key's lock while a deleter holds it, and puts the content back when
// the deleter removed it: the row the writer then inserts never references missing content.
func TestKeepBlobWaitsForADeleteAndRestores(t *testing.T) {
	st, _ := storetest.Open(t)
	ctx := context.Background()
	blobs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("shared content")
	info, err := blobs.Put(ctx, bytes.NewReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	locked := make(chan struct{})
	release := make(chan struct{})
	deleter := make(chan error, 1)
	go func() {
		deleter <- st.WithTx(ctx, func(q *db.Queries) error {
			if err := q.LockBlob(ctx, info.Key); err != nil {
				return err
			}
			close(locked)
			<-release
			return blobs.Delete(ctx, info.Key) // nothing referenced it when it counted
		})
	}()
	<-locked
	writer := make(chan error, 1)
	go func() {
		writer <- st.WithTx(ctx, func(q *db.Queries) error { return store.KeepBlob(ctx, q, blobs, info.Key, data) })
	}()
	select {
	case err := <-writer:
		close(release) // let the deleter end, so that the test database can be dropped
		<-deleter
		t.Fatalf("the writer did not wait for the deleter's lock (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	if err := <-deleter; err != nil {
		t.Fatal(err)
	}
	if err := <-writer; err != nil {
		t.Fatal(err)
	}
	rc, err := blobs.Open(ctx, info.Key)
	if err != nil {
		t.Fatalf("the content is gone after the writer kept it: %v", err)
	}
	rc.Close()
	if _, err := blobs.Open(ctx, "0000000000000000000000000000000000000000000000000000000000000000"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("open of a missing key: %v", err)
	}
}
