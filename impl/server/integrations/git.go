// Package integrations talks to the systems a project is connected to: a Git repository its
// feature files are synced from (go-git, in memory), and a webhook notified of run outcomes.
// Service owns their configuration, connectivity tests and the Git sync.
package integrations

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/sdods/sdods/impl/server/egress"
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
	// Egress decides which addresses a repository may be reached at; nil: the built-in denies.
	Egress *egress.Policy
	// Log receives why a repository could not be reached, which the caller is not told.
	Log *slog.Logger
}

// ErrUnreachable is the one error of every repository that cannot be reached, whatever the cause
// (refused by the egress policy, no such host, a closed or filtered port, something that does
// not speak Git, refused credentials): telling them apart would make the integration a port
// scanner of the server's network. The cause goes to the server's log.
var ErrUnreachable = errors.New("the repository cannot be reached from this server: check the URL and the credentials (the server's egress policy may refuse the address)")

// installHTTP makes go-git's http and https transports, which are process-wide, dial through the
// egress policy the context carries, and refuse without one.
var installHTTP = sync.OnceFunc(func() {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil // a proxy would dial on our behalf, out of the policy's reach
	t.DialContext = egress.ContextDial
	t.DisableKeepAlives = true // every connection is dialled, and checked, under its own policy
	c := githttp.NewClient(&http.Client{Transport: t, Timeout: 2 * time.Minute})
	client.InstallProtocol("http", c)
	client.InstallProtocol("https", c)
})

func (g Git) policy() *egress.Policy {
	if g.Egress != nil {
		return g.Egress
	}
	p, _ := egress.New(egress.Config{})
	return p
}

// remote returns the endpoint go-git will dial for raw, refusing anything but http, https, ssh
// and git with a host. go-git's own parser decides, so what is checked is what is dialled.
func remote(raw string) (*transport.Endpoint, error) {
	ep, err := transport.NewEndpoint(raw)
	if err != nil {
		return nil, errors.New("not a repository URL: use https://…, ssh://… or git@host:path")
	}
	switch ep.Protocol {
	case "http", "https", "ssh", "git":
	case "file":
		return nil, errors.New("not a repository URL: use https://…, ssh://… or git@host:path")
	default:
		return nil, fmt.Errorf("URL scheme %q is not supported: use https, ssh or git", ep.Protocol)
	}
	if ep.Password != "" { // it would be stored, and logged, in the clear
		return nil, errors.New("the URL carries a password: put the token in auth.secret instead")
	}
	host := strings.TrimSuffix(strings.TrimPrefix(ep.Host, "["), "]")
	if host == "" || strings.ContainsAny(host, "/@\\ ") {
		return nil, errors.New("not a repository URL: the host is missing or malformed")
	}
	return ep, nil
}

var defaultPorts = map[string]int{"http": 80, "https": 443, "ssh": 22, "git": 9418}

// reach checks the repository's host against the egress policy before go-git dials it (ssh and
// git dial by name themselves; http and https are checked again at dial time). Any failure is
// ErrUnreachable, with the cause logged.
func (g Git) reach(ctx context.Context, raw string) (context.Context, error) {
	installHTTP()
	pol := g.policy()
	ep, err := remote(raw)
	if err != nil {
		return nil, err
	}
	port := ep.Port
	if port == 0 {
		port = defaultPorts[ep.Protocol]
	}
	if _, err := pol.Resolve(ctx, ep.Host, uint16(port)); err != nil {
		return nil, g.unreachable(ctx, ep, err)
	}
	return egress.WithPolicy(ctx, pol), nil
}

func (g Git) unreachable(ctx context.Context, ep *transport.Endpoint, cause error) error {
	if g.Log != nil {
		g.Log.InfoContext(ctx, "git repository unreachable", "protocol", ep.Protocol, "host", ep.Host, "port", ep.Port, "cause", cause.Error())
	}
	return ErrUnreachable
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
	_, err := remote(raw)
	return err
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
	ctx, err = g.reach(ctx, c.URL)
	if err != nil {
		return err
	}
	rem := git.NewRemote(memory.NewStorage(), &gitconfig.RemoteConfig{Name: "origin", URLs: []string{c.URL}})
	refs, err := rem.ListContext(ctx, &git.ListOptions{Auth: auth})
	if err != nil {
		ep, _ := remote(c.URL)
		return g.unreachable(ctx, ep, errors.New(safe(err, c)))
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
		if ctx, err = g.reach(ctx, c.URL); err != nil {
			return nil, err
		}
		repo, err = git.CloneContext(ctx, memory.NewStorage(), nil, &git.CloneOptions{URL: c.URL, Auth: auth,
			ReferenceName: plumbing.NewBranchReferenceName(c.Branch), SingleBranch: true, Depth: 1, Tags: git.NoTags})
		if errors.Is(err, git.NoMatchingRefSpecError{}) {
			return nil, fmt.Errorf("branch %s not found", c.Branch)
		}
		if err != nil {
			ep, _ := remote(c.URL)
			return nil, g.unreachable(ctx, ep, errors.New(safe(err, c)))
		}
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
