//go:build !unix

package bench

// cpuTime is not measured here; cpu-ns/op is then not reported.
func cpuTime() int64 { return 0 }
