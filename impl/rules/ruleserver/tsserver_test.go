package ruleserver_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sdods/sdods/impl/rules/ruleserver"
)

// With SDODS_RULESERVER=typescript, startServer runs the TypeScript runtime's embeddable rule
// server (runtimes/ts/packages/rule-server, createRuleServer behind its small command) instead of
// ruleserver.Run, so that the black-box HTTP tests of this package certify both servers
// (make test-typescript runs them). It reads the same rules directory: YAML and JSON sources
// and bundles (YAML by spec/v1/ruleset.md §7; TestYAMLReadersAgree compares the two readers).
func typeScriptServer() bool { return os.Getenv("SDODS_RULESERVER") == "typescript" }

// typeScriptCLI is the command of the TypeScript rule server (sdods-rule-server), built.
func typeScriptCLI() (string, error) {
	cli, err := filepath.Abs(filepath.Join("..", "..", "..", "runtimes", "ts", "packages", "rule-server", "dist", "cli.js"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(cli); err != nil {
		return "", fmt.Errorf("build the TypeScript runtime first (make build-typescript): %w", err)
	}
	return cli, nil
}

// writeTypeScriptCommand writes, at path, an executable that runs the TypeScript rule server's
// command with its arguments: the tests that run the Go command as a process (flags,
// environment, log lines, signals, drain) run it in its place. The command takes the Go
// command's flags and environment and logs the same JSON lines.
func writeTypeScriptCommand(path string) error {
	cli, err := typeScriptCLI()
	if err != nil {
		return err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte("#!/bin/sh\nexec "+strconv.Quote(node)+" "+strconv.Quote(cli)+" \"$@\"\n"), 0o755)
}

func startTypeScriptServer(t testing.TB, c ruleserver.Config) *server {
	t.Helper()
	cli, err := typeScriptCLI()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", cli)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "RULES_DIR=" + c.RulesDir, "RULE_SERVER_ADDR=127.0.0.1:0"}
	if c.Token != "" {
		cmd.Env = append(cmd.Env, "RULE_SERVER_TOKEN="+c.Token)
	} else {
		cmd.Env = append(cmd.Env, "RULE_SERVER_ALLOW_OPEN=1")
	}
	cmd.Env = append(cmd.Env, "RULE_SERVER_POLL_INTERVAL="+c.PollInterval.String())
	if c.MaxBody > 0 {
		cmd.Env = append(cmd.Env, "RULE_SERVER_MAX_BODY="+strconv.FormatInt(c.MaxBody, 10))
	}
	logs := &syncBuffer{}
	cmd.Stderr = logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("the TypeScript rule server did not drain and exit on SIGTERM")
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	var url string
	select {
	case l := <-lines:
		url = strings.TrimPrefix(l, "listening ")
	case <-exited:
		t.Fatalf("the TypeScript rule server exited: %s", logs.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("the TypeScript rule server did not start: %s", logs.String())
	}
	return &server{URL: url, Addr: strings.TrimPrefix(url, "http://"), Logs: logs, stop: func() {}, done: make(chan error, 1)}
}
