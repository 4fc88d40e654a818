package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// benchProgram is the program that holds the benchmarks (cmd/toolgate-bench): toolgate, the
// served binary, does not link them, nor the Bleve peer and the plotting library they use.
const benchProgram = "toolgate-bench"

// exitError is the exit code of a program toolgate ran, which has printed its own error.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// runBench runs toolgate-bench with args: the one beside this binary, else the one on PATH.
// Its own help says where toolgate-bench is, whose help lists the benchmarks.
func runBench(ctx context.Context, env *cliEnv, args []string) error {
	path, err := benchPath()
	if len(args) > 0 && isHelp(args[0]) {
		writeHelp(env.stdout, "bench", nil)
		if err != nil {
			fmt.Fprintf(env.stdout, "\n%v\n", err)
			return nil
		}
		fmt.Fprintf(env.stdout, "\n%s --help:\n\n", path)
		args = args[:1]
	} else if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, env.stdout, env.stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return &exitError{code: ee.ExitCode()}
	}
	return err
}

// benchPath finds toolgate-bench beside the running binary or on PATH.
func benchPath() (string, error) {
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), benchProgram)
		if st, err := os.Stat(beside); err == nil && !st.IsDir() {
			return beside, nil
		}
	}
	if path, err := exec.LookPath(benchProgram); err == nil {
		return path, nil
	}
	return "", fmt.Errorf("the benchmarks are the program %s, found neither beside toolgate nor on PATH: build it with `make build` or `go build -o bin/%s ./cmd/%s` (docs/benchmarks.md)", benchProgram, benchProgram, benchProgram)
}
