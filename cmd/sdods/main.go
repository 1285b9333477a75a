// Command sdods is the test automation server: `sdods serve`, `sdods migrate up|down|version`,
// `sdods version`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/sdods/sdods/impl/app"
	"github.com/sdods/sdods/impl/store"
)

const usage = `usage: sdods <command> [flags]

commands:
  serve                     run the test automation server
  migrate up|down [N]|version   apply, revert (all or N) or show database migrations
  token create --user EMAIL --scopes a,b --name NAME [--expires 720h]
                            create an API token (printed once)
  version                   print the version
Run "sdods <command> -h" for the flags of a command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "sdods:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return flag.ErrHelp
	}
	var cfg app.Config
	fs := flag.NewFlagSet("sdods "+args[0], flag.ContinueOnError)
	cfg.Flags(fs)
	switch args[0] {
	case "serve":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return app.Serve(ctx, cfg)
	case "migrate":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return migrate(ctx, cfg, fs.Args())
	case "token":
		if len(args) < 2 || args[1] != "create" {
			return fmt.Errorf("usage: sdods token create --user EMAIL --scopes a,b --name NAME [--expires DURATION]")
		}
		user := fs.String("user", "", "email of the token's owner")
		scopes := fs.String("scopes", "", "comma-separated scopes, e.g. runs:read,runs:write")
		name := fs.String("name", "", "name shown in the token list")
		expires := fs.Duration("expires", 0, "lifetime, e.g. 720h (default: no expiry)")
		if err := fs.Parse(args[2:]); err != nil {
			return err
		}
		token, err := app.CreateToken(ctx, cfg, *user, strings.Split(*scopes, ","), *name, *expires)
		if err != nil {
			return err
		}
		fmt.Println(token)
		return nil
	case "version":
		fmt.Println("sdods", app.Version)
		return nil
	default:
		fmt.Fprint(os.Stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

func migrate(ctx context.Context, cfg app.Config, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("migrate needs up, down [N] or version")
	}
	if cfg.CreateDB {
		if err := store.EnsureDatabase(ctx, cfg.DatabaseURL); err != nil {
			return err
		}
	}
	switch args[0] {
	case "up":
		return store.MigrateUp(cfg.DatabaseURL)
	case "down":
		steps := 0
		if len(args) > 1 {
			n, err := strconv.Atoi(args[1])
			if err != nil || n < 1 {
				return fmt.Errorf("migrate down: N must be a positive number")
			}
			steps = n
		}
		return store.MigrateDown(cfg.DatabaseURL, steps)
	case "version":
		v, err := store.MigrationVersion(cfg.DatabaseURL)
		if err != nil {
			return err
		}
		fmt.Printf("version %d dirty %t\n", v.Version, v.Dirty)
		return nil
	}
	return fmt.Errorf("unknown migrate command %q", args[0])
}
