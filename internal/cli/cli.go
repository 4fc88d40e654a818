// Package cli is the flag plumbing toolgate and toolgate-bench share: a flag set that
// reports mistakes instead of exiting, help printed only when asked for, and one way to turn
// a command's error into its message and exit code.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// UsageError is a command line mistake: Exit prints it on one line with a pointer to the
// command's --help and exits 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef is a UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// NewFlags makes the flag set of command name ("toolgate keys create") that reports its
// errors instead of exiting and prints nothing of its own: help (-h, --help) calls help with
// the flag set, and a mistake comes back from Parse.
func NewFlags(name string, help func(fs *flag.FlagSet)) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// Exit prints a flag mistake once, with a pointer to --help; the flag package would
	// print it and the whole usage as well.
	fs.SetOutput(io.Discard)
	fs.Usage = func() { help(fs) }
	return fs
}

// Parse parses args and turns a flag mistake into a UsageError; -h and --help print the
// command's help and return flag.ErrHelp, which exits 0.
func Parse(fs *flag.FlagSet, args []string) error {
	help := fs.Usage
	// The flag package calls Usage on every mistake too; only a request for help prints it.
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = help
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help()
			return err
		}
		return &UsageError{Msg: err.Error()}
	}
	return nil
}

// Exit writes err of the command named path ("toolgate bench peer") to w, on one line, and
// returns the process's exit code: 0 for no error or a request for help, 2 for a
// UsageError (the line points at path's --help), 1 for any other error.
func Exit(w io.Writer, path string, err error) int {
	var ue *UsageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(w, "%s: %v (see %s --help)\n", path, err, path)
		return 2
	default:
		fmt.Fprintf(w, "%s: %v\n", path, err)
		return 1
	}
}
