package oas_test

import (
	"context"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/sdods/sdods/gen/rulesapi"
	"github.com/sdods/sdods/gen/serverapi"
	"github.com/sdods/sdods/impl/server/oas"
)

const base = `openapi: 3.0.3
info: {title: t, version: "1"}
components:
  securitySchemes:
    bearerAuth: {type: http, scheme: bearer}
security: [{bearerAuth: []}]
paths:
  /things/{id}:
    get:
      operationId: getThing
      parameters: [{name: id, in: path, required: true, schema: {type: string}, x-wildcard: true}]
      responses: {"200": {description: ok}}
%s
`

func mustLoad(tb testing.TB, src string) *openapi3.T {
	tb.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(src))
	if err != nil {
		tb.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return doc
}

func TestBuildRefusesOperationsOutsideThePolicy(t *testing.T) {
	cases := map[string]string{
		"no x-permission":      ``,
		"unknown target":       `      x-permission: {target: everyone, action: read, scope: a:b}`,
		"unknown action":       `      x-permission: {target: workspace, action: delete, scope: a:b}`,
		"no scope":             `      x-permission: {target: workspace, action: read}`,
		"unknown member":       `      x-permission: {target: workspace, action: read, scope: a:b, role: x}`,
		"public with security": `      x-permission: {target: public}`,
	}
	for name, ext := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := oas.Build(mustLoad(t, strings.Replace(base, "%s", ext, 1)))
			if err == nil || !strings.Contains(err.Error(), "getThing") && !strings.Contains(err.Error(), "/things/{id}") {
				t.Fatalf("Build accepted it: %v", err)
			}
		})
	}
	ok, err := oas.Build(mustLoad(t, strings.Replace(base, "%s", `      x-permission: {target: workspace, action: read, scope: a:b}`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	op, found := ok.Get("getThing")
	if !found || !op.Bearer || op.Cookie || len(op.Wildcards) != 1 || op.SuccessStatus != 200 {
		t.Fatalf("operation %+v", op)
	}
}

func TestEveryServerOperationHasAPermission(t *testing.T) {
	doc, err := serverapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	table, err := oas.Build(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Ops) < 100 {
		t.Fatalf("only %d operations", len(table.Ops))
	}
}

func TestBothDocumentsValidate(t *testing.T) {
	for name, load := range map[string]func() (*openapi3.T, error){"server.yaml": serverapi.GetSpec, "rules.yaml": rulesapi.GetSpec} {
		doc, err := load()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := doc.Validate(context.Background()); err != nil {
			t.Errorf("%s does not validate: %v", name, err)
		}
	}
}
