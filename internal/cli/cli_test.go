package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
)

// A command built on NewFlags and Parse answers a bad flag with one line pointing at its
// help and exit code 2, help with its help and 0, and a failure of its own with one line
// and 1.
func TestParseAndExit(t *testing.T) {
	command := func(stdout *bytes.Buffer, args ...string) error {
		fs := NewFlags("toolgate demo", func(fs *flag.FlagSet) { fmt.Fprintf(stdout, "usage: %s [--n N]\n", fs.Name()) })
		n := fs.Int("n", 1, "a number")
		if err := Parse(fs, args); err != nil {
			return err
		}
		if *n < 0 {
			return Usagef("--n must not be negative, got %d", *n)
		}
		if *n == 0 {
			return errors.New("nothing to do")
		}
		return nil
	}
	for _, c := range []struct {
		args       []string
		code       int
		stdout     string
		stderrLine string
	}{
		{[]string{"--n", "2"}, 0, "", ""},
		{[]string{"--help"}, 0, "usage: toolgate demo [--n N]\n", ""},
		{[]string{"-h"}, 0, "usage: toolgate demo [--n N]\n", ""},
		{[]string{"--nope"}, 2, "", "toolgate demo: flag provided but not defined: -nope (see toolgate demo --help)"},
		{[]string{"--n", "x"}, 2, "", `toolgate demo: invalid value "x" for flag -n: parse error (see toolgate demo --help)`},
		{[]string{"--n", "-1"}, 2, "", "toolgate demo: --n must not be negative, got -1 (see toolgate demo --help)"},
		{[]string{"--n", "0"}, 1, "", "toolgate demo: nothing to do"},
	} {
		var stdout, stderr bytes.Buffer
		code := Exit(&stderr, "toolgate demo", command(&stdout, c.args...))
		if code != c.code || stdout.String() != c.stdout {
			t.Errorf("%q: exit %d, stdout %q; want %d, %q", c.args, code, stdout.String(), c.code, c.stdout)
		}
		want := ""
		if c.stderrLine != "" {
			want = c.stderrLine + "\n"
		}
		if stderr.String() != want || strings.Count(stderr.String(), "\n") > 1 {
			t.Errorf("%q: stderr %q, want %q", c.args, stderr.String(), want)
		}
	}
}
