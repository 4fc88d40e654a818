package main

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/version"
)

// runVersion prints the binary's version, commit and date on one line.
func runVersion(_ context.Context, env *cliEnv, args []string) error {
	args, err := parseArgs("version", env, args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return &cli.UsageError{Msg: "version takes no arguments"}
	}
	fmt.Fprintf(env.stdout, "toolgate %s\n", version.Get())
	return nil
}
