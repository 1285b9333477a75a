package runner

import (
	"fmt"
	"testing"
)

// The names of a trace's files are what they were when fmt wrote them.
func TestTraceNames(t *testing.T) {
	for _, attempt := range []int{-1, 0, 1, 2, 12, 1000} {
		if got, want := TraceManifestName(attempt), fmt.Sprintf("trace-a%d.json", attempt); got != want {
			t.Fatalf("%q, want %q", got, want)
		}
		for _, name := range []string{"", "s000-before.jpg", "s012-dom.html"} {
			if got, want := TraceFileName(attempt, name), fmt.Sprintf("trace-a%d-%s", attempt, name); got != want {
				t.Fatalf("%q, want %q", got, want)
			}
		}
	}
}
