package main

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/version"
)

// commandPaths lists every command and subcommand of the command table.
func commandPaths() []string {
	var paths []string
	var walk func(prefix string, c *cliCommand)
	walk = func(prefix string, c *cliCommand) {
		paths = append(paths, prefix)
		for _, name := range subNames(c) {
			walk(prefix+" "+name, c.subs[name])
		}
	}
	for name, c := range commands {
		walk(name, c)
	}
	return paths
}

// Every command and subcommand answers -h and --help with its description, usage and
// flags, exit 0, without touching the database (which is unreachable here).
func TestEveryCommandAnswersHelp(t *testing.T) {
	t.Parallel()
	// no database to reach (a command that tried would fail), and a setting that does not
	// parse: help needs neither
	noDB := map[string]string{"DATABASE_URL": "postgres://postgres@127.0.0.1:1/none?connect_timeout=1", "TOOLGATE_WORKERS": "many"}
	for _, path := range commandPaths() {
		c := lookup(path)
		if c == nil || c.usage == "" || c.about == "" || !strings.HasPrefix(c.usage, "toolgate "+path) {
			t.Errorf("%s: the table lacks its usage or description: %+v", path, c)
			continue
		}
		for _, help := range []string{"--help", "-h"} {
			args := append(strings.Fields(path), help)
			code, stdout, stderr := runCLI(t, noDB, args...)
			if code != 0 || stderr != "" {
				t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
				continue
			}
			if !strings.HasPrefix(stdout, "usage: toolgate "+path) || !strings.Contains(stdout, c.about) {
				t.Errorf("%v: stdout lacks the usage or the description:\n%s", args, stdout)
			}
			if c.run != nil && c.subs == nil && strings.Contains(c.usage, "--") && !strings.Contains(stdout, "flags:") {
				t.Errorf("%v: stdout lists no flags:\n%s", args, stdout)
			}
			for name := range c.subs {
				if !strings.Contains(stdout, "  "+name+" ") {
					t.Errorf("%v: stdout does not list the subcommand %s:\n%s", args, name, stdout)
				}
			}
		}
	}
}

// A command's flags are listed in its help, and a flag mistake points at --help.
func TestHelpListsFlags(t *testing.T) {
	t.Parallel()
	code, stdout, _ := runCLI(t, nil, "keys", "create", "--help")
	for _, flag := range []string{"-name", "-scope", "-sources", "-rate", "-plan"} {
		if code != 0 || !strings.Contains(stdout, flag) {
			t.Fatalf("keys create --help: exit %d, no %s:\n%s", code, flag, stdout)
		}
	}
	code, stdout, stderr := runCLI(t, nil, "keys", "create", "--nope")
	if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "see toolgate keys create --help") {
		t.Fatalf("keys create --nope: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, args := range [][]string{{"keys"}, {"keys", "frobnicate"}, {"migrate", "sideways"}} {
		if code, _, stderr := runCLI(t, nil, args...); code != 2 || !strings.Contains(stderr, "--help") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"version", "--version"} {
		code, stdout, stderr := runCLI(t, nil, arg)
		if code != 0 || stdout != "toolgate "+version.Get().String()+"\n" || stderr != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", arg, code, stdout, stderr)
		}
	}
}
