package mcpclient

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/derrors"
)

// CommandPolicy is the operator's allowlist of the programs mcp_stdio sources may start
// (TOOLGATE_STDIO_COMMANDS). Whoever may create or change a source (an admin key) would
// otherwise run any program on the host, as toolgate's user. The zero value allows none.
type CommandPolicy struct {
	entries [][]string
}

// NewCommandPolicy allows each entry: a command alone ({"mcp-server-git"}) allows it with
// any arguments; a command with arguments ({"npx", "-y", "@modelcontextprotocol/server-
// everything"}) allows exactly that argument list. Commands are compared as written, with
// no path lookup: "npx" and "/usr/bin/npx" are different entries.
func NewCommandPolicy(entries [][]string) CommandPolicy {
	p := CommandPolicy{}
	for _, e := range entries {
		if len(e) > 0 && e[0] != "" {
			p.entries = append(p.entries, slices.Clone(e))
		}
	}
	return p
}

// String lists the entries as TOOLGATE_STDIO_COMMANDS writes them.
func (p CommandPolicy) String() string {
	out := make([]string, len(p.entries))
	for i, e := range p.entries {
		out[i] = strings.Join(e, " ")
	}
	return strings.Join(out, ",")
}

// deniedEnv are names of environment variables that change which program or code an allowed
// command runs (a loader preload, an interpreter's options or module path, a package
// registry, the PATH that finds the programs it starts): a source may not set them, or the
// allowlist would mean nothing. Names are compared in upper case; an entry ending in "_" or
// naming a family (PYTHON) is a prefix.
var (
	deniedEnv = []string{"PATH", "HOME", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS",
		"NODE_OPTIONS", "NODE_PATH", "CLASSPATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"}
	deniedEnvPrefixes = []string{"LD_", "DYLD_", "PYTHON", "PERL", "RUBY", "BASH_FUNC_", "NPM_CONFIG_", "UV_", "PIP_", "GIT_"}
)

// CommandNotAllowedError is an mcp_stdio source the policy does not allow: its command and
// arguments are in no entry, or its environment sets a variable that would change what
// runs.
type CommandNotAllowedError struct {
	Command string
	Args    []string
	Env     string // the refused environment variable, or ""
	Policy  string // the allowlist, as TOOLGATE_STDIO_COMMANDS writes it
}

func (e *CommandNotAllowedError) Error() string {
	if e.Env != "" {
		return fmt.Sprintf("environment variable %s may not be set for an mcp_stdio source: it changes which program or code runs", e.Env)
	}
	allowed := "none is allowed (TOOLGATE_STDIO_COMMANDS is empty)"
	if e.Policy != "" {
		allowed = "allowed: " + e.Policy
	}
	return fmt.Sprintf("command %q with arguments %q is not in TOOLGATE_STDIO_COMMANDS; %s", e.Command, e.Args, allowed)
}

func (e *CommandNotAllowedError) Is(target error) bool { return target == derrors.Forbidden }
func (e *CommandNotAllowedError) Code() string         { return "command_not_allowed" }

// Check fails with a *CommandNotAllowedError unless p allows the command, arguments and
// environment of an mcp_stdio source's cfg.
func (p CommandPolicy) Check(cfg Config) error {
	for name := range cfg.Env {
		if deniedEnvName(name) {
			return &CommandNotAllowedError{Command: cfg.Command, Args: cfg.Args, Env: name, Policy: p.String()}
		}
	}
	for _, e := range p.entries {
		if e[0] == cfg.Command && (len(e) == 1 || slices.Equal(e[1:], cfg.Args)) {
			return nil
		}
	}
	return &CommandNotAllowedError{Command: cfg.Command, Args: cfg.Args, Policy: p.String()}
}

func deniedEnvName(name string) bool {
	name = strings.ToUpper(name)
	return slices.Contains(deniedEnv, name) ||
		slices.ContainsFunc(deniedEnvPrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}
