package ruleserver_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var deployDir = filepath.Join("..", "..", "..", "deploy")

// TestDockerfile checks the image definition: a static build, an empty base, a non-root user, and
// nothing that opens the server or bakes a token in (the binary itself fails closed without one,
// as TestStartRefusedWithoutToken shows).
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(deployDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	var instr []string
	for _, line := range strings.Split(text, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			instr = append(instr, l)
		}
	}
	code := strings.Join(instr, "\n")
	froms := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(code, -1)
	if len(froms) == 0 || froms[len(froms)-1][1] != "scratch" {
		t.Errorf("the final stage must be FROM scratch (a static binary alone): %v", froms)
	}
	if !strings.Contains(code, "CGO_ENABLED=0") {
		t.Error("the binary must be built with CGO_ENABLED=0 (static)")
	}
	users := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindAllStringSubmatch(code, -1)
	if len(users) == 0 {
		t.Fatal("no USER: the image would run as root")
	}
	if u := users[len(users)-1][1]; strings.HasPrefix(u, "0") || strings.HasPrefix(u, "root") {
		t.Errorf("USER %s is root", u)
	}
	for _, banned := range []string{"RULE_SERVER_ALLOW_OPEN", "RULE_SERVER_TOKEN"} {
		if strings.Contains(code, banned) {
			t.Errorf("the image must not set %s", banned)
		}
	}
	if !regexp.MustCompile(`(?m)^ENTRYPOINT \["/ruleserver"\]`).MatchString(code) {
		t.Error("the entry point must be the binary itself (exec form), so SIGTERM reaches it")
	}
}

// TestKubernetesManifests checks the Deployment (probes, resource limits, non-root, the token
// Secret required), the Service, and a grace period that covers the drain.
func TestKubernetesManifests(t *testing.T) {
	f, err := os.Open(filepath.Join(deployDir, "kubernetes", "ruleserver.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, _ := io.ReadAll(f)
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	kinds := map[string]map[string]any{}
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		kinds[doc["kind"].(string)] = doc
	}
	dep, svc := kinds["Deployment"], kinds["Service"]
	if dep == nil || svc == nil {
		t.Fatalf("want a Deployment and a Service, have %v", kinds)
	}
	get := func(v any, path ...any) any {
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
	pod := get(dep, "spec", "template", "spec")
	c := get(pod, "containers", 0)
	for probe, path := range map[string]string{"livenessProbe": "/livez", "readinessProbe": "/readyz"} {
		if get(c, probe, "httpGet", "path") != path {
			t.Errorf("%s must GET %s: %v", probe, path, get(c, probe))
		}
	}
	for _, r := range []string{"cpu", "memory"} {
		if get(c, "resources", "limits", r) == nil || get(c, "resources", "requests", r) == nil {
			t.Errorf("resources must set requests and limits of %s", r)
		}
	}
	if get(pod, "securityContext", "runAsNonRoot") != true {
		t.Error("the pod must run as non-root")
	}
	found := false
	envs, _ := get(c, "env").([]any)
	for _, e := range envs {
		if get(e, "name") == "RULE_SERVER_ALLOW_OPEN" {
			t.Error("the Deployment must not open the server")
		}
		if get(e, "name") != "RULE_SERVER_TOKEN" {
			continue
		}
		found = true
		ref := get(e, "valueFrom", "secretKeyRef")
		if ref == nil || get(ref, "name") == nil || get(ref, "key") == nil {
			t.Errorf("RULE_SERVER_TOKEN must come from a Secret: %v", e)
		}
		if opt, ok := get(ref, "optional").(bool); ok && opt {
			t.Error("the token Secret must not be optional")
		}
	}
	if !found {
		t.Error("RULE_SERVER_TOKEN is not set from a Secret")
	}
	if bytes.Contains(raw, []byte("optional: true")) {
		t.Error("nothing may be optional: true")
	}
	grace, _ := get(pod, "terminationGracePeriodSeconds").(int)
	if grace < 30 {
		t.Errorf("terminationGracePeriodSeconds %d must cover the drain delay and timeout", grace)
	}
	if get(svc, "spec", "ports", 0, "targetPort") == nil {
		t.Error("the Service must expose the container port")
	}
}
