package ruleserver_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/sdods/sdods/gen/rulesapi"
	"github.com/sdods/sdods/impl/rules/ruleserver"
)

// TestStatusMatchesTheDocument reads the code → status table of openapi/rules.yaml's description
// and checks the one map of the server against it.
func TestStatusMatchesTheDocument(t *testing.T) {
	doc, err := rulesapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\| (\\d{3}|—) \\|").FindAllStringSubmatch(doc.Info.Description, -1)
	if len(rows) < 20 {
		t.Fatalf("found %d rows in the table of codes", len(rows))
	}
	for _, row := range rows {
		code := rulesapi.ErrorCode(row[1])
		if !code.Valid() {
			t.Errorf("%s is in the table but not in the ErrorCode enum", code)
			continue
		}
		want := 500 // load codes: never an HTTP answer
		if row[2] != "—" {
			want, _ = strconv.Atoi(row[2])
		}
		if got := ruleserver.Status(code); got != want {
			t.Errorf("Status(%s) = %d, the document says %s", code, got, row[2])
		}
	}
}
