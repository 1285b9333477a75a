package engine_test

import (
	"fmt"
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

// TestSpecNullRule keeps the one null rule of operators.md ("Null arguments") in step with the
// operators: its table of strict operators and its three exceptions name each of the 45 exactly
// once, and every strict operator given only nulls returns the null result the table names.
func TestSpecNullRule(t *testing.T) {
	doc := readSpec(t, "operators.md")
	start := strings.Index(doc, "## Null arguments")
	end := strings.Index(doc, "### `==`")
	if start < 0 || end < start {
		t.Fatal("operators.md has no section Null arguments before the section of ==")
	}
	sec := doc[start:end]
	named := map[string]int{}
	strict := map[string]string{} // operator -> null result
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue // only the two tables: the bullets mention operators in passing
		}
		result := ""
		switch {
		case strings.HasPrefix(line, "| null |"):
			result = "null"
		case strings.HasPrefix(line, "| false |"):
			result = "false"
		}
		for _, name := range backticked(line) {
			if !isCore(name) {
				continue
			}
			named[name]++
			if result != "" {
				strict[name] = result
			}
		}
	}
	for _, op := range engine.CoreOperators() {
		if named[op] != 1 {
			t.Errorf("the null rule names %s %d times, want once", op, named[op])
		}
	}
	arity := map[string]int{"between": 3, "dateAdd": 3, "substring": 2, "round": 2}
	for op, want := range strict {
		n := arity[op]
		if n == 0 {
			n = 2
			switch op {
			case "abs", "sum", "upper", "lower", "trim", "text", "length":
				n = 1
			}
		}
		args := strings.TrimSuffix(strings.Repeat("null,", n), ",")
		e, err := engine.CompileExpression([]byte(`{"op":"` + op + `","args":[` + args + `]}`))
		if err != nil {
			t.Errorf("%s: %v", op, err)
			continue
		}
		got, err := e.Evaluate(nil)
		if err != nil || fmt.Sprint(got) != map[string]string{"null": "<nil>", "false": "false"}[want] {
			t.Errorf("%s of nulls: %v %v, want %s", op, got, err, want)
		}
	}
}

func backticked(line string) []string {
	var out []string
	for {
		i := strings.IndexByte(line, '`')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(line[i+1:], '`')
		if j < 0 {
			return out
		}
		out = append(out, line[i+1:i+1+j])
		line = line[i+2+j:]
	}
}

func isCore(name string) bool {
	for _, op := range engine.CoreOperators() {
		if op == name {
			return true
		}
	}
	return false
}
