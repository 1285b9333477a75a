package machine

import (
	"math/rand"
	"strings"
	"testing"
)

// Nests of one-value operators evaluate as one chain: results, errors and budget charges must be
// those of the nested nodes, for random nests over values of every type (strings with and
// without white space, long ones, numbers, booleans, null, lists, objects, failing arguments),
// under every budget up to the one they need.
func TestChainsMatchTheirParts(t *testing.T) {
	long := strings.Repeat("x", 128)
	bases := []string{`{"var":"data.s"}`, `{"var":"data.pad"}`, `{"var":"data.blank"}`, `{"var":"data.long"}`, `{"var":"data.padlong"}`,
		`{"var":"data.n"}`, `{"var":"data.t"}`, `{"var":"data.f"}`, `{"var":"data.l"}`, `{"var":"data.o"}`, `{"var":"data.d"}`,
		`{"var":"missing"}`, `{"op":"+","args":[{"var":"data.n"},"s"]}`, `{"op":"concat","args":[{"var":"data.s"}," "]}`,
		`{"op":"filter","args":[{"var":"data.l"},true]}`, `{"op":"length","args":[{"var":"data.s"}]}`}
	ops := []string{"not", "trim", "text", "isEmpty", "upper", "lower", "typeOf", "isDate", "abs", "sum", "length"}
	consts := []string{`""`, `"  "`, `null`, `0`, `true`, `"` + long + `"`, `[1,2]`}
	env := map[string]any{"data": map[string]any{"s": "ab", "pad": " \t ab \r\n", "blank": " \v\f ", "long": long,
		"padlong": "  " + long + " ", "n": -2.5, "t": true, "f": false, "l": []any{1.0, "a"}, "o": map[string]any{"k": 1.0},
		"d": "2024-02-29"}}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 4000; i++ {
		src := bases[rng.Intn(len(bases))]
		for d := rng.Intn(6); d > 0; d-- {
			if rng.Intn(4) == 0 {
				args := src
				for k := 1 + rng.Intn(2); k > 0; k-- {
					args += "," + consts[rng.Intn(len(consts))]
				}
				src = `{"op":"coalesce","args":[` + args + `]}`
				continue
			}
			src = `{"op":"` + ops[rng.Intn(len(ops))] + `","args":[` + src + `]}`
		}
		var progs [2]*Program
		for k, skip := range []Passes{0, Fuse} {
			progs[k] = compileSkipping(t, src, "/e", skip)
		}
		sameUnderBudgets(t, src, progs[0], progs[1], env, 0, 24)
	}
}
