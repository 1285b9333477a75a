package jsonv_test

import (
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/internal/jsonv"
)

func TestCheckText(t *testing.T) {
	cases := []struct {
		name, text, err string // err: "" when accepted, else a part of the message
	}{
		{"ASCII", `{"a":"b"}`, ""},
		{"two, three and four bytes", "\"\u00e9\u20ac\U0001F600\"", ""},
		{"U+FFFF and U+10FFFF", "\"\uffff\U0010FFFF\"", ""},
		{"a pair of escapes", `"\ud83d\ude00"`, ""},
		{"a pair in upper case", `"\uD83D\uDE00"`, ""},
		{"the last pair", `"\udbff\udfff"`, ""},
		{"an escaped backslash before u", `"\\ud800"`, ""},
		{"two escaped backslashes, then a pair", `"\\\\\ud800\udc00"`, ""},
		{"escape of U+FFFD", `"\ufffd"`, ""},
		{"a short escape is the decoder's to refuse", `"\ud8"`, ""},
		{"0xFF", "\"a\xffb\"", "invalid UTF-8 at byte 2"},
		{"encoded high surrogate", "\"\xed\xa0\x80\"", "invalid UTF-8 at byte 1"},
		{"encoded low surrogate", "\"\xed\xbf\xbf\"", "invalid UTF-8"},
		{"overlong slash", "\"\xc0\xaf\"", "invalid UTF-8"},
		{"overlong three bytes", "\"\xe0\x80\xaf\"", "invalid UTF-8"},
		{"truncated", "\"\xe2\x82\"", "invalid UTF-8"},
		{"beyond U+10FFFF", "\"\xf4\x90\x80\x80\"", "invalid UTF-8"},
		{"lone continuation byte", "\"\x80\"", "invalid UTF-8"},
		{"in a member name", "{\"\xff\":1}", "invalid UTF-8 at byte 2"},
		{"lone high escape", `"\ud800"`, `lone surrogate escape \ud800 at byte 1`},
		{"lone low escape", `"x\uDC00"`, `lone surrogate escape \udc00 at byte 2`},
		{"high then a letter", `"\ud800\u0041"`, "lone surrogate"},
		{"high then high then low", `"\ud83d\ud83d\ude00"`, `\ud83d at byte 1`},
		{"reversed pair", `"\ude00\ud83d"`, `\ude00 at byte 1`},
		{"high at the end of the text", `"\ud83d`, "lone surrogate"},
		{"high then an escaped backslash", `"\ud83d\\udc00"`, "lone surrogate"},
		{"escaped backslash, then a lone escape", `"\\\ud800"`, `at byte 3`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := jsonv.CheckText([]byte(tc.text))
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("got %v, want an error with %q", err, tc.err)
			}
		})
	}
}
