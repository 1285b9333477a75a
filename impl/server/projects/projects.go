// Package projects holds the stored forms of a project's settings, environments and datasets, and
// reads them back the way the runner needs them: settings with defaults, environment variables
// with secrets opened, dataset rows from the blob store. Service, Environments and Datasets own
// the use cases of projects, their environments and their datasets.
package projects

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/google/uuid"

	"github.com/sdods/sdods/gen/db"
	"github.com/sdods/sdods/impl/server/blob"
	"github.com/sdods/sdods/impl/server/datasets"
	"github.com/sdods/sdods/impl/server/secrets"
)

// Settings are a project's settings (the ProjectSettings schema), stored as JSON in projects.settings.
type Settings struct {
	DisabledLintRules  []string `json:"disabledLintRules"`
	TagPattern         string   `json:"tagPattern,omitempty"`
	DefaultEnvironment string   `json:"defaultEnvironment,omitempty"`
	RunTimeoutSeconds  int      `json:"runTimeoutSeconds"`
	Retries            int      `json:"retries"`
	// Tracing is what the runner records for the trace viewer: off, on_failure or always
	// (runner.Tracing; docs/reports.md, "Tracing").
	Tracing string `json:"tracing,omitempty"`
	// ScenarioConcurrency is how many scenarios of one run execute at once; 0 (absent) means the
	// number of cores of the worker executing the run (Concurrency).
	ScenarioConcurrency int `json:"scenarioConcurrency,omitempty"`
}

// MaxScenarioConcurrency bounds a run's scenarios executing at once, set or defaulted: more would
// mostly queue on the worker's cores, the target's connections and Chromium's memory.
const MaxScenarioConcurrency = 32

// Concurrency returns how many scenarios of a run of the project execute at once on a
// worker with cores cores (GOMAXPROCS): the setting, else cores, within 1..MaxScenarioConcurrency.
func (s Settings) Concurrency(cores int) int {
	n := s.ScenarioConcurrency
	if n <= 0 {
		n = cores
	}
	return min(max(n, 1), MaxScenarioConcurrency)
}

// DefaultTracing is the tracing of a project whose settings name none.
const DefaultTracing = "on_failure"

// DefaultSettings are the settings of a project created without any.
func DefaultSettings() Settings {
	return Settings{DisabledLintRules: []string{}, RunTimeoutSeconds: 3600, Tracing: DefaultTracing}
}

// DecodeSettings reads stored settings, filling defaults for what is missing.
func DecodeSettings(raw []byte) Settings {
	s := DefaultSettings()
	_ = json.Unmarshal(raw, &s)
	if s.DisabledLintRules == nil {
		s.DisabledLintRules = []string{}
	}
	if s.RunTimeoutSeconds <= 0 {
		s.RunTimeoutSeconds = 3600
	}
	if s.Tracing == "" {
		s.Tracing = DefaultTracing
	}
	return s
}

// Variable is an environment variable as stored: Value is the plain value, or for a secret the
// base64 AES-GCM ciphertext bound to VariableAD.
type Variable struct {
	Name   string `json:"name"`
	Secret bool   `json:"secret"`
	Value  string `json:"value"`
}

// VariableAD binds a secret variable's ciphertext to its project, environment and name.
func VariableAD(projectID uuid.UUID, env, name string) string {
	return "env:" + projectID.String() + ":" + env + ":" + name
}

// DecodeVariables reads stored variables (secrets still sealed).
func DecodeVariables(raw []byte) ([]Variable, error) {
	var vs []Variable
	if err := json.Unmarshal(raw, &vs); err != nil {
		return nil, fmt.Errorf("environment variables: %w", err)
	}
	return vs, nil
}

// Variables returns an environment's variables by name with secrets opened; keep the values in
// memory and out of logs and run events.
func Variables(box *secrets.Box, env db.Environment) (map[string]string, error) {
	vs, err := DecodeVariables(env.Variables)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(vs))
	for _, v := range vs {
		if !v.Secret {
			out[v.Name] = v.Value
			continue
		}
		pt, err := box.OpenString(v.Value, VariableAD(env.ProjectID, env.Name, v.Name))
		if err != nil {
			return nil, fmt.Errorf("environment %s variable %s: %w", env.Name, v.Name, err)
		}
		out[v.Name] = pt
	}
	return out, nil
}

// SecretValues returns the opened secret values of an environment, for redacting them from logs
// and reports.
func SecretValues(box *secrets.Box, env db.Environment) ([]string, error) {
	vs, err := DecodeVariables(env.Variables)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range vs {
		if v.Secret {
			pt, err := box.OpenString(v.Value, VariableAD(env.ProjectID, env.Name, v.Name))
			if err != nil {
				return nil, err
			}
			out = append(out, pt)
		}
	}
	return out, nil
}

// LoadDataset reads a stored dataset's content from the blob store and parses it.
func LoadDataset(ctx context.Context, blobs blob.Store, d db.Dataset) (*datasets.Table, error) {
	r, err := blobs.Open(ctx, d.BlobKey)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", d.Name, err)
	}
	defer r.Close()
	content, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", d.Name, err)
	}
	return datasets.Parse(d.Format, content)
}
