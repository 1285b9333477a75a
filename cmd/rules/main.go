// Command rules is the single-file rule engine command; see impl/rules/rulescmd.
package main

import (
	"context"
	"os"

	"github.com/sdods/sdods/impl/rules/rulescmd"
)

func main() {
	ctx, stop := notifyContext(context.Background())
	m := &rulescmd.Main{Args: os.Args[1:], Stdin: stdin(), Stdout: os.Stdout, Stderr: os.Stderr}
	code := m.Run(ctx)
	stop()
	os.Exit(code)
}
