package jcs_test

import (
	"math"
	"testing"

	"github.com/sdods/sdods/engine/internal/jcs"
	"github.com/sdods/sdods/engine/internal/jsonv"
)

func TestNumbers(t *testing.T) {
	// RFC 8785 appendix B and ECMAScript layout edges.
	cases := map[float64]string{
		0: "0", math.Copysign(0, -1): "0", 1: "1", -1: "-1", 0.1: "0.1", 1e21: "1e+21", 1e20: "100000000000000000000",
		123456789012345680000: "123456789012345680000", 1e-6: "0.000001", 1e-7: "1e-7",
		4.5: "4.5", 2e-3: "0.002", 0.000001234: "0.000001234", 1.7976931348623157e308: "1.7976931348623157e+308",
		5e-324: "5e-324", 333333333.3333332: "333333333.3333332", 9007199254740992: "9007199254740992",
		-1.5e-10: "-1.5e-10",
	}
	for f, want := range cases {
		if got := string(jcs.AppendNumber(nil, f)); got != want {
			t.Errorf("%v: got %s want %s", f, got, want)
		}
	}
}

func TestCanonical(t *testing.T) {
	in := `{"b":[1.0,2e0,"\u20ac\n\u001f"],"a":{"\u00e9":true,"z":null},"\ud83d\ude00":1,"\ufb33":2}`
	n, err := jsonv.Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got, err := jcs.Canonical(n)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"a\":{\"z\":null,\"é\":true},\"b\":[1,2,\"€\\n\\u001f\"],\"\U0001F600\":1,\"\ufb33\":2}"
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := jcs.Indented(n); err != nil {
		t.Fatal(err)
	}
}

func TestRefusals(t *testing.T) {
	for _, in := range []string{`{"a":1,"a":2}`, `1e400`} {
		n, err := jsonv.Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jcs.Canonical(n); err == nil {
			t.Errorf("%s: accepted", in)
		}
	}
}
