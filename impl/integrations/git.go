// Package integrations talks to the systems a project is connected to: a Git repository its
// feature files are synced from (go-git, in memory), and a webhook notified of run outcomes.
package integrations

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"

	git "github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"
)

// GitConfig is a Git integration's configuration with its secret in the clear (in memory only).
type GitConfig struct {
	URL        string `json:"url"`
	Branch     string `json:"branch"`
	Directory  string `json:"directory"`
	AuthMethod string `json:"authMethod"` // none, token or ssh
	Username   string `json:"username,omitempty"`
	AutoSync   bool   `json:"autoSync"`
	Secret     string `json:"-"`
}

// Git reads feature files from repositories.
type Git struct {
	// AllowLocal permits repositories given as a local path or file:// URL. Off by default: a
	// project editor must not read repositories on the server's own disk.
	AllowLocal bool
	// MaxFileBytes skips larger files (0: 1 MiB).
	MaxFileBytes int64
}

// Snapshot is the feature files of one commit.
type Snapshot struct {
	Commit string
	Files  map[string]string // path relative to the directory → content
}

// CheckURL refuses URLs the integration cannot use; the error is safe to show.
func (g Git) CheckURL(raw string) error {
	if local, _ := localPath(raw); local != "" {
		if !g.AllowLocal {
			return errors.New("local repositories are not allowed on this server; use an http(s) or ssh URL")
		}
		return nil
	}
	if strings.HasPrefix(raw, "git@") { // scp-like ssh
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errors.New("not a repository URL: use https://…, ssh://… or git@host:path")
	}
	switch u.Scheme {
	case "http", "https", "ssh", "git":
		return nil
	}
	return fmt.Errorf("URL scheme %q is not supported: use https, ssh or git", u.Scheme)
}

func localPath(raw string) (string, bool) {
	if strings.HasPrefix(raw, "file://") {
		u, err := url.Parse(raw)
		if err != nil {
			return "", false
		}
		return u.Path, true
	}
	if strings.HasPrefix(raw, "/") {
		return raw, true
	}
	return "", false
}

func (c GitConfig) auth() (transport.AuthMethod, error) {
	switch c.AuthMethod {
	case "token":
		user := c.Username
		if user == "" {
			user = "x-access-token"
		}
		return &githttp.BasicAuth{Username: user, Password: c.Secret}, nil
	case "ssh":
		user := c.Username
		if user == "" {
			user = "git"
		}
		keys, err := gitssh.NewPublicKeys(user, []byte(c.Secret), "")
		if err != nil {
			return nil, errors.New("the SSH private key cannot be read")
		}
		return keys, nil
	}
	return nil, nil
}

// Test checks that the repository answers and has the branch.
func (g Git) Test(ctx context.Context, c GitConfig) error {
	if err := g.CheckURL(c.URL); err != nil {
		return err
	}
	if p, ok := localPath(c.URL); ok {
		repo, err := git.PlainOpen(p)
		if err != nil {
			return fmt.Errorf("open repository: %s", safe(err, c))
		}
		if _, err := repo.Reference(plumbing.NewBranchReferenceName(c.Branch), true); err != nil {
			return fmt.Errorf("branch %s not found", c.Branch)
		}
		return nil
	}
	auth, err := c.auth()
	if err != nil {
		return err
	}
	remote := git.NewRemote(memory.NewStorage(), &gitconfig.RemoteConfig{Name: "origin", URLs: []string{c.URL}})
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth})
	if err != nil {
		return fmt.Errorf("list remote: %s", safe(err, c))
	}
	want := plumbing.NewBranchReferenceName(c.Branch)
	for _, r := range refs {
		if r.Name() == want {
			return nil
		}
	}
	return fmt.Errorf("branch %s not found", c.Branch)
}

// Fetch returns the .feature files under the configured directory at the branch's head.
func (g Git) Fetch(ctx context.Context, c GitConfig) (*Snapshot, error) {
	if err := g.CheckURL(c.URL); err != nil {
		return nil, err
	}
	var repo *git.Repository
	var err error
	if p, ok := localPath(c.URL); ok {
		repo, err = git.PlainOpen(p)
	} else {
		var auth transport.AuthMethod
		if auth, err = c.auth(); err != nil {
			return nil, err
		}
		repo, err = git.CloneContext(ctx, memory.NewStorage(), nil, &git.CloneOptions{URL: c.URL, Auth: auth,
			ReferenceName: plumbing.NewBranchReferenceName(c.Branch), SingleBranch: true, Depth: 1, Tags: git.NoTags})
	}
	if err != nil {
		return nil, fmt.Errorf("fetch repository: %s", safe(err, c))
	}
	ref, err := repo.Reference(plumbing.NewBranchReferenceName(c.Branch), true)
	if err != nil {
		return nil, fmt.Errorf("branch %s not found", c.Branch)
	}
	commit, err := repo.CommitObject(ref.Hash())
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %s", ref.Hash(), safe(err, c))
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("read tree: %s", safe(err, c))
	}
	dir := strings.Trim(path.Clean("/"+c.Directory), "/")
	if dir != "" {
		if tree, err = tree.Tree(dir); err != nil {
			return nil, fmt.Errorf("directory %s not found at %s", dir, ref.Hash().String()[:12])
		}
	}
	limit := g.MaxFileBytes
	if limit <= 0 {
		limit = 1 << 20
	}
	snap := &Snapshot{Commit: ref.Hash().String(), Files: map[string]string{}}
	err = tree.Files().ForEach(func(f *object.File) error {
		if !strings.HasSuffix(f.Name, ".feature") || f.Size > limit {
			return nil
		}
		r, err := f.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		snap.Files[f.Name] = string(b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read files: %s", safe(err, c))
	}
	return snap, nil
}

// safe returns an error's text without the configured secret, should a library echo it.
func safe(err error, c GitConfig) string {
	s := err.Error()
	if c.Secret != "" {
		s = strings.ReplaceAll(s, c.Secret, "***")
	}
	return s
}
