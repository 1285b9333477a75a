package blob_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/blob"
)

// fakeS3 is a minimal S3-compatible server: PUT, GET (with Range), HEAD and DELETE of objects
// under one bucket, path-style. It verifies every request's Signature Version 4 with its own
// implementation of the algorithm (written from the AWS documentation, independent of the
// store's signer) and refuses a bad one with 403 SignatureDoesNotMatch, like S3.
type fakeS3 struct {
	t       *testing.T
	bucket  string
	keyID   string
	secret  string
	region  string
	mu      sync.Mutex
	objects map[string][]byte
	puts    int
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := f.verify(r, body); err != nil {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "<Error><Code>SignatureDoesNotMatch</Code><Message>%s</Message></Error>", err)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/"+f.bucket+"/")
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<Error><Code>NoSuchBucket</Code></Error>")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Method {
	case http.MethodPut:
		f.objects[name] = body
		f.puts++
	case http.MethodGet, http.MethodHead:
		obj, ok := f.objects[name]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if rg := r.Header.Get("Range"); rg != "" && r.Method == http.MethodGet {
			var a, b int
			fmt.Sscanf(rg, "bytes=%d-%d", &a, &b)
			w.WriteHeader(http.StatusPartialContent)
			w.Write(obj[a : b+1])
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(obj)))
		if r.Method == http.MethodGet {
			w.Write(obj)
		}
	case http.MethodDelete:
		delete(f.objects, name)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (f *fakeS3) verify(r *http.Request, body []byte) error {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return errors.New("no SigV4 authorization")
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ", ") {
		k, v, _ := strings.Cut(part, "=")
		fields[k] = v
	}
	cred := strings.Split(fields["Credential"], "/")
	if len(cred) != 5 || cred[0] != f.keyID || cred[2] != f.region || cred[3] != "s3" || cred[4] != "aws4_request" {
		return fmt.Errorf("credential scope %q", fields["Credential"])
	}
	sum := sha256.Sum256(body)
	if got := r.Header.Get("X-Amz-Content-Sha256"); got != hex.EncodeToString(sum[:]) {
		return fmt.Errorf("x-amz-content-sha256 %s does not match the body", got)
	}
	date := r.Header.Get("X-Amz-Date")
	if t, err := time.Parse("20060102T150405Z", date); err != nil || time.Since(t) > 15*time.Minute || !strings.HasPrefix(date, cred[1]) {
		return fmt.Errorf("x-amz-date %q", date)
	}
	signed := strings.Split(fields["SignedHeaders"], ";")
	if !sort.StringsAreSorted(signed) || signed[0] != "host" && !contains(signed, "host") || !contains(signed, "x-amz-date") || !contains(signed, "x-amz-content-sha256") {
		return fmt.Errorf("signed headers %v", signed)
	}
	var canon strings.Builder
	for _, h := range signed {
		v := r.Header.Get(h)
		if h == "host" {
			v = r.Host
		}
		canon.WriteString(h + ":" + strings.TrimSpace(v) + "\n")
	}
	path := (&url.URL{Path: r.URL.Path}).EscapedPath()
	creq := r.Method + "\n" + path + "\n" + r.URL.RawQuery + "\n" + canon.String() + "\n" + fields["SignedHeaders"] + "\n" + r.Header.Get("X-Amz-Content-Sha256")
	h := sha256.Sum256([]byte(creq))
	sts := "AWS4-HMAC-SHA256\n" + date + "\n" + strings.Join(cred[1:], "/") + "\n" + hex.EncodeToString(h[:])
	mac := func(k []byte, s string) []byte { m := hmac.New(sha256.New, k); m.Write([]byte(s)); return m.Sum(nil) }
	k := mac(mac(mac(mac([]byte("AWS4"+f.secret), cred[1]), cred[2]), cred[3]), cred[4])
	if want := hex.EncodeToString(mac(k, sts)); want != fields["Signature"] {
		return errors.New("signature mismatch")
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func newFakeS3(t *testing.T) (*fakeS3, *httptest.Server) {
	f := &fakeS3{t: t, bucket: "runs", keyID: "AKIDTEST", secret: "s3cr3t/key+value", region: "eu-west-1", objects: map[string][]byte{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func TestS3StoreAgainstSigningFake(t *testing.T) {
	f, srv := newFakeS3(t)
	ctx := context.Background()
	st, err := blob.NewS3(blob.S3Config{Endpoint: srv.URL, Bucket: "runs", Region: "eu-west-1", Prefix: "sdods/", AccessKeyID: "AKIDTEST",
		SecretAccessKey: "s3cr3t/key+value", TempDir: t.TempDir()})
	if err != nil {
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
	if _, ok := f.objects["sdods/"+info.Key[:2]+"/"+info.Key]; !ok {
		t.Fatalf("objects %v", f.objects)
	}
	// Content addressed: the same content again is not uploaded again.
	if _, err := st.Put(ctx, bytes.NewReader(content), 0); err != nil || f.puts != 1 {
		t.Fatalf("second put: %v, %d uploads", err, f.puts)
	}
	rc, err := st.Open(ctx, info.Key)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, content) {
		t.Fatalf("read %q", got)
	}
	rc, err = st.OpenRange(ctx, info.Key, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(rc)
	rc.Close()
	if string(got) != string(content[2:12]) {
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
	// A wrong secret is refused by the signature check.
	bad, _ := blob.NewS3(blob.S3Config{Endpoint: srv.URL, Bucket: "runs", Region: "eu-west-1", AccessKeyID: "AKIDTEST", SecretAccessKey: "wrong"})
	if _, err := bad.Put(ctx, strings.NewReader("x"), 0); err == nil || !strings.Contains(err.Error(), "SignatureDoesNotMatch") {
		t.Fatalf("wrong secret: %v", err)
	}
}

// TestSignV4Vector checks the signer against the get-vanilla case of AWS's Signature Version 4
// test suite.
func TestSignV4Vector(t *testing.T) {
	req, _ := http.NewRequest("GET", "https://example.amazonaws.com/", nil)
	at, _ := time.Parse("20060102T150405Z", "20150830T123600Z")
	blob.SignV4(req, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		blob.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}, "us-east-1", "service", at)
	want := "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, " +
		"Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
	if got := req.Header.Get("Authorization"); got != want {
		t.Fatalf("authorization\n got %s\nwant %s", got, want)
	}
}
