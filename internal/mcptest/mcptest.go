// Package mcptest runs real MCP servers (built with the go-sdk) for tests: over Streamable
// HTTP in an httptest server, and over stdio by re-executing the test binary. The tool list
// a server serves is set by the test and can change between listings; a behaviour makes
// the server fail in a chosen way.
package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/mcpclient"
)

// Behavior is how a test server misbehaves.
type Behavior string

const (
	Normal  Behavior = ""        // serves its tools
	Crash   Behavior = "crash"   // the process exits on the second tools/list page (stdio only)
	Hang    Behavior = "hang"    // tools/list never answers
	Fail    Behavior = "fail"    // tools/list answers a JSON-RPC error
	Garbage Behavior = "garbage" // writes non-JSON to stdout instead of speaking MCP (stdio only)
	Held    Behavior = "held"    // tools/list answers once the test calls Release; till then the process outlives its stdin (stdio only)
	// FailNUL: tools/list answers a JSON-RPC error whose message holds a NUL character and
	// is FailNULLen bytes long, as a hostile server's may.
	FailNUL Behavior = "fail_nul"
	// LoopCursor: every tools/list page is empty and gives the same next cursor.
	LoopCursor Behavior = "loop_cursor"
	// EndlessCursor: every tools/list page is empty and gives a new next cursor.
	EndlessCursor Behavior = "endless_cursor"
	// EnvTools: the server lists one tool per variable of its own environment, named as
	// the variable, with no value shown (stdio only).
	EnvTools Behavior = "env_tools"
	// Raw: the server speaks MCP by hand, without the go-sdk, and lists its tools as they
	// are written, on one page: definitions the go-sdk's server refuses to serve (a schema
	// nested past its depth limit) included (stdio only; over HTTP see NewRawHTTP).
	Raw Behavior = "raw"
)

// FailNULLen is the length of the error message of FailNUL.
const FailNULLen = 20_000

const (
	envTools    = "TOOLGATE_MCPTEST_TOOLS"
	envBehavior = "TOOLGATE_MCPTEST_BEHAVIOR"
	envPageSize = "TOOLGATE_MCPTEST_PAGE_SIZE"
	envGate     = "TOOLGATE_MCPTEST_GATE"
)

// NewServer is an MCP server serving tools, pageSize per tools/list page (0: the default).
// A hanging tools/list returns when stop is closed; a held one answers then.
func NewServer(tools []catalog.Tool, b Behavior, pageSize int, stop <-chan struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1"}, &mcp.ServerOptions{PageSize: pageSize})
	SetTools(s, nil, tools)
	var lists atomic.Int32
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				n := lists.Add(1)
				switch {
				case b == Hang:
					select {
					case <-ctx.Done():
					case <-stop:
					}
					return nil, context.Canceled
				case b == Held:
					select {
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-stop:
					}
				case b == Fail:
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "backend down"}
				case b == FailNUL:
					msg := "backend\x00down "
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg + strings.Repeat("x", FailNULLen-len(msg))}
				case b == LoopCursor:
					return &mcp.ListToolsResult{Tools: []*mcp.Tool{}, NextCursor: "again"}, nil
				case b == EndlessCursor:
					return &mcp.ListToolsResult{Tools: []*mcp.Tool{}, NextCursor: fmt.Sprintf("page-%d", n)}, nil
				case b == Crash && n >= 2:
					os.Exit(3)
				}
			}
			return next(ctx, method, req)
		}
	})
	return s
}

// SetTools replaces the tools old of s with tools; connected clients get list_changed.
func SetTools(s *mcp.Server, old, tools []catalog.Tool) {
	names := make([]string, 0, len(old))
	for _, t := range old {
		names = append(names, t.Name)
	}
	if len(names) > 0 {
		s.RemoveTools(names...)
	}
	for _, t := range tools {
		mt := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema}
		if len(t.OutputSchema) > 0 {
			mt.OutputSchema = t.OutputSchema
		}
		if len(t.Annotations) > 0 {
			var a mcp.ToolAnnotations
			if err := json.Unmarshal(t.Annotations, &a); err != nil {
				panic(err)
			}
			mt.Annotations = &a
		}
		s.AddTool(mt, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
}

// HTTP serves tools over Streamable HTTP until the test ends. Change the tools with Set.
type HTTP struct {
	URL   string
	mu    sync.Mutex
	srv   *mcp.Server
	tools []catalog.Tool
}

// NewHTTP starts an HTTP test server.
func NewHTTP(t testing.TB, tools []catalog.Tool, b Behavior, pageSize int) *HTTP {
	stop := make(chan struct{})
	h := &HTTP{srv: NewServer(tools, b, pageSize, stop), tools: tools}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.srv }, nil))
	h.URL = ts.URL
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(stop) }) // runs before ts.Close: cleanups run last-in first-out
	return h
}

