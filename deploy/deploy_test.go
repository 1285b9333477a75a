// Package deploy holds the container file and the Kubernetes manifests of sdods (and of the rule
// server); its tests check what can be checked without a container engine or a cluster: the
// manifests' invariants, and the binary the container file builds.
package deploy

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sdods/sdods/impl/server/store/storetest"
)

// manifests reads every document of deploy/k8s.
func manifests(t *testing.T) []map[string]any {
	t.Helper()
	files, _ := filepath.Glob("k8s/*.yaml")
	if len(files) == 0 {
		t.Fatal("no manifests under deploy/k8s")
	}
	var docs []map[string]any
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for {
			var d map[string]any
			err := dec.Decode(&d)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if d != nil {
				d["_file"] = f
				docs = append(docs, d)
			}
		}
	}
	return docs
}

// at walks a decoded document: at(d, "spec", "template", 0, "name").
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func list(v any) []any { l, _ := v.([]any); return l }

func TestManifests(t *testing.T) {
	docs := manifests(t)
	roles := map[string]map[string]any{}
	var images []string
	configKeys := map[string]string{}
	services := map[string]map[string]any{}
	for _, d := range docs {
		name, _ := at(d, "metadata", "name").(string)
		switch d["kind"] {
		case "ConfigMap":
			for k, v := range at(d, "data").(map[string]any) {
				configKeys[k] = fmt.Sprint(v)
			}
		case "Service":
			services[name] = d
		case "Deployment":
			if !strings.HasPrefix(name, "sdods") {
				continue // the rule server's
			}
			pod := at(d, "spec", "template", "spec")
			if at(pod, "securityContext", "runAsNonRoot") != true {
				t.Errorf("%s: the pod must set runAsNonRoot", name)
			}
			if uid, _ := at(pod, "securityContext", "runAsUser").(int); uid == 0 {
				t.Errorf("%s: runAsUser must be a non-root uid", name)
			}
			for _, c := range list(at(pod, "containers")) {
				cname := at(c, "name")
				if at(c, "securityContext", "allowPrivilegeEscalation") != false || at(c, "securityContext", "readOnlyRootFilesystem") != true {
					t.Errorf("%s/%s: privilege escalation must be off and the root filesystem read-only", name, cname)
				}
				if caps := list(at(c, "securityContext", "capabilities", "drop")); len(caps) != 1 || caps[0] != "ALL" {
					t.Errorf("%s/%s: every capability must be dropped", name, cname)
				}
				ports := map[string]bool{}
				for _, p := range list(at(c, "ports")) {
					ports[fmt.Sprint(at(p, "name"))] = true
				}
				for _, probe := range []string{"startupProbe", "readinessProbe", "livenessProbe"} {
					pr := at(c, probe)
					if pr == nil {
						t.Errorf("%s/%s: no %s", name, cname, probe)
						continue
					}
					port := at(pr, "httpGet", "port")
					if port == nil {
						port = at(pr, "tcpSocket", "port")
					}
					if !ports[fmt.Sprint(port)] {
						t.Errorf("%s/%s: %s probes port %v, which the container does not name", name, cname, probe, port)
					}
					if path := at(pr, "httpGet", "path"); path != nil && path != "/api/health" {
						t.Errorf("%s/%s: %s probes %v; the server's health is /api/health", name, cname, probe, path)
					}
				}
				if at(c, "readinessProbe", "httpGet", "path") != "/api/health" {
					t.Errorf("%s/%s: readiness must follow /api/health (503 while the database is down)", name, cname)
				}
				// The secret key and the database URL come from Secrets that are required.
				env := map[string]any{}
				for _, e := range list(at(c, "env")) {
					env[fmt.Sprint(at(e, "name"))] = e
				}
				for _, v := range []string{"SDODS_SECRET_KEY", "DATABASE_URL"} {
					e := env[v]
					if at(e, "valueFrom", "secretKeyRef", "name") == nil {
						t.Errorf("%s/%s: %s must come from a Secret", name, cname, v)
					}
					if opt := at(e, "valueFrom", "secretKeyRef", "optional"); opt != nil && opt != false {
						t.Errorf("%s/%s: the Secret of %s must not be optional", name, cname, v)
					}
					if at(e, "value") != nil {
						t.Errorf("%s/%s: %s must not be written in the manifest", name, cname, v)
					}
				}
				args := list(at(c, "args"))
				role := ""
				for i, a := range args {
					if a == "--role" && i+1 < len(args) {
						role = fmt.Sprint(args[i+1])
					}
				}
				if len(args) == 0 || args[0] != "serve" || (role != "api" && role != "worker") {
					t.Errorf("%s/%s: args %v must be serve --role api|worker", name, cname, args)
				}
				if roles[role] != nil {
					t.Errorf("two Deployments of role %s", role)
				}
				roles[role] = d
				images = append(images, fmt.Sprint(at(c, "image")))
			}
		}
	}
	if roles["api"] == nil || roles["worker"] == nil {
		t.Fatalf("want separate api and worker Deployments, have %v", keys(roles))
	}
	if len(images) != 2 || images[0] != images[1] {
		t.Errorf("both roles run the one sdods image: %v", images)
	}
	// The API Service selects the API pods only.
	svc := services["sdods"]
	sel, _ := at(svc, "spec", "selector").(map[string]any)
	podLabels, _ := at(roles["api"], "spec", "template", "metadata", "labels").(map[string]any)
	workerLabels, _ := at(roles["worker"], "spec", "template", "metadata", "labels").(map[string]any)
	if len(sel) == 0 || !subset(sel, podLabels) || subset(sel, workerLabels) {
		t.Errorf("Service sdods selects %v: it must select the API pods and not the workers", sel)
	}
	if services["sdods-postgres"] == nil || at(services["sdods-postgres"], "spec", "type") != "ExternalName" {
		t.Error("PostgreSQL is an external service: want the ExternalName Service sdods-postgres")
	}
	// Blobs in S3, and nothing secret in the ConfigMap.
	if configKeys["SDODS_BLOB_BACKEND"] != "s3" || configKeys["SDODS_S3_BUCKET"] == "" || configKeys["SDODS_S3_ENDPOINT"] == "" {
		t.Errorf("the ConfigMap must configure the S3 blob store: %v", configKeys)
	}
	for k := range configKeys {
		if regexp.MustCompile(`SECRET|PASSWORD|ACCESS_KEY|TOKEN|DATABASE_URL`).MatchString(k) {
			t.Errorf("ConfigMap key %s belongs in a Secret", k)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func subset(sel, labels map[string]any) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// buildCommand is the go build command of the container file, the one `make image-binary` runs.
func buildCommand(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("sdods.Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var run string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "RUN CGO_ENABLED=0 go build ") {
			run = strings.TrimPrefix(l, "RUN ")
		}
	}
	if run == "" {
		t.Fatal("sdods.Dockerfile has no `RUN CGO_ENABLED=0 go build` line")
	}
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), strings.Replace(run, "-o /out/sdods", "-o bin/image/sdods", 1)) {
		t.Errorf("the Makefile's image-binary target must run the container file's command: %s", run)
	}
	if !regexp.MustCompile(`(?m)^USER 65532:65532$`).Match(raw) {
		t.Error("the image must run as the non-root user 65532")
	}
	return shellWords(run)
}

