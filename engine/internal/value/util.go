package value

import (
	"fmt"
	"sort"
)

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func goType(v any) string { return fmt.Sprintf("%T", v) }

func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
