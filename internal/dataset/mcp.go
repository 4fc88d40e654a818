package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/mcpclient"
)

// MCPServer is one entry of a servers file (testdata/mcp-multidomain/servers.json): an MCP
// server run over stdio, whose tools are cataloged under Name the way a sync namespaces a
// source's tools (catalog.ToolName: "github" + "create_issue" → "github__create_issue").
type MCPServer struct {
	// Name is the source name, the namespace of the server's tools (catalog.ValidSourceName).
	Name string `json:"name"`
	// Package is the npm package and its exact version, "name@1.2.3", as the install script
	// installs it; the listing itself only runs Command.
	Package string `json:"package"`
	// Domain is a free label for documentation ("files", "chat", ...).
	Domain string `json:"domain,omitempty"`
	// Language is the language of the server's tool descriptions ("en", "zh", "fr"), a
	// label for documentation like Domain.
	Language string            `json:"language,omitempty"`
	Command  string            `json:"command"`
	Args     []string          `json:"args,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
}

// config is the server as an mcp_stdio source configuration.
func (s MCPServer) config() mcpclient.Config {
	return mcpclient.Config{Command: s.Command, Args: s.Args, Env: s.Env}
}

// ServersFileError lists every problem of a servers file; a file with any problem is
// rejected as a whole, before any server is started.
type ServersFileError struct {
	File     string
	Problems []string
}

func (e *ServersFileError) Error() string {
	return fmt.Sprintf("%s: %s", e.File, strings.Join(e.Problems, "; "))
}

// exactVersionRE is an npm package with an exact semver version: "@scope/name@1.2.3" or
// "name@1.2.3-rc.1". Ranges, tags and "latest" would make a rebuild list other tools.
var exactVersionRE = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*@[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

// ReadServers reads and checks a servers file: a JSON array of MCPServer.
func ReadServers(path string) ([]MCPServer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	servers, err := ParseServers(bytes.NewReader(data))
	var fe *ServersFileError
	if errors.As(err, &fe) {
		fe.File = path
	}
	return servers, err
}

// ParseServers reads a servers file and checks every entry: a valid and unique source name,
// an npm package with an exact version, a command, and a configuration an mcp_stdio source
// may have.
func ParseServers(r io.Reader) ([]MCPServer, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var servers []MCPServer
	if err := dec.Decode(&servers); err != nil {
		return nil, &ServersFileError{File: "servers file", Problems: []string{"want a JSON array of servers: " + err.Error()}}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &ServersFileError{File: "servers file", Problems: []string{"trailing data after the JSON array"}}
	}
	var problems []string
	if len(servers) == 0 {
		problems = append(problems, "no servers")
	}
	seen := map[string]int{}
	for i, s := range servers {
		bad := func(format string, args ...any) {
			label := fmt.Sprintf("server %d", i+1)
			if s.Name != "" {
				label += fmt.Sprintf(" (%s)", s.Name)
			}
			problems = append(problems, label+": "+fmt.Sprintf(format, args...))
		}
		switch {
		case !catalog.ValidSourceName(s.Name):
			bad("name %q: want 1-32 lowercase letters, digits and '-', starting with a letter or digit", s.Name)
		case seen[s.Name] != 0:
			bad("duplicate name (first is server %d)", seen[s.Name])
		default:
			seen[s.Name] = i + 1
		}
		if !exactVersionRE.MatchString(s.Package) {
			bad("package %q: want an npm package with an exact version, like name@1.2.3", s.Package)
		}
		for _, name := range slices.Sorted(maps.Keys(s.Env)) {
			if mcpclient.EnvChangesWhatRuns(name) {
				bad("env %s changes which program or code the server runs", name)
			}
		}
		if err := s.config().Validate(mcpclient.KindStdio); err != nil {
			bad("%v", err)
		} else if err := serverPolicy(s).Check(s.config()); err != nil {
			bad("%v", err)
		}
	}
	if len(problems) > 0 {
		return nil, &ServersFileError{File: "servers file", Problems: problems}
	}
	return servers, nil
}

// serverPolicy allows exactly the command line of s with the environment it sets: the
// servers file is the operator's own choice of programs, like TOOLGATE_STDIO_COMMANDS, and
// nothing else may start.
func serverPolicy(s MCPServer) mcpclient.CommandPolicy {
	return mcpclient.NewCommandPolicyOf(mcpclient.AllowedCommand{
		Words: append([]string{s.Command}, s.Args...), Env: slices.Sorted(maps.Keys(s.Env))})
}

// ServerListing is what one server listed: its tools, named, checked and sorted, and the
// tools left out with the reason, or the error that kept it from listing at all.
type ServerListing struct {
	Server  MCPServer
	Tools   []catalog.Tool
	Skipped []catalog.Problem // Line is 0: the tools come from a server, not a file
	Err     error
}

// ServerError is a server that could not be started or did not list its tools.
type ServerError struct {
	Server string
	Err    error
}

func (e *ServerError) Error() string { return fmt.Sprintf("server %s: %v", e.Server, e.Err) }
func (e *ServerError) Unwrap() error { return e.Err }

// ListServers starts each server over stdio with toolgate's MCP client, lists all its tools
// (every page) and closes it, at most parallel servers at a time and each within timeout.
// The listings are in the order of servers; a failed server has Err set (a *ServerError).
func ListServers(ctx context.Context, servers []MCPServer, timeout time.Duration, parallel int) []ServerListing {
	out := make([]ServerListing, len(servers))
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = listServer(ctx, s, timeout)
		}()
	}
	wg.Wait()
	return out
}

func listServer(ctx context.Context, s MCPServer, timeout time.Duration) ServerListing {
	l := ServerListing{Server: s}
	tools, err := mcpclient.List(ctx, mcpclient.KindStdio, s.config(), timeout, mcpclient.Options{Commands: serverPolicy(s)})
	if err != nil {
		l.Err = &ServerError{Server: s.Name, Err: err}
		return l
	}
	if len(tools) == 0 {
		l.Err = &ServerError{Server: s.Name, Err: errors.New("listed no tools")}
		return l
	}
	l.Tools, l.Skipped = namespaceTools(s.Name, tools)
	return l
}

// namespaceTools names a server's tools as a sync of a source called source would, checks
// them as a catalog import would, and sorts them by name. Input schemas are re-encoded
// canonically (sorted keys) so that the same server always writes the same bytes. A tool
// that fails the checks, or whose name repeats, is skipped with the reason.
func namespaceTools(source string, tools []catalog.Tool) ([]catalog.Tool, []catalog.Problem) {
	var (
		kept    []catalog.Tool
		skipped []catalog.Problem
		seen    = map[string]bool{}
	)
	for _, t := range tools {
		original := t.Name
		t.Name = catalog.ToolName(source, original)
		t.OutputSchema, t.Annotations = nil, nil
		if err := t.Validate(); err != nil {
			skipped = append(skipped, catalog.Problem{Name: original, Reason: err.Error()})
			continue
		}
		canon, err := catalog.Canonical(t.InputSchema)
		if err != nil {
			skipped = append(skipped, catalog.Problem{Name: original, Reason: "input schema: " + err.Error()})
			continue
		}
		t.InputSchema = canon
		if seen[t.Name] {
			skipped = append(skipped, catalog.Problem{Name: original, Reason: "listed twice"})
			continue
		}
		seen[t.Name] = true
		kept = append(kept, t)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Name < kept[j].Name })
	return kept, skipped
}

// MergeListings is the catalog of every listing that succeeded, sorted by name. Names
// cannot collide across servers: server names are unique and each one is its tools'
// namespace.
func MergeListings(listings []ServerListing) []catalog.Tool {
	var all []catalog.Tool
	for _, l := range listings {
		if l.Err == nil {
			all = append(all, l.Tools...)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}
