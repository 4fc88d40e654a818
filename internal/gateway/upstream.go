package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
)

// Connect opens an MCP client session to a source server of kind mcp_stdio or mcp_http,
// through the same client the sync uses (internal/mcpclient): credentials (headers,
// environment) come only from the source's stored config, and a stdio server sees none of
// toolgate's own environment. The pool reconnects a broken session itself, so the HTTP
// transport does not retry on its own. A stdio command that opts.Commands does not allow is
// never started (*mcpclient.CommandNotAllowedError); every answer of the server is bounded
// by opts.Limits.MaxResponseBytes.
func Connect(ctx context.Context, kind db.SourceKind, config json.RawMessage, opts mcpclient.Options) (*mcpclient.Session, error) {
	cfg, err := mcpclient.ParseConfig(config)
	if err != nil {
		return nil, err
	}
	opts.NoRetries = true
	return mcpclient.Connect(ctx, kind, cfg, opts)
}

// DefaultConnectTimeout bounds connecting to a source within a proxied call: long enough
// for a stdio server started cold by `npx -y` or `uvx` (a package download) on a loaded
// machine, which took more than 10 s.
const DefaultConnectTimeout = 20 * time.Second

// upstreamPool keeps one client session per source, reused by every call, reconnected after
// a failure, with at most `limit` calls in flight per source.
type upstreamPool struct {
	connect func(ctx context.Context, source string, kind db.SourceKind, config json.RawMessage) (*mcpclient.Session, error)
	// connectTimeout bounds a connection attempt when the call's own deadline is further
	// away (Options.ConnectTimeout).
	connectTimeout time.Duration
	limit          int

	mu    sync.Mutex
	conns map[string]*upstream
}

type upstream struct {
	sem chan struct{}

	mu      sync.Mutex
	kind    db.SourceKind
	config  json.RawMessage
	session *mcpclient.Session
}

func newUpstreamPool(limit int, opts mcpclient.Options, connectTimeout time.Duration) *upstreamPool {
	connect := func(ctx context.Context, source string, kind db.SourceKind, config json.RawMessage) (*mcpclient.Session, error) {
		opts := opts
		opts.Source = source // whose OAuth token to send, for an OAuth source
		return Connect(ctx, kind, config, opts)
	}
	return &upstreamPool{connect: connect, connectTimeout: connectTimeout, limit: limit, conns: map[string]*upstream{}}
}

// call runs tools/call of the tool `name` (as the source server knows it) on a source. ctx
// bounds the whole call: waiting for a slot, connecting and the call itself.
func (p *upstreamPool) call(ctx context.Context, source string, kind db.SourceKind, config json.RawMessage, name string, args map[string]any) (*mcp.CallToolResult, error) {
	// Every error below is scrubbed of the source's credentials: the transport's errors
	// quote the URL it called.
	cfg, _ := mcpclient.ParseConfig(config)
	p.mu.Lock()
	u := p.conns[source]
	if u == nil {
		u = &upstream{sem: make(chan struct{}, p.limit)}
		p.conns[source] = u
	}
	p.mu.Unlock()

	select {
	case u.sem <- struct{}{}:
		defer func() { <-u.sem }()
	case <-ctx.Done():
		return nil, &UpstreamError{Source: source, Err: fmt.Errorf("waiting for a free connection slot: %w", ctx.Err())}
	}
	for attempt := 0; ; attempt++ {
		session, err := u.get(ctx, p.connect, p.connectTimeout, source, kind, config)
		if err != nil {
			return nil, &UpstreamError{Source: source, Unreachable: true, Err: cfg.Scrub(err)}
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err == nil {
			return res, nil
		}
		// A JSON-RPC error is the server answering, an answer too large was refused without
		// reading the rest, and a call that ran out of time or was cancelled says nothing
		// about the connection: the session stays for other calls. Anything else may be a
		// broken connection, so the next call starts a fresh session.
		var (
			rpcErr   *jsonrpc.Error
			tooLarge *mcpclient.ResponseTooLargeError
		)
		if errors.As(err, &rpcErr) || errors.As(err, &tooLarge) || ctx.Err() != nil {
			return nil, &UpstreamError{Source: source, Err: cfg.Scrub(err)}
		}
		u.drop(session)
		// The call certainly did not run when the session was already closed or the
		// server no longer knows it (it restarted): retrying once on a new session
		// cannot run the tool twice.
		if attempt == 0 && ctx.Err() == nil && (errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing)) {
			continue
		}
		return nil, &UpstreamError{Source: source, Err: cfg.Scrub(err)}
	}
}

// get returns the source's session, connecting (or reconnecting after a config change) first.
func (u *upstream) get(ctx context.Context, connect func(context.Context, string, db.SourceKind, json.RawMessage) (*mcpclient.Session, error),
	connectTimeout time.Duration, source string, kind db.SourceKind, config json.RawMessage) (*mcpclient.Session, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.session != nil && u.kind == kind && bytes.Equal(u.config, config) {
		return u.session, nil
	}
	if u.session != nil {
		_ = u.session.Close()
		u.session = nil
	}
	// Connect may block on a dead server until ctx ends; the lock is held meanwhile so a
	// burst of calls to a down source makes one connection attempt at a time.
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	session, err := connect(ctx, source, kind, config)
	if err != nil {
		return nil, err
	}
	u.session, u.kind, u.config = session, kind, bytes.Clone(config)
	return session, nil
}

func (u *upstream) drop(s *mcpclient.Session) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.session == s {
		u.session = nil
	}
	go s.Close()
}

// close ends every upstream session (and stops stdio server processes).
func (p *upstreamPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, u := range p.conns {
		u.mu.Lock()
		if u.session != nil {
			_ = u.session.Close()
			u.session = nil
		}
		u.mu.Unlock()
		delete(p.conns, name)
	}
}
