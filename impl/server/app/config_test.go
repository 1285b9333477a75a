package app_test

import (
	"flag"
	"io"
	"slices"
	"testing"

	"github.com/sdods/sdods/impl/server/app"
)

func TestEgressConfiguration(t *testing.T) {
	for _, tc := range []struct {
		name        string
		env         map[string]string
		args        []string
		allow, deny []string
		invalid     bool
	}{
		{name: "none: the built-in denies alone"},
		{name: "environment", env: map[string]string{"SDODS_EGRESS_ALLOW": "127.0.0.0/8, ::1", "SDODS_EGRESS_DENY": "*.corp.example"},
			allow: []string{"127.0.0.0/8", "::1"}, deny: []string{"*.corp.example"}},
		{name: "flags replace the environment and repeat", env: map[string]string{"SDODS_EGRESS_ALLOW": "10.0.0.0/8"},
			args: []string{"-egress-allow", "127.0.0.0/8", "-egress-allow", "::1,10.1.2.3:5432"}, allow: []string{"127.0.0.0/8", "::1", "10.1.2.3:5432"}},
		{name: "a malformed rule stops the server", args: []string{"-egress-deny", "10.0.0.0/40"}, deny: []string{"10.0.0.0/40"}, invalid: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"SDODS_EGRESS_ALLOW", "SDODS_EGRESS_DENY"} {
				t.Setenv(k, tc.env[k])
			}
			var c app.Config
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			c.Flags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.EgressAllow, tc.allow) || !slices.Equal(c.EgressDeny, tc.deny) {
				t.Fatalf("allow %q deny %q, want %q %q", c.EgressAllow, c.EgressDeny, tc.allow, tc.deny)
			}
			if err := c.Validate(); (err != nil) != tc.invalid {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
}

func TestGCPercentConfiguration(t *testing.T) {
	for _, tc := range []struct {
		name string
		gogc string
		want int
	}{
		{"GOGC unset: the server's default", "", app.DefaultGCPercent},
		{"GOGC set: the runtime reads it, the server leaves it", "100", 0},
		{"GOGC=off is the operator's choice too", "off", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			var c app.Config
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			c.Flags(fs)
			if c.GCPercent != tc.want {
				t.Fatalf("GCPercent %d, want %d", c.GCPercent, tc.want)
			}
		})
	}
}
