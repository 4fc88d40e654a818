package api

import (
	"log/slog"
	"net/http"
	"time"
)

// Default limits of a connection (ServerLimits), documented in docs/auth.md#limits.
const (
	// DefaultReadHeaderTimeout bounds the request line and headers: a real client sends
	// them in one packet; a slowloris client trickles them to hold a connection.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds the whole request, its body included: a 64 MiB catalog at
	// about 1 MB/s, and any JSON body many times over.
	DefaultReadTimeout = 60 * time.Second
	// DefaultIdleTimeout bounds a kept-alive connection between two requests.
	DefaultIdleTimeout = 120 * time.Second
	// DefaultMaxHeaderBytes bounds the request line and headers: an API key and the usual
	// headers take well under 1 KiB; net/http's default is 1 MiB.
	DefaultMaxHeaderBytes = 64 << 10
)

// ServerLimits bound how long and how much a connection may take to send its requests; a
// zero field takes its default.
type ServerLimits struct {
	ReadHeaderTimeout time.Duration // TOOLGATE_HTTP_READ_HEADER_TIMEOUT
	ReadTimeout       time.Duration // TOOLGATE_HTTP_READ_TIMEOUT: the whole request, body included
	IdleTimeout       time.Duration // TOOLGATE_HTTP_IDLE_TIMEOUT
	MaxHeaderBytes    int           // TOOLGATE_HTTP_MAX_HEADER_BYTES
}

func (l ServerLimits) withDefaults() ServerLimits {
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = DefaultReadTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	return l
}

// NewHTTPServer is the http.Server that serves h with limits: the one place the served
// server is built, so that what a test serves is what `toolgate serve` serves.
//
// It has no WriteTimeout on purpose: a server-wide write deadline would cut the MCP
// gateway's GET /mcp event stream, which lives as long as its session; the gateway bounds
// its own writes. ReadTimeout covers the body: net/http lifts the read deadline once the
// body has been read, so a long handler or stream is not cut by it.
func NewHTTPServer(h http.Handler, limits ServerLimits, log *slog.Logger) *http.Server {
	l := limits.withDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		// net/http's own complaints (a malformed request, a panic it recovered) in the
		// structured log
		ErrorLog: slog.NewLogLogger(log.With("component", "http").Handler(), slog.LevelWarn),
	}
}
