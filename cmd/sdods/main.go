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

	"github.com/sdods/sdods/impl/server/app"
	"github.com/sdods/sdods/impl/server/store"
)

const usage = `usage: sdods <command> [flags]

commands:
  serve                     run the test automation server
  migrate up|down [N]|version   apply, revert (all or N) or show database migrations
                            (ours and River's job tables; down N reverts N of ours)
  token create --user EMAIL --scopes a,b --name NAME [--expires 720h]
                            create an API token (printed once) in the server's database
  version                   print the version
  help                      print this text
Run "sdods <command> -h" for the flags of a command. The database is DATABASE_URL (or
--database-url); "make run" and "make token" find the same one as scripts/devdb.sh does.
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
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(os.Stdout, usage)
		return nil
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
		// Its own flags: the database and the token, not every flag of serve.
		tfs := flag.NewFlagSet("sdods token create", flag.ContinueOnError)
		tfs.Usage = func() {
			fmt.Fprint(tfs.Output(), "usage: sdods token create --user EMAIL --scopes a,b --name NAME [--expires DURATION]\n\n"+
				"Creates an API token for an existing user in the server's database (migrated by sdods serve) and prints it once.\n\nflags:\n")
			tfs.PrintDefaults()
		}
		dbURL := tfs.String("database-url", envOr("DATABASE_URL", store.DefaultURL), "PostgreSQL URL of the server's database (DATABASE_URL)")
		user := tfs.String("user", "", "email of the token's owner")
		scopes := tfs.String("scopes", "", "comma-separated scopes, e.g. runs:read,runs:write")
		name := tfs.String("name", "", "name shown in the token list")
		expires := tfs.Duration("expires", 0, "lifetime, e.g. 720h (default: no expiry)")
		if len(args) < 2 || args[1] != "create" {
			if len(args) >= 2 && (args[1] == "-h" || args[1] == "-help" || args[1] == "--help") {
				tfs.SetOutput(os.Stdout)
				tfs.Usage()
				return nil
			}
			tfs.Usage()
			return fmt.Errorf("token: the only subcommand is create")
		}
		if err := tfs.Parse(args[2:]); err != nil {
			return err
		}
		cfg.DatabaseURL = *dbURL
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

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
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
		fmt.Printf("version %d dirty %t river %d\n", v.Version, v.Dirty, v.River)
		return nil
	}
	return fmt.Errorf("unknown migrate command %q", args[0])
}
