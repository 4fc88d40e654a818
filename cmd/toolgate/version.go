package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/toolgate/toolgate/internal/cli"
)

// runVersion prints the binary's version on one line.
func runVersion(_ context.Context, env *cliEnv, args []string) error {
	args, err := parseArgs("version", env, args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return &cli.UsageError{Msg: "version takes no arguments"}
	}
	fmt.Fprintf(env.stdout, "toolgate %s\n", buildVersion())
	return nil
}

// buildVersion is the version the binary reports, on the command line and as the MCP
// gateway's serverInfo.version: the module version with the commit it was built from.
func buildVersion() string {
	info, _ := debug.ReadBuildInfo()
	return versionOf(info)
}

// versionOf makes the version string of a build: the module version ("devel" for a build
// that has none), then "+" and the first 12 digits of the commit unless the version
// already names it, then "dirty" when the working tree had changes. Go stamps a build in
// a checkout with a pseudo-version that already carries both; a build without VCS
// information (go test, -buildvcs=false) is plain "devel".
func versionOf(info *debug.BuildInfo) string {
	if info == nil {
		return "devel"
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && !strings.Contains(v, rev) {
		v += "+" + rev
	}
	if modified && !strings.HasSuffix(v, "dirty") {
		if strings.Contains(v, "+") {
			v += ".dirty"
		} else {
			v += "+dirty"
		}
	}
	return v
}
