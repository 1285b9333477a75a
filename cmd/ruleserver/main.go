// Command ruleserver is the stateless rule server of sdods: it serves evaluations, bundles and
// manifests of the rulesets in a directory over HTTP (openapi/rules.yaml). See docs/ruleserver.md.
//
// RULE_SERVER_TOKEN is required; without it, and without RULE_SERVER_ALLOW_OPEN=1, the command
// logs one FATAL line and exits with status 1 before loading any rules. It exits 0 after a clean
// drain on SIGTERM, 1 on any refusal or failure, 2 for bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"strings"

	"github.com/sdods/sdods/impl/rules/ruleserver"
)

func main() {
	var c ruleserver.Config
	cfgErr := c.FromEnv(os.Getenv)
	fs := flag.NewFlagSet("ruleserver", flag.ContinueOnError)
	c.Flags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	log, err := ruleserver.NewLogger(os.Stderr, c.LogLevel)
	if err != nil {
		log, _ = ruleserver.NewLogger(os.Stderr, "info")
		cfgErr = errors.Join(cfgErr, err)
	}
	ctx := context.Background()
	if cfgErr == nil {
		cfgErr = ruleserver.Run(ctx, c, log)
	}
	if cfgErr != nil {
		log.Log(ctx, ruleserver.LevelFatal, strings.ReplaceAll(cfgErr.Error(), "\n", "; "))
		os.Exit(1)
	}
}
