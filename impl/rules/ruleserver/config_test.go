package ruleserver_test

import (
	"testing"

	"github.com/sdods/sdods/impl/rules/ruleserver"
)

func TestFromEnvGCPercent(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want int
	}{
		{"GOGC unset: the rule server's default", nil, ruleserver.DefaultGCPercent},
		{"GOGC set: the runtime reads it, the server leaves it", map[string]string{"GOGC": "100"}, 0},
		{"GOGC=off is the operator's choice too", map[string]string{"GOGC": "off"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var cfg ruleserver.Config
			if err := cfg.FromEnv(func(k string) string { return c.env[k] }); err != nil {
				t.Fatal(err)
			}
			if cfg.GCPercent != c.want {
				t.Fatalf("GCPercent %d, want %d", cfg.GCPercent, c.want)
			}
		})
	}
}
