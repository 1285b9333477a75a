package app

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/sdods/sdods/impl/server/blob"
)

// BlobConfig chooses the blob store of datasets, run files and artifacts: the filesystem under
// the data directory (one process, or several sharing that directory), or an S3-compatible
// service (several processes on several hosts).
type BlobConfig struct {
	// Backend is "fs" (default) or "s3".
	Backend string
	S3      blob.S3Config
}

func (c *BlobConfig) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Backend, "blob-backend", env("SDODS_BLOB_BACKEND", "fs"), "blob store: fs (under the data directory) or s3 (SDODS_BLOB_BACKEND)")
	fs.StringVar(&c.S3.Endpoint, "s3-endpoint", env("SDODS_S3_ENDPOINT", ""), "S3-compatible endpoint URL, e.g. https://s3.eu-west-1.amazonaws.com (SDODS_S3_ENDPOINT)")
	fs.StringVar(&c.S3.Bucket, "s3-bucket", env("SDODS_S3_BUCKET", ""), "S3 bucket (SDODS_S3_BUCKET)")
	fs.StringVar(&c.S3.Region, "s3-region", env("SDODS_S3_REGION", "us-east-1"), "S3 region used in signatures (SDODS_S3_REGION)")
	fs.StringVar(&c.S3.Prefix, "s3-prefix", env("SDODS_S3_PREFIX", ""), "prefix of the object names, e.g. sdods/ (SDODS_S3_PREFIX)")
	fs.BoolVar(&c.S3.VirtualHost, "s3-virtual-host", env("SDODS_S3_VIRTUAL_HOST", "") == "true", "address the bucket as bucket.endpoint instead of endpoint/bucket (SDODS_S3_VIRTUAL_HOST)")
	// Credentials come from the environment only, never from flags (which other users can see).
	// Without SDODS_S3_*, the standard chain looks (AWS_* variables, shared files, IAM roles).
	c.S3.AccessKeyID = os.Getenv("SDODS_S3_ACCESS_KEY_ID")
	c.S3.SecretAccessKey = os.Getenv("SDODS_S3_SECRET_ACCESS_KEY")
	c.S3.SessionToken = os.Getenv("SDODS_S3_SESSION_TOKEN")
}

func (c *BlobConfig) validate() error {
	switch c.Backend {
	case "", "fs":
		return nil
	case "s3":
		_, err := blob.NewS3(c.S3)
		return err
	}
	return fmt.Errorf("blob-backend must be fs or s3, not %q", c.Backend)
}

// open returns the configured store; dir is the filesystem store's directory. An S3 store must
// reach its bucket at start, so that wrong credentials stop the server instead of its first upload.
func (c *BlobConfig) open(ctx context.Context, dir string) (blob.Store, error) {
	if c.Backend == "s3" {
		s, err := blob.NewS3(c.S3)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := s.Check(ctx); err != nil {
			return nil, err
		}
		return s, nil
	}
	return blob.NewFS(dir)
}
