package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/server/app/apptest"
)

// npmDir holds the independent MCP clients (@modelcontextprotocol/inspector and
// @modelcontextprotocol/conformance) and the Node.js 22 they need: package.json and
// package-lock.json are committed, node_modules is installed by npm ci (make test, or on first use).
var npmDir = filepath.Join("testdata", "npm")

var npmOnce sync.Once

func needNPM(t *testing.T) (node string) {
	t.Helper()
	bin := filepath.Join(npmDir, "node_modules", ".bin")
	npmOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(bin, "conformance")); err == nil {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = npmDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", npmDir, err, out)
		}
	})
	node, err := filepath.Abs(filepath.Join(bin, "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(node); err != nil {
		t.Fatalf("Node.js 22 is not installed in %s: %v", npmDir, err)
	}
	return node
}

// runNode runs a client's command with the Node.js of npmDir and returns its output.
func runNode(t *testing.T, node, script string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	abs, _ := filepath.Abs(filepath.Join(npmDir, "node_modules", ".bin", script))
	cmd := exec.CommandContext(ctx, node, append([]string{abs}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+cmd.Dir, "NO_COLOR=1", "MCP_CATALOG_PATH="+filepath.Join(cmd.Dir, "mcp.json"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// TestMCPInspectorCLI drives the endpoint with @modelcontextprotocol/inspector's CLI mode, in
// both protocol eras: tools/list (with its schema portability check) and tools/call with a
// bearer header, and a viewer's call to start a run refused as over REST.
func TestMCPInspectorCLI(t *testing.T) {
	node := needNPM(t)
	w := newWorld(t)
	token := apptest.Token(t, w.viewer, "mcp", "projects:read", "runs:read", "runs:write", "features:read")
	endpoint := w.s.URL + "/mcp"
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			common := []string{"--cli", endpoint, "--transport", "http", "--protocol-era", era, "--header", "Authorization: Bearer " + token, "--format", "json"}
			out, errOut, err := runNode(t, node, "mcp-inspector", append(common, "--method", "tools/list", "--strict")...)
			if err != nil {
				t.Fatalf("tools/list: %v\n%s\n%s", err, out, errOut)
			}
			var list struct {
				Result struct {
					Tools []struct {
						Name string `json:"name"`
					} `json:"tools"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("tools/list output: %v\n%s", err, out)
			}
			names := map[string]bool{}
			for _, tl := range list.Result.Tools {
				names[tl.Name] = true
			}
			if !names["listProjects"] || !names["getRun"] || !names["failedRunSummary"] || !names["createRun"] || names["listUsers"] || names["createSchedule"] {
				t.Fatalf("tools/list: %v\n%.3000s\n%.3000s", names, out, errOut)
			}
			out, errOut, err = runNode(t, node, "mcp-inspector", append(common, "--method", "tools/call", "--tool-name", "getFeature",
				"--tool-arg", "slug=shop-web", "--tool-arg", "path=smoke/log.feature")...)
			if err != nil || !strings.Contains(out, "Scenario: Logs") {
				t.Fatalf("tools/call getFeature: %v\n%s\n%s", err, out, errOut)
			}
			out, errOut, _ = runNode(t, node, "mcp-inspector", append(common, "--method", "tools/call", "--tool-name", "createRun",
				"--tool-args-json", `{"body":{"project":"shop-web"}}`)...)
			if !strings.Contains(out+errOut, `\"code\":\"forbidden\"`) {
				t.Fatalf("tools/call createRun by a viewer: %s\n%s", out, errOut)
			}
		})
	}
}

// bearerProxy forwards to target, adding the token: the conformance suite's client sends no
// credentials of its own.
func bearerProxy(t *testing.T, target, token string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{FlushInterval: -1, Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		pr.Out.Host = pr.In.Host // the Host and Origin the client sent go through unchanged
		pr.Out.Header.Set("Authorization", "Bearer "+token)
	}}
	ps := httptest.NewServer(rp)
	t.Cleanup(ps.Close)
	return ps.URL
}

// conformanceScenarios are the server scenarios of @modelcontextprotocol/conformance that apply to
// a server of its own tools (the others call the suite's reference tools by name).
var conformanceScenarios = []string{"server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection"}

// TestMCPConformance runs the server scenarios of @modelcontextprotocol/conformance against a real
// sdods (through a proxy that adds the bearer token).
func TestMCPConformance(t *testing.T) {
	node := needNPM(t)
	w := newWorld(t)
	token := apptest.Token(t, w.editor, "mcp", "projects:read", "runs:read", "features:read")
	base := bearerProxy(t, w.s.URL, token)
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			dir := t.TempDir()
			out, errOut, err := runNode(t, node, "conformance", "server", "--url", base+"/mcp", "--scenario", sc, "-o", dir)
			t.Logf("%s\n%s", out, errOut)
			if err != nil {
				t.Fatalf("conformance %s: %v", sc, err)
			}
		})
	}
}
