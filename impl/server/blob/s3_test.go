package blob_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/blob/s3test"
)

const (
	testAccessKey = s3test.AccessKey
	testSecretKey = s3test.SecretKey
	testRegion    = s3test.Region
)

// counting records the requests the store sends and can answer the first few of one kind with
// 503 SlowDown, as a throttling S3 does.
type counting struct {
	mu       sync.Mutex
	requests []string // "METHOD ?query"
	throttle func(*http.Request) bool
	slowed   int
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.requests = append(c.requests, r.Method+" ?"+r.URL.RawQuery)
	slow := c.throttle != nil && c.throttle(r)
	if slow {
		c.slowed++
	}
	c.mu.Unlock()
	if slow {
		if r.Body != nil {
			r.Body.Close()
		}
		body := "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/xml"}}, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (c *counting) count(prefix string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, r := range c.requests {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

func newStore(t *testing.T, cfg blob.S3Config) *blob.S3 {
	t.Helper()
	st, err := blob.NewS3(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// reader returns a function reading what Open or OpenRange returned.
func reader(t *testing.T) func(io.ReadCloser, error) []byte {
	return func(rc io.ReadCloser, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func TestS3Store(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	tr := &counting{}
	bucket := srv.NewBucket(t)
	st := newStore(t, blob.S3Config{Endpoint: srv.Endpoint, Bucket: bucket, Region: testRegion, Prefix: "sdods/",
		AccessKeyID: testAccessKey, SecretAccessKey: testSecretKey, TempDir: t.TempDir(), Transport: tr})
	if err := st.Check(ctx); err != nil {
		t.Fatal(err)
	}
	content := []byte("a screenshot, perhaps")
	info, err := st.Put(ctx, bytes.NewReader(content), 0)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	if info.Key != hex.EncodeToString(sum[:]) || info.Size != int64(len(content)) {
		t.Fatalf("info %+v", info)
	}
	// The object's name is <prefix><ab>/<key>: read it back with another client.
	if _, err := srv.Client(t).StatObject(ctx, bucket, "sdods/"+info.Key[:2]+"/"+info.Key, minio.StatObjectOptions{}); err != nil {
		t.Fatalf("object name: %v", err)
	}
	// Content addressed: the same content again is not uploaded again.
	if _, err := st.Put(ctx, bytes.NewReader(content), 0); err != nil || tr.count("PUT") != 1 {
		t.Fatalf("second put: %v, %d uploads (%v)", err, tr.count("PUT"), tr.requests)
	}
	if got := reader(t)(st.Open(ctx, info.Key)); !bytes.Equal(got, content) {
		t.Fatalf("read %q", got)
	}
	if got := reader(t)(st.OpenRange(ctx, info.Key, 2, 10)); string(got) != string(content[2:12]) {
		t.Fatalf("range %q", got)
	}
	if _, err := st.Put(ctx, strings.NewReader("too long"), 3); !errors.Is(err, blob.ErrTooLarge) {
		t.Fatalf("limit: %v", err)
	}
	if err := st.Delete(ctx, info.Key); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Open(ctx, info.Key); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if err := st.Delete(ctx, info.Key); err != nil {
		t.Fatalf("deleting a missing key: %v", err)
	}
	if _, err := st.Open(ctx, "not-a-key"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("bad key: %v", err)
	}
}

func TestS3StoreMultipart(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	tr := &counting{}
	st := newStore(t, blob.S3Config{Endpoint: srv.Endpoint, Bucket: srv.NewBucket(t), Region: testRegion,
		AccessKeyID: testAccessKey, SecretAccessKey: testSecretKey, TempDir: t.TempDir(), PartSize: 5 << 20, Transport: tr})
	content := make([]byte, 12<<20+123) // three parts
	if _, err := rand.Read(content); err != nil {
		t.Fatal(err)
	}
	info, err := st.Put(ctx, bytes.NewReader(content), 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := tr.count("POST ?uploads"); n != 1 {
		t.Fatalf("%d multipart uploads started, want 1: %v", n, tr.requests)
	}
	if n := tr.count("PUT ?partNumber="); n != 3 {
		t.Fatalf("%d parts uploaded, want 3: %v", n, tr.requests)
	}
	got := reader(t)(st.Open(ctx, info.Key))
	if sum := sha256.Sum256(got); hex.EncodeToString(sum[:]) != info.Key || len(got) != len(content) {
		t.Fatalf("read back %d bytes that do not hash to the key", len(got))
	}
	if got := reader(t)(st.OpenRange(ctx, info.Key, 6<<20, 5)); !bytes.Equal(got, content[6<<20:6<<20+5]) {
		t.Fatalf("range across parts %x", got)
	}
}

// TestS3StoreRetries: a throttled upload is retried with backoff, not failed.
func TestS3StoreRetries(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	tr := &counting{}
	tr.throttle = func(r *http.Request) bool { return r.Method == http.MethodPut && tr.slowed < 2 }
	st := newStore(t, blob.S3Config{Endpoint: srv.Endpoint, Bucket: srv.NewBucket(t), Region: testRegion,
		AccessKeyID: testAccessKey, SecretAccessKey: testSecretKey, TempDir: t.TempDir(), Transport: tr})
	info, err := st.Put(ctx, strings.NewReader("throttled at first"), 0)
	if err != nil {
		t.Fatalf("put through two 503s: %v", err)
	}
	if tr.count("PUT") != 3 {
		t.Fatalf("%d PUTs, want 3 (two throttled, one stored): %v", tr.count("PUT"), tr.requests)
	}
	if got := reader(t)(st.Open(ctx, info.Key)); string(got) != "throttled at first" {
		t.Fatalf("read %q", got)
	}
}

// TestS3StoreRefusals: wrong credentials and a missing bucket are errors, the HEAD before an
// upload included (it was swallowed once).
func TestS3StoreRefusals(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	bucket := srv.NewBucket(t)
	tr := &counting{}
	bad := newStore(t, blob.S3Config{Endpoint: srv.Endpoint, Bucket: bucket, Region: testRegion,
		AccessKeyID: testAccessKey, SecretAccessKey: "wrong", TempDir: t.TempDir(), Transport: tr})
	if _, err := bad.Put(ctx, strings.NewReader("x"), 0); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("wrong secret: %v", err)
	}
	if n := tr.count("PUT"); n != 0 {
		t.Fatalf("the refused HEAD was followed by %d PUT(s): %v", n, tr.requests)
	}
	if err := bad.Check(ctx); err == nil || strings.Contains(err.Error(), testSecretKey) {
		t.Fatalf("check with a wrong secret: %v", err)
	}
	missing := newStore(t, blob.S3Config{Endpoint: srv.Endpoint, Bucket: "no-such-bucket", Region: testRegion,
		AccessKeyID: testAccessKey, SecretAccessKey: testSecretKey, TempDir: t.TempDir()})
	if err := missing.Check(ctx); err == nil || !strings.Contains(err.Error(), `bucket "no-such-bucket" does not exist`) {
		t.Fatalf("missing bucket: %v", err)
	}
	if _, err := missing.Put(ctx, strings.NewReader("x"), 0); err == nil || !strings.Contains(err.Error(), "NoSuchBucket") {
		t.Fatalf("put into a missing bucket: %v", err)
	}
}

// TestS3StoreCredentialChain: without keys in the configuration, the store finds them where the
// AWS tools do: the environment, then the shared credentials file.
func TestS3StoreCredentialChain(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	bucket := srv.NewBucket(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(home, "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY", "AWS_SECRET_KEY",
		"AWS_SHARED_CREDENTIALS_FILE", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		t.Setenv(v, "")
	}
	cfg := blob.S3Config{Endpoint: srv.Endpoint, Bucket: bucket, Region: testRegion, TempDir: t.TempDir()}

	t.Run("environment", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", testAccessKey)
		t.Setenv("AWS_SECRET_ACCESS_KEY", testSecretKey)
		if _, err := newStore(t, cfg).Put(ctx, strings.NewReader("from the environment"), 0); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("shared file and profile", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "credentials")
		body := "[default]\naws_access_key_id = AKIDWRONG\naws_secret_access_key = wrong\n\n[ci]\naws_access_key_id = " + testAccessKey + "\naws_secret_access_key = " + testSecretKey + "\n"
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("AWS_SHARED_CREDENTIALS_FILE", file)
		t.Setenv("AWS_PROFILE", "ci")
		if _, err := newStore(t, cfg).Put(ctx, strings.NewReader("from the shared file"), 0); err != nil {
			t.Fatal(err)
		}
		t.Setenv("AWS_PROFILE", "default")
		if _, err := newStore(t, cfg).Put(ctx, strings.NewReader("with the wrong profile"), 0); err == nil {
			t.Fatal("the default profile's wrong keys were accepted")
		}
	})
	// The machine's role, here as ECS/EKS hand it to a container: a credentials endpoint on
	// loopback, asked with the container's authorization token.
	t.Run("container role", func(t *testing.T) {
		t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
		var asked atomic.Int32
		role := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "container-token" {
				http.Error(w, "no token", http.StatusUnauthorized)
				return
			}
			asked.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"AccessKeyId": %q, "SecretAccessKey": %q, "Token": "", "Expiration": %q}`,
				testAccessKey, testSecretKey, time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
		}))
		defer role.Close()
		t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", role.URL+"/v2/credentials")
		t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "container-token")
		st := newStore(t, cfg)
		for _, body := range []string{"from the role", "from the role, again"} {
			if _, err := st.Put(ctx, strings.NewReader(body), 0); err != nil {
				t.Fatal(err)
			}
		}
		if n := asked.Load(); n != 1 {
			t.Fatalf("the credentials endpoint was asked %d times for two uploads, want once (until they near expiry)", n)
		}
	})
}

func TestNewS3RefusesBadConfigurations(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  blob.S3Config
		want string
	}{
		{"no bucket", blob.S3Config{Endpoint: "http://127.0.0.1:9000"}, "the endpoint and the bucket are required"},
		{"not http", blob.S3Config{Endpoint: "ftp://h", Bucket: "b"}, "is not an http(s) URL"},
		{"a path", blob.S3Config{Endpoint: "http://h/s3", Bucket: "b"}, "scheme://host[:port] only"},
		{"half the keys", blob.S3Config{Endpoint: "http://h", Bucket: "b", AccessKeyID: "a"}, "or neither"},
		{"tiny parts", blob.S3Config{Endpoint: "http://h", Bucket: "b", PartSize: 1 << 20}, "below S3's minimum"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := blob.NewS3(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}