// shellWords splits a command line as a shell does for the plain words and double quotes of the
// container file's build line.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// TestImageBinary builds sdods as the container file does, checks that it is static (it needs
// no loader or C library from the image) and that it serves /api/health on a real database as the
// image's non-root user.
func TestImageBinary(t *testing.T) {
	cmd := buildCommand(t)
	out := filepath.Join(t.TempDir(), "sdods")
	args := []string{}
	for i := 1; i < len(cmd); i++ { // cmd[0] is CGO_ENABLED=0
		switch {
		case cmd[i] == "-o":
			args = append(args, "-o", out)
			i++
		case cmd[i] == "go":
		default:
			args = append(args, cmd[i])
		}
	}
	build := exec.Command("go", args...)
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Fatalf("the binary is not static: it has %v", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("the binary links %v", libs)
	}
	f.Close()

	// Served as uid 65532 (as the image runs it) when this test may switch users.
	dataDir := t.TempDir()
	srv := exec.Command(out, "serve")
	addr := freeAddr(t)
	srv.Env = append(os.Environ(), "DATABASE_URL="+storetest.NewDatabase(t), "SDODS_ADDR="+addr, "SDODS_DATA_DIR="+dataDir,
		"SDODS_SECRET_KEY="+strings.Repeat("ab", 32), "SDODS_LOG_FORMAT=json", "SDODS_WORKERS=0")
	if os.Geteuid() == 0 {
		for _, p := range []string{filepath.Dir(filepath.Dir(out)), filepath.Dir(out), out, filepath.Dir(dataDir), dataDir} {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chown(dataDir, 65532, 65532); err != nil {
			t.Fatal(err)
		}
		srv.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
	}
	var logs bytes.Buffer
	srv.Stdout, srv.Stderr = &logs, &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		_ = srv.Wait()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/api/health", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && bytes.Contains(body, []byte(`"ok"`)) {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("the image's binary did not become healthy: %v\n%s", err, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if os.Geteuid() == 0 {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", srv.Process.Pid))
		if err != nil || !regexp.MustCompile(`(?m)^Uid:\s+65532\s`).Match(raw) {
			t.Fatalf("the server does not run as 65532: %v", err)
		}
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
