// Command rulecheck lints and compiles rulesets, runs the conformance suite and converts rules;
// see impl/rules/rulecheck and docs/rulecheck.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/sdods/sdods/impl/rules/rulecheck"
	"github.com/sdods/sdods/impl/rules/rulecheck/convertcmd"
	"github.com/sdods/sdods/impl/rules/rulecheck/suitecmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	suite := &suitecmd.Main{Stdout: os.Stdout, Stderr: os.Stderr}
	conv := &convertcmd.Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	m := &rulecheck.Main{Args: os.Args[1:], Stdout: os.Stdout, Stderr: os.Stderr, Suite: suite.Run, Convert: conv.Run}
	code := m.Run(ctx)
	stop()
	os.Exit(code)
}
