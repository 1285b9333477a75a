//go:build tools

// Tools the benchmark workflow runs, pinned by this module's go.mod.
package bench

import _ "golang.org/x/perf/cmd/benchstat"
