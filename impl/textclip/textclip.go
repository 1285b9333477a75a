// Package textclip bounds texts that may carry outside input (request paths, response bodies,
// cron fields) before they go into an error message, an event or a log line. Cuts fall on a rune
// boundary, so a clipped text is still valid UTF-8 when the original was.
package textclip

import (
	"strconv"
	"unicode/utf8"
)

// Clip returns s cut to at most n bytes followed by "…" when it was longer.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:boundary(s, n)] + "…"
}

// Counted is Clip that also says how many bytes were cut: "… (123 bytes more)".
func Counted(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := boundary(s, n)
	return s[:cut] + "… (" + strconv.Itoa(len(s)-cut) + " bytes more)"
}

// boundary is the largest rune boundary at or below n (n < len(s)).
func boundary(s string, n int) int {
	if n < 0 {
		return 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
