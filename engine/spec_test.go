package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/engine/internal/diag"
)

func readSpec(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "spec", "v1", name))
	if err != nil {
		t.Skipf("spec not available: %v", err)
	}
	return string(b)
}

// TestSpecListsEveryOperator keeps spec/v1/operators.md and the operator table in step.
func TestSpecListsEveryOperator(t *testing.T) {
	doc := readSpec(t, "operators.md")
	rows := 0
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Count(line, "`") >= 2 && len(line) > 2 && line[2] >= '1' && line[2] <= '9' {
			rows++
		}
	}
	if rows != 45 {
		t.Errorf("operators.md table has %d rows, want 45", rows)
	}
	for _, op := range engine.CoreOperators() {
		if !strings.Contains(doc, "| `"+op+"` |") {
			t.Errorf("operators.md does not list %s in its table", op)
		}
		if !strings.Contains(doc, "### `"+op+"`") && !strings.Contains(doc, "`"+op+"`,") && !strings.Contains(doc, ", `"+op+"`") {
			t.Errorf("operators.md has no section for %s", op)
		}
	}
}

// TestSpecListsEveryCode keeps spec/v1/errors.md and the code constants in step.
func TestSpecListsEveryCode(t *testing.T) {
	doc := readSpec(t, "errors.md")
	for _, code := range diag.Codes {
		if !strings.Contains(doc, "| `"+code+"` |") {
			t.Errorf("errors.md does not document %s", code)
		}
	}
}
