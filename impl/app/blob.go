package app

import (
	"flag"
	"fmt"
	"os"

	"github.com/sdods/sdods/impl/blob"
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
	c.S3.AccessKeyID = env("SDODS_S3_ACCESS_KEY_ID", os.Getenv("AWS_ACCESS_KEY_ID"))
	c.S3.SecretAccessKey = env("SDODS_S3_SECRET_ACCESS_KEY", os.Getenv("AWS_SECRET_ACCESS_KEY"))
	c.S3.SessionToken = env("SDODS_S3_SESSION_TOKEN", os.Getenv("AWS_SESSION_TOKEN"))
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

// open returns the configured store; dir is the filesystem store's directory.
func (c *BlobConfig) open(dir string) (blob.Store, error) {
	if c.Backend == "s3" {
		return blob.NewS3(c.S3)
	}
	return blob.NewFS(dir)
}
