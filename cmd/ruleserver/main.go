// Command ruleserver is the stateless rule server of sdods: it serves evaluations, bundles and
// manifests of the rulesets in a directory over HTTP (openapi/rules.yaml). See docs/ruleserver.md.
//
// RULE_SERVER_TOKEN is required; without it, and without RULE_SERVER_ALLOW_OPEN=1, the command
// logs one fatal line and exits with status 1 before loading any rules.
package main

import (
	"context"
	"os"

	"github.com/sdods/sdods/impl/ruleserver"
)

func main() {
	os.Exit(ruleserver.Main(context.Background(), os.Args[1:], os.Getenv, os.Stderr))
}
