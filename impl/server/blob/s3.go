package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// RangeOpener is a Store that can return part of a blob without reading what precedes it.
type RangeOpener interface {
	// OpenRange returns length bytes of key from offset, or ErrNotFound.
	OpenRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
}

// S3Config configures the S3-compatible store (AWS S3, MinIO, Ceph RGW, Garage, R2, …).
type S3Config struct {
	// Endpoint is the service's base URL, e.g. https://s3.eu-west-1.amazonaws.com or
	// http://127.0.0.1:9000 (no path).
	Endpoint string
	Bucket   string
	// Region signs the requests (us-east-1 when empty).
	Region string
	// Prefix is prepended to every object name ("sdods/" gives sdods/ab/abcdef…).
	Prefix string
	// VirtualHost addresses the bucket as a host name (bucket.endpoint) instead of a path
	// (endpoint/bucket).
	VirtualHost bool
	// Static keys. When AccessKeyID is empty, the standard chain finds credentials: the
	// AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN environment, the shared
	// credentials file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, profile AWS_PROFILE,
	// SSO sessions included), then the IAM role of the machine: web identity (IRSA:
	// AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN), the ECS/EKS container endpoint or EC2
	// instance metadata.
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// TempDir holds uploads while they are hashed (the system's temporary directory when empty).
	TempDir string
	// PartSize is the size of a multipart upload's parts, and the size above which an upload is
	// multipart (16 MiB when 0; at least 5 MiB, S3's minimum).
	PartSize uint64
	// Transport sends the requests (the library's default transport when nil).
	Transport http.RoundTripper
}

// DefaultPartSize is S3Config.PartSize's default: 10,000 parts (S3's maximum) of 16 MiB hold
// 156 GiB, far above any blob limit the server sets.
const DefaultPartSize = 16 << 20

// S3 stores blobs as objects named <prefix><ab>/<key> in a bucket of an S3-compatible service,
// through the minio-go client: Signature Version 4, multipart uploads above PartSize, retries
// with backoff of failed requests. An object appears whole or not at all (a PUT, or the
// completion of a multipart upload, is atomic), so no reader sees partial content.
type S3 struct {
	cfg    S3Config
	client *minio.Client
}

// NewS3 returns the S3 store of cfg; it refuses an incomplete configuration. Credentials are
// looked up when the first request needs them.
func NewS3(cfg S3Config) (*S3, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" {
		return nil, errors.New("blob store s3: the endpoint and the bucket are required")
	}
	u, err := url.Parse(strings.TrimRight(cfg.Endpoint, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("blob store s3: endpoint %q is not an http(s) URL", cfg.Endpoint)
	}
	if u.Path != "" || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("blob store s3: endpoint %q must be scheme://host[:port] only", cfg.Endpoint)
	}
	if (cfg.AccessKeyID == "") != (cfg.SecretAccessKey == "") {
		return nil, errors.New("blob store s3: give both the access key id and the secret access key, or neither (the standard credential chain)")
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.PartSize == 0 {
		cfg.PartSize = DefaultPartSize
	}
	if cfg.PartSize < 5<<20 {
		return nil, fmt.Errorf("blob store s3: part size %d is below S3's minimum of 5 MiB", cfg.PartSize)
	}
	lookup := minio.BucketLookupPath
	if cfg.VirtualHost {
		lookup = minio.BucketLookupDNS
	}
	client, err := minio.New(u.Host, &minio.Options{
		Creds:        credentialChain(cfg),
		Secure:       u.Scheme == "https",
		Transport:    cfg.Transport,
		Region:       cfg.Region,
		BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("blob store s3: %w", err)
	}
	client.SetAppInfo("sdods", "1")
	return &S3{cfg: cfg, client: client}, nil
}

// credentialChain is the static keys when configured, else the standard chain.
func credentialChain(cfg S3Config) *credentials.Credentials {
	if cfg.AccessKeyID != "" {
		return credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)
	}
	return credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.FileAWSCredentials{},
		&credentials.IAM{},
	})
}

func (s *S3) objectName(key string) string { return s.cfg.Prefix + key[:2] + "/" + key }

// Check reaches the bucket: it fails when the credentials, the endpoint or the bucket are wrong.
func (s *S3) Check(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.cfg.Bucket)
	if err != nil {
		return fmt.Errorf("blob store s3: %w", describe(err))
	}
	if !ok {
		return fmt.Errorf("blob store s3: bucket %q does not exist", s.cfg.Bucket)
	}
	return nil
}

// Put implements Store: the content is hashed into a temporary file first, since its key must be
// known before the upload.
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
	if st, err := s.client.StatObject(ctx, s.cfg.Bucket, s.objectName(sum), minio.StatObjectOptions{}); err == nil && st.Size == n {
		return info, nil
	} else if err != nil && !isNotFound(err) {
		return Info{}, fmt.Errorf("blob put %s: %w", sum, describe(err))
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return Info{}, fmt.Errorf("blob put: %w", err)
	}
	_, err = s.client.PutObject(ctx, s.cfg.Bucket, s.objectName(sum), tmp, n, minio.PutObjectOptions{
		ContentType: "application/octet-stream",
		PartSize:    s.cfg.PartSize,
	})
	if err != nil {
		return Info{}, fmt.Errorf("blob put %s: %w", sum, describe(err))
	}
	return info, nil
}

// Open implements Store.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	return s.get(ctx, key, minio.GetObjectOptions{})
}

// OpenRange implements RangeOpener with a Range request.
func (s *S3) OpenRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if length <= 0 {
		return io.NopCloser(strings.NewReader("")), nil
	}
	var opts minio.GetObjectOptions
	if err := opts.SetRange(offset, offset+length-1); err != nil {
		return nil, fmt.Errorf("blob open %s: %w", key, err)
	}
	return s.get(ctx, key, opts)
}

func (s *S3) get(ctx context.Context, key string, opts minio.GetObjectOptions) (io.ReadCloser, error) {
	if !keyPattern.MatchString(key) {
		return nil, fmt.Errorf("blob key %q: %w", key, ErrNotFound)
	}
	obj, err := s.client.GetObject(ctx, s.cfg.Bucket, s.objectName(key), opts)
	if err == nil {
		// GetObject is lazy: Stat sends the request, so a missing object is told apart here.
		_, err = obj.Stat()
	}
	if err != nil {
		if obj != nil {
			obj.Close()
		}
		if isNotFound(err) {
			return nil, fmt.Errorf("blob %s: %w", key, ErrNotFound)
		}
		return nil, fmt.Errorf("blob open %s: %w", key, describe(err))
	}
	return obj, nil
}

// Delete implements Store.
func (s *S3) Delete(ctx context.Context, key string) error {
	if !keyPattern.MatchString(key) {
		return nil
	}
	err := s.client.RemoveObject(ctx, s.cfg.Bucket, s.objectName(key), minio.RemoveObjectOptions{})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("blob delete %s: %w", key, describe(err))
	}
	return nil
}

func isNotFound(err error) bool {
	r := minio.ToErrorResponse(err)
	return r.Code == "NoSuchKey" || r.StatusCode == http.StatusNotFound && r.Code != "NoSuchBucket"
}

// describe keeps an S3 error short: status, code and message (never a request's signature).
func describe(err error) error {
	r := minio.ToErrorResponse(err)
	if r.Code == "" {
		return err
	}
	msg := r.Message
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return fmt.Errorf("s3 answered %d %s: %s", r.StatusCode, r.Code, msg)
}
