package mcpclient

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/derrors"
)

// CommandPolicy is the operator's allowlist of the programs mcp_stdio sources may start
// (TOOLGATE_STDIO_COMMANDS), and of the environment variables a source may set for each.
// Whoever may create or change a source (an admin key) would otherwise run any program on
// the host, as toolgate's user. The zero value allows none.
type CommandPolicy struct {
	entries []AllowedCommand
}

// AllowedCommand is one entry of a CommandPolicy.
type AllowedCommand struct {
	// Words are the command and, when there are more, exactly its arguments; a command
	// alone allows any arguments.
	Words []string
	// Env are the names of the environment variables a source running this command may
	// set, compared exactly; none when empty.
	Env []string
}

// EnvWord starts the word of a TOOLGATE_STDIO_COMMANDS entry that lists the environment
// variables a source may set, separated by ':' (env=API_KEY:LOG_LEVEL).
const EnvWord = "env="

// NewCommandPolicy allows each entry, written as TOOLGATE_STDIO_COMMANDS writes it: a
// command alone ({"mcp-server-git"}) allows it with any arguments; a command with
// arguments ({"npx", "-y", "@modelcontextprotocol/server-everything"}) allows exactly that
// argument list; a word "env=A:B" is no argument but the variables a source may set.
// Commands are compared as written, with no path lookup: "npx" and "/usr/bin/npx" are
// different entries.
func NewCommandPolicy(entries [][]string) CommandPolicy {
	out := make([]AllowedCommand, 0, len(entries))
	for _, e := range entries {
		var c AllowedCommand
		for _, w := range e {
			if names, ok := strings.CutPrefix(w, EnvWord); ok {
				for n := range strings.SplitSeq(names, ":") {
					if n != "" {
						c.Env = append(c.Env, n)
					}
				}
				continue
			}
			c.Words = append(c.Words, w)
		}
		out = append(out, c)
	}
	return NewCommandPolicyOf(out...)
}

// NewCommandPolicyOf allows each entry as given (no word is read as "env=").
func NewCommandPolicyOf(entries ...AllowedCommand) CommandPolicy {
	p := CommandPolicy{}
	for _, e := range entries {
		if len(e.Words) > 0 && e.Words[0] != "" {
			p.entries = append(p.entries, AllowedCommand{Words: slices.Clone(e.Words), Env: slices.Clone(e.Env)})
		}
	}
	return p
}

// String lists the entries as TOOLGATE_STDIO_COMMANDS writes them.
func (p CommandPolicy) String() string {
	out := make([]string, len(p.entries))
	for i, e := range p.entries {
		out[i] = strings.Join(e.Words, " ")
		if len(e.Env) > 0 {
			out[i] += " " + EnvWord + strings.Join(e.Env, ":")
		}
	}
	return strings.Join(out, ",")
}

// runsCode are names of environment variables that change which program or code a command
// runs (a loader preload, an interpreter's options or module path, the PATH that finds the
// programs it starts). An operator may not allow them either (EnvChangesWhatRuns): the
// allowlist of commands would mean nothing. Names are compared in upper case; an entry of
// runsCodePrefixes is a prefix.
var (
	runsCode = []string{"PATH", "HOME", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS",
		"NODE_OPTIONS", "NODE_PATH", "CLASSPATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
		"PREFIX", "LUA_INIT", "DOTNET_STARTUP_HOOKS", "ERL_FLAGS", "GCONV_PATH"}
	runsCodePrefixes = []string{"LD_", "DYLD_", "PYTHON", "PERL", "RUBY", "BASH_FUNC_", "NPM_CONFIG_", "UV_", "PIP_", "GIT_"}
)

// EnvChangesWhatRuns reports whether the environment variable name is one of the well-known
// ones that change which program or code a command runs. Sources are held to the operator's
// allowlist whatever the name; this is the operator's own guard, for the names they list
// (TOOLGATE_STDIO_COMMANDS, a dataset's servers file).
func EnvChangesWhatRuns(name string) bool {
	name = strings.ToUpper(name)
	return slices.Contains(runsCode, name) ||
		slices.ContainsFunc(runsCodePrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}

// ValidEnvName reports whether name is an environment variable name a source may use:
// letters, digits and _, not starting with a digit.
func ValidEnvName(name string) bool { return envNameRE.MatchString(name) }

// CommandNotAllowedError is an mcp_stdio source the policy does not allow: its command and
// arguments are in no entry, or its environment sets a variable that no entry allowing
// them lists.
type CommandNotAllowedError struct {
	Command string
	Args    []string
	Env     string // the refused environment variable, or ""
	Policy  string // the allowlist, as TOOLGATE_STDIO_COMMANDS writes it
}

func (e *CommandNotAllowedError) Error() string {
	if e.Env != "" {
		return fmt.Sprintf("environment variable %s may not be set for command %q with arguments %q: TOOLGATE_STDIO_COMMANDS does not list it for that command (allowed: %s)",
			e.Env, e.Command, e.Args, e.Policy)
	}
	allowed := "none is allowed (TOOLGATE_STDIO_COMMANDS is empty)"
	if e.Policy != "" {
		allowed = "allowed: " + e.Policy
	}
	return fmt.Sprintf("command %q with arguments %q is not in TOOLGATE_STDIO_COMMANDS; %s", e.Command, e.Args, allowed)
}

func (e *CommandNotAllowedError) Is(target error) bool { return target == derrors.Forbidden }
func (e *CommandNotAllowedError) Code() string         { return "command_not_allowed" }

// Check fails with a *CommandNotAllowedError unless an entry of p allows the command and
// arguments of an mcp_stdio source's cfg together with every environment variable it sets.
// The environment is an allowlist because a deny-list cannot be complete: besides loader
// and interpreter options, variables such as PREFIX, HTTPS_PROXY, NODE_EXTRA_CA_CERTS or
// GCONV_PATH change where an allowed command fetches code from, whom it trusts, or what it
// loads, and every runtime adds its own.
func (p CommandPolicy) Check(cfg Config) error {
	refusedEnv := ""
	for _, e := range p.entries {
		if e.Words[0] != cfg.Command || (len(e.Words) > 1 && !slices.Equal(e.Words[1:], cfg.Args)) {
			continue
		}
		missing := ""
		for name := range cfg.Env {
			if !slices.Contains(e.Env, name) && (missing == "" || name < missing) {
				missing = name // the smallest, so that the message is the same every time
			}
		}
		if missing == "" {
			return nil
		}
		refusedEnv = missing
	}
	return &CommandNotAllowedError{Command: cfg.Command, Args: cfg.Args, Env: refusedEnv, Policy: p.String()}
}
