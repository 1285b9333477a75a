// Package s3test starts a real S3-compatible server for tests: versitygw (Apache-2.0), an S3
// gateway over a directory that checks every request's Signature Version 4, built from the Go
// module proxy at a pinned version.
package s3test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// VersityGWVersion is the server's version; make s3-test-server builds the same one.
const VersityGWVersion = "v1.8.0"

// The root credentials and region of the servers Start starts.
const (
	AccessKey = "AKIDSDODSTEST"
	SecretKey = "s3cr3t/key+value"
	Region    = "eu-west-1"
)

// Server is a running versitygw on a loopback port.
type Server struct {
	// Endpoint is http://127.0.0.1:port.
	Endpoint string
}

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
	buckets   atomic.Int64
)

// Binary returns versitygw: $SDODS_TEST_VERSITYGW (make test builds it once into .bin), or one
// built with go install into the user's cache directory. A failed build fails the test: an S3
// store nobody tested is not skipped silently.
func Binary(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("SDODS_TEST_VERSITYGW"); p != "" {
		if _, err := os.Stat(p); err != nil {
			tb.Fatalf("SDODS_TEST_VERSITYGW=%s: %v", p, err)
		}
		return p
	}
	buildOnce.Do(func() { buildBin, buildErr = build(tb) })
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return buildBin
}

func build(tb testing.TB) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "sdods-test", "versitygw-"+VersityGWVersion)
	bin := filepath.Join(dir, "versitygw")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building the S3 server of this test needs the go command: %v (or set SDODS_TEST_VERSITYGW to a versitygw binary)", err)
	}
	tb.Logf("building versitygw %s into %s (once; make test does it in advance)", VersityGWVersion, dir)
	cmd := exec.Command(goBin, "install", "github.com/versity/versitygw/cmd/versitygw@"+VersityGWVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the S3 server of this test (go install github.com/versity/versitygw/cmd/versitygw@%s) failed: %v "+
			"(run make s3-test-server, or set SDODS_TEST_VERSITYGW to a versitygw binary)\n%s", VersityGWVersion, err, out)
	}
	return bin, nil
}

// Start starts a server over a fresh directory; it stops when tb ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin := Binary(tb)
	root := tb.TempDir()
	for _, d := range []string{"data", "meta"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--access", AccessKey, "--secret", SecretKey, "--region", Region, "--port", addr,
		"posix", "--sidecar", filepath.Join(root, "meta"), filepath.Join(root, "data"))
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting versitygw: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return &Server{Endpoint: "http://" + addr}
		}
		select {
		case <-exited:
			tb.Fatalf("versitygw exited before listening on %s:\n%s", addr, log.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("versitygw did not listen on %s within 30 s: %v\n%s", addr, err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Client is a minio-go client with the root credentials, for a test's own checks.
func (s *Server) Client(tb testing.TB) *minio.Client {
	tb.Helper()
	c, err := minio.New(strings.TrimPrefix(s.Endpoint, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""), Region: Region, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// NewBucket creates an empty bucket through the server's S3 API and returns its name.
func (s *Server) NewBucket(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("test-%d-%d", os.Getpid(), buckets.Add(1))
	if err := s.Client(tb).MakeBucket(context.Background(), name, minio.MakeBucketOptions{Region: Region}); err != nil {
		tb.Fatalf("make bucket %s: %v", name, err)
	}
	return name
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