// Set replaces the served tools.
func (h *HTTP) Set(tools []catalog.Tool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	SetTools(h.srv, h.tools, tools)
	h.tools = tools
}

// Config is the mcp_http source config of the server.
func (h *HTTP) Config() mcpclient.Config { return mcpclient.Config{URL: h.URL} }

// Stdio is a stdio test server: every connection starts the test binary anew, which serves
// the tools written to a file. Set takes effect at the next connection, and a running server
// picks it up too and sends its client notifications/tools/list_changed.
type Stdio struct {
	file     string
	behavior Behavior
	pageSize int
	// gate is the file whose existence releases a Held server's tools/list.
	gate string
}

// NewStdio prepares a stdio test server. The test binary's TestMain must call RunIfChild.
func NewStdio(t testing.TB, tools []catalog.Tool, b Behavior, pageSize int) *Stdio {
	dir := t.TempDir()
	s := &Stdio{file: filepath.Join(dir, "tools.json"), behavior: b, pageSize: pageSize, gate: filepath.Join(dir, "released")}
	s.Set(tools)
	return s
}

// Release lets a Held server's tools/list answer, in the processes running now and in
// those started later.
func (s *Stdio) Release() {
	if err := os.WriteFile(s.gate, nil, 0o600); err != nil {
		panic(err)
	}
}

// Set replaces the served tools.
func (s *Stdio) Set(tools []catalog.Tool) {
	data, err := json.Marshal(tools)
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(s.file, data, 0o600); err != nil {
		panic(err)
	}
}

// Config is the mcp_stdio source config of the server.
func (s *Stdio) Config() mcpclient.Config {
	return mcpclient.Config{Command: os.Args[0], Env: map[string]string{
		envTools: s.file, envBehavior: string(s.behavior), envPageSize: fmt.Sprint(s.pageSize), envGate: s.gate,
	}}
}

// EnvNames are the environment variables a Stdio server's config sets.
var EnvNames = []string{envTools, envBehavior, envPageSize, envGate}

// Commands is the stdio command policy that lets Stdio servers start: the test binary, with
// any arguments and the variables of EnvNames.
func Commands() mcpclient.CommandPolicy {
	return mcpclient.NewCommandPolicyOf(mcpclient.AllowedCommand{Words: []string{os.Args[0]}, Env: EnvNames})
}

// RunIfChild serves MCP over stdio and exits when the process was started as a stdio test
// server; otherwise it returns at once. Call it first in TestMain.
func RunIfChild() {
	file := os.Getenv(envTools)
	if file == "" {
		return
	}
	b := Behavior(os.Getenv(envBehavior))
	if b == Garbage {
		fmt.Println("this is not JSON-RPC")
		fmt.Println("{garbage")
		os.Exit(0)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		os.Exit(4)
	}
	var tools []catalog.Tool
	if err := json.Unmarshal(data, &tools); err != nil {
		os.Exit(4)
	}
	if b == EnvTools {
		tools = tools[:0]
		for _, kv := range os.Environ() {
			name, _, _ := strings.Cut(kv, "=")
			tools = append(tools, catalog.Tool{Name: name, Description: "A variable of the server's environment.", InputSchema: json.RawMessage(`{"type":"object"}`)})
		}
	}
	if b == Raw {
		serveRaw(tools)
		os.Exit(0)
	}
	var pageSize int
	fmt.Sscan(os.Getenv(envPageSize), &pageSize)
	var released chan struct{}
	if b == Held {
		released = make(chan struct{})
		go func() {
			for {
				if _, err := os.Stat(os.Getenv(envGate)); err == nil {
					close(released)
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	srv := NewServer(tools, b, pageSize, released)
	go followFile(srv, file, data, tools)
	err = srv.Run(context.Background(), &mcp.StdioTransport{})
	if b == Held {
		// A server busy with a request may not notice that its client has gone: until the
		// release, only a signal ends this one (or a minute, so that a failed test leaves
		// no process behind for long).
		select {
		case <-released:
		case <-time.After(time.Minute):
		}
	}
	if err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// followFile serves the tools of file whenever its content changes, as Stdio.Set rewrites
// it: the server then sends notifications/tools/list_changed, as a real server does when
// its tools change while a client is connected.
func followFile(srv *mcp.Server, file string, data []byte, tools []catalog.Tool) {
	for range time.Tick(50 * time.Millisecond) {
		now, err := os.ReadFile(file)
		if err != nil || bytes.Equal(now, data) {
			continue
		}
		var next []catalog.Tool
		if json.Unmarshal(now, &next) != nil {
			continue // caught mid-write; the next tick reads it whole
		}
		SetTools(srv, tools, next)
		data, tools = now, next
	}
}
