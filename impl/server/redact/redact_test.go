package redact_test

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/server/redact"
)

func TestRedactorForms(t *testing.T) {
	const secret = `s3cr3t/P@ss wörd&"<x>`
	const user = "ada"
	r := redact.New([]string{secret, "tok-123456"}, []string{user})
	jsonOf := func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }
	for name, text := range map[string]string{
		"plain":               "token=" + secret + ";",
		"query escaped":       "GET http://x/?p=" + url.QueryEscape(secret),
		"path escaped":        "GET http://x/" + url.PathEscape(secret),
		"lower-case hex":      regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(url.QueryEscape(secret), strings.ToLower),
		"json":                `{"echo":"` + jsonOf(secret) + `"}`,
		"json twice":          jsonOf(`{"echo":"` + jsonOf(secret) + `"}`),
		"json ascii":          `{"echo":"s3cr3t\/P@ss w\u00f6rd\u0026\"\u003cx\u003e"}`,
		"base64":              base64.StdEncoding.EncodeToString([]byte(secret)),
		"basic auth":          "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+secret)),
		"basic, other user":   "Basic " + base64.StdEncoding.EncodeToString([]byte("someone-else:"+secret)),
		"basic, other user 2": "Basic " + base64.StdEncoding.EncodeToString([]byte("x:"+secret)),
		"base64 inside":       base64.StdEncoding.EncodeToString([]byte(`{"k":"tok-123456","n":1}`)),
		"html":                "<p>s3cr3t/P@ss wörd&amp;&quot;&lt;x&gt;</p>",
	} {
		t.Run(name, func(t *testing.T) {
			got := r.String(text)
			if !strings.Contains(got, redact.Mask) {
				t.Fatalf("%q → %q: nothing masked", text, got)
			}
			for _, part := range []string{"s3cr3t", "tok-123456"} {
				if strings.Contains(got, part) {
					t.Fatalf("%q → %q", text, got)
				}
			}
			if dec, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(strings.TrimPrefix(got, "Authorization: Basic "), "Basic ")); err == nil && strings.Contains(string(dec), "s3cr3t") {
				t.Fatalf("%q still decodes to the secret", got)
			}
		})
	}
	if got := r.String("nothing secret here"); got != "nothing secret here" {
		t.Fatalf("%q", got)
	}
	var nilR *redact.Redactor
	if nilR.String("x") != "x" || string(redact.New(nil, nil).Bytes([]byte("x"))) != "x" {
		t.Fatal("empty redactors change text")
	}
}
