package scenariowrite

import (
	"encoding/json"
	"testing"
)

func TestJSONBSafe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`"plain"`, `"plain"`},
		{`"a\u0000b"`, `"a\ufffdb"`},
		{`"\u0000\u0000"`, `"\ufffd\ufffd"`},
		{`"\\u0000"`, `"\\u0000"`},   // an escaped backslash, then the text u0000
		{`"\\\u0000"`, `"\\\ufffd"`}, // an escaped backslash, then a NUL
		{`"\u00000"`, `"\ufffd0"`},   // a NUL, then a zero
		{`"\u0001 \n \u2028"`, `"\u0001 \n \u2028"`},
		{`["x\u0000",{"k\u0000":1}]`, `["x\ufffd",{"k\ufffd":1}]`},
		{`"\u000`, `"\u000`}, // cut short: left as it is
	} {
		if got := string(JSONBSafe([]byte(c.in))); got != c.want {
			t.Errorf("JSONBSafe(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	// What encoding/json writes for a NUL decodes, after it, to the replacement character.
	b, _ := json.Marshal(map[string]string{"m": "a\x00b\\u0000"})
	var back map[string]string
	if err := json.Unmarshal(JSONBSafe(b), &back); err != nil || back["m"] != "a\ufffdb\\u0000" {
		t.Fatalf("round trip: %q, %v", back["m"], err)
	}
}
