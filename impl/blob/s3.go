package blob

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// RangeOpener is a Store that can return part of a blob without reading what precedes it.
type RangeOpener interface {
	// OpenRange returns length bytes of key from offset, or ErrNotFound.
	OpenRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
}

// S3Config configures the S3-compatible store (AWS S3, MinIO, Ceph RGW, Garage, R2, …).
type S3Config struct {
	// Endpoint is the service's base URL, e.g. https://s3.eu-west-1.amazonaws.com or http://127.0.0.1:9000.
	Endpoint string
	Bucket   string
	// Region signs the requests (us-east-1 when empty).
	Region string
	// Prefix is prepended to every object name ("sdods/" gives sdods/ab/abcdef…).
	Prefix string
	// VirtualHost addresses the bucket as a host name (bucket.endpoint) instead of a path
	// (endpoint/bucket).
	VirtualHost     bool
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// TempDir holds uploads while they are hashed (the system's temporary directory when empty).
	TempDir string
	// Client sends the requests (http.DefaultClient when nil).
	Client *http.Client
}

// S3 stores blobs as objects named <prefix><ab>/<key> in a bucket of an S3-compatible service.
// Requests are signed with AWS Signature Version 4. An object appears whole or not at all (a
// PUT is atomic), so no reader sees partial content.
type S3 struct {
	cfg  S3Config
	base *url.URL
	now  func() time.Time
}

// NewS3 returns the S3 store of cfg; it refuses an incomplete configuration.
func NewS3(cfg S3Config) (*S3, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" {
		return nil, errors.New("blob store s3: the endpoint and the bucket are required")
	}
	if cfg.AccessKeyID == "" || cfg.SecretAccessKey == "" {
		return nil, errors.New("blob store s3: the access key id and the secret access key are required")
	}
	u, err := url.Parse(strings.TrimRight(cfg.Endpoint, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("blob store s3: endpoint %q is not an http(s) URL", cfg.Endpoint)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Client == nil {
		cfg.Client = http.DefaultClient
	}
	return &S3{cfg: cfg, base: u, now: time.Now}, nil
}

// objectURL returns the URL of key's object.
func (s *S3) objectURL(key string) *url.URL {
	u := *s.base
	name := s.cfg.Prefix + key[:2] + "/" + key
	p := strings.TrimRight(u.Path, "/")
	if s.cfg.VirtualHost {
		u.Host = s.cfg.Bucket + "." + u.Host
		p += "/" + name
	} else {
		p += "/" + s.cfg.Bucket + "/" + name
	}
	u.Path, u.RawPath = p, awsEscapePath(p)
	return &u
}

func (s *S3) do(ctx context.Context, method, key string, body io.Reader, size int64, payloadHash string, header http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.objectURL(key).String(), body)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.ContentLength = size
	}
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	SignV4(req, payloadHash, Credentials{AccessKeyID: s.cfg.AccessKeyID, SecretAccessKey: s.cfg.SecretAccessKey, SessionToken: s.cfg.SessionToken},
		s.cfg.Region, "s3", s.now())
	return s.cfg.Client.Do(req)
}

// emptyHash is the SHA-256 of no bytes, the payload hash of requests without a body.
const emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Put implements Store: the content is hashed into a temporary file first, since its key (and
// the signed payload hash, which is the same digest) must be known before the upload.
func (s *S3) Put(ctx context.Context, r io.Reader, limit int64) (Info, error) {
	tmp, err := os.CreateTemp(s.cfg.TempDir, "sdods-s3-put-*")
	if err != nil {
		return Info{}, fmt.Errorf("blob put: %w", err)
	}
	defer func() { tmp.Close(); os.Remove(tmp.Name()) }()
	h := sha256.New()
	src := r
	if limit > 0 {
		src = io.LimitReader(r, limit+1)
	}
	n, err := io.Copy(io.MultiWriter(tmp, h), src)
	if err != nil {
		return Info{}, fmt.Errorf("blob put: %w", err)
	}
	if limit > 0 && n > limit {
		return Info{}, fmt.Errorf("blob put: %w", ErrTooLarge)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	info := Info{Key: sum, Size: n, SHA256: sum}
	// Content addressed: an object that exists already holds these very bytes.
	if resp, err := s.do(ctx, http.MethodHead, sum, nil, 0, emptyHash, nil); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return info, nil
		}
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return Info{}, fmt.Errorf("blob put: %w", err)
	}
	resp, err := s.do(ctx, http.MethodPut, sum, io.NopCloser(tmp), n, sum, http.Header{"Content-Type": {"application/octet-stream"}})
	if err != nil {
		return Info{}, fmt.Errorf("blob put: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return Info{}, fmt.Errorf("blob put %s: %w", sum, s3Error(resp))
	}
	return info, nil
}

// Open implements Store.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	return s.get(ctx, key, nil)
}

// OpenRange implements RangeOpener with a Range request.
func (s *S3) OpenRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if length <= 0 {
		return io.NopCloser(strings.NewReader("")), nil
	}
	return s.get(ctx, key, http.Header{"Range": {"bytes=" + strconv.FormatInt(offset, 10) + "-" + strconv.FormatInt(offset+length-1, 10)}})
}

func (s *S3) get(ctx context.Context, key string, header http.Header) (io.ReadCloser, error) {
	if !keyPattern.MatchString(key) {
		return nil, fmt.Errorf("blob key %q: %w", key, ErrNotFound)
	}
	resp, err := s.do(ctx, http.MethodGet, key, nil, 0, emptyHash, header)
	if err != nil {
		return nil, fmt.Errorf("blob open: %w", err)
	}
	switch resp.StatusCode {
	case http.StatusOK, http.StatusPartialContent:
		return resp.Body, nil
	case http.StatusNotFound:
		resp.Body.Close()
		return nil, fmt.Errorf("blob %s: %w", key, ErrNotFound)
	}
	defer resp.Body.Close()
	return nil, fmt.Errorf("blob open %s: %w", key, s3Error(resp))
}

// Delete implements Store.
func (s *S3) Delete(ctx context.Context, key string) error {
	if !keyPattern.MatchString(key) {
		return nil
	}
	resp, err := s.do(ctx, http.MethodDelete, key, nil, 0, emptyHash, nil)
	if err != nil {
		return fmt.Errorf("blob delete: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("blob delete %s: %w", key, s3Error(resp))
	}
	return nil
}

func s3Error(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
	code := ""
	if i := strings.Index(string(b), "<Code>"); i >= 0 {
		rest := string(b[i+6:])
		if j := strings.Index(rest, "</Code>"); j >= 0 {
			code = rest[:j]
		}
	}
	return fmt.Errorf("s3 answered %s %s", resp.Status, code)
}

// Credentials sign requests.
type Credentials struct {
	AccessKeyID, SecretAccessKey, SessionToken string
}

// SignV4 signs req with AWS Signature Version 4 (header form): it sets X-Amz-Date (and
// X-Amz-Security-Token with a session token) and Authorization. The signed headers are Host,
// Content-Type, Content-MD5 and every X-Amz-* header present; payloadHash is the hex SHA-256 of
// the body (or UNSIGNED-PAYLOAD).
func SignV4(req *http.Request, payloadHash string, c Credentials, region, service string, now time.Time) {
	now = now.UTC()
	amzDate := now.Format("20060102T150405Z")
	day := now.Format("20060102")
	req.Header.Set("X-Amz-Date", amzDate)
	if c.SessionToken != "" {
		req.Header.Set("X-Amz-Security-Token", c.SessionToken)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	headers := map[string]string{"host": host}
	for k, v := range req.Header {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-amz-") || lk == "content-type" || lk == "content-md5" {
			vals := make([]string, len(v))
			for i, x := range v {
				vals[i] = strings.Join(strings.Fields(x), " ")
			}
			headers[lk] = strings.Join(vals, ",")
		}
	}
	names := make([]string, 0, len(headers))
	for k := range headers {
		names = append(names, k)
	}
	sort.Strings(names)
	var canonHeaders strings.Builder
	for _, k := range names {
		canonHeaders.WriteString(k + ":" + headers[k] + "\n")
	}
	signed := strings.Join(names, ";")
	canonical := strings.Join([]string{req.Method, canonicalURI(req.URL), canonicalQuery(req.URL), canonHeaders.String(), signed, payloadHash}, "\n")
	scope := day + "/" + region + "/" + service + "/aws4_request"
	sum := sha256.Sum256([]byte(canonical))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	key := hmacSHA256([]byte("AWS4"+c.SecretAccessKey), day)
	key = hmacSHA256(key, region)
	key = hmacSHA256(key, service)
	key = hmacSHA256(key, "aws4_request")
	sig := hex.EncodeToString(hmacSHA256(key, toSign))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+c.AccessKeyID+"/"+scope+", SignedHeaders="+signed+", Signature="+sig)
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func canonicalURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		return "/"
	}
	// Re-encode from the decoded path so that the signature covers AWS's encoding exactly.
	return awsEscapePath(u.Path)
}

func canonicalQuery(u *url.URL) string {
	q := u.Query()
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		vals := append([]string(nil), q[k]...)
		sort.Strings(vals)
		for _, v := range vals {
			parts = append(parts, awsEscape(k)+"="+awsEscape(v))
		}
	}
	return strings.Join(parts, "&")
}

// awsEscape percent-encodes everything but the unreserved characters of RFC 3986.
func awsEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ('A' <= c && c <= 'Z') || ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func awsEscapePath(p string) string {
	if p == "" {
		return "/"
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = awsEscape(s)
	}
	return strings.Join(segs, "/")
}
