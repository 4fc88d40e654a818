// Package syncwatch keeps a session open to every MCP source and queues a sync of the
// source when its server sends notifications/tools/list_changed: a Streamable HTTP session
// to an mcp_http source, a long-lived server process to an mcp_stdio source. It runs in
// the worker process beside River (it is not a job: a job must end, a session must not),
// reconnects (restarts) with backoff, and stops on shutdown.
package syncwatch

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
)

// Timings of the watcher. Rescan picks up added, changed and deleted sources; Ping detects
// a silently dead session; backoff doubles from BackoffMin to BackoffMax between failed
// connection attempts, and between sessions that ended before Stable (a stdio server that
// exits right after starting is restarted ever more slowly, not every second).
const (
	Rescan     = 30 * time.Second
	Ping       = time.Minute
	BackoffMin = time.Second
	BackoffMax = 5 * time.Minute
	Stable     = time.Minute
)

// watchedKinds are the kinds of source with a server to watch.
var watchedKinds = []string{string(db.SourceMCPHTTP), string(db.SourceMCPStdio)}

// Queue queues a sync of a source (package jobs implements it: jobs.Queue).
type Queue interface {
	// Sync queues a sync of the source; when one is already waiting or running, its id is
	// returned with duplicate set.
	Sync(ctx context.Context, sourceID int64) (jobID int64, duplicate bool, err error)
}

// Watcher watches the MCP sources of a database.
type Watcher struct {
	pool    *pgxpool.Pool
	queue   Queue
	log     *slog.Logger
	timeout time.Duration
	rescan  time.Duration
	// commands are the programs a watched mcp_stdio source may start (TOOLGATE_STDIO_COMMANDS)
	commands mcpclient.CommandPolicy
	// limits bound every answer of a watched server, each event of its standalone stream
	// included (TOOLGATE_MCP_MAX_RESPONSE_BYTES)
	limits mcpclient.Limits
	// auth gives the tokens of OAuth sources (WithAuth)
	auth mcpclient.Authorizer

	// connected holds the sources with a session open now; the tests wait on it
	// (export_test.go).
	mu        sync.Mutex
	connected map[int64]bool
}

// New makes a watcher; timeout bounds each connection attempt; commands are the programs
// its stdio sources may start and limits bound its servers' answers, as for their syncs.
func New(pool *pgxpool.Pool, queue Queue, log *slog.Logger, timeout time.Duration, commands mcpclient.CommandPolicy, limits mcpclient.Limits) *Watcher {
	return &Watcher{pool: pool, queue: queue, log: log.With("component", "syncwatch"), timeout: timeout, rescan: Rescan,
		commands: commands, limits: limits, connected: map[int64]bool{}}
}

// WithAuth makes the watcher send the access tokens of mcp_http sources configured for
// OAuth (upstreamauth.Manager); without it such a source's session is refused.
func (w *Watcher) WithAuth(a mcpclient.Authorizer) *Watcher {
	w.auth = a
	return w
}

type watch struct {
	config string
	cancel context.CancelFunc
}

// Run watches until ctx ends, then closes every session and returns.
func (w *Watcher) Run(ctx context.Context) {
	var wg sync.WaitGroup
	watches := map[int64]watch{}
	defer func() {
		for _, wt := range watches {
			wt.cancel()
		}
		wg.Wait()
	}()
	tick := time.NewTicker(w.rescan)
	defer tick.Stop()
	for {
		srcs, err := db.New(w.pool).ListSourcesOfKinds(ctx, watchedKinds)
		if err != nil && ctx.Err() == nil {
			w.log.Warn("list sources", "err", err)
		}
		if err == nil {
			seen := map[int64]bool{}
			for _, src := range srcs {
				seen[src.ID] = true
				if old, ok := watches[src.ID]; ok && old.config == string(src.Config) {
					continue
				} else if ok {
					old.cancel()
				}
				sctx, cancel := context.WithCancel(ctx)
				watches[src.ID] = watch{config: string(src.Config), cancel: cancel}
				wg.Go(func() { w.watch(sctx, src) })
			}
			for id, wt := range watches {
				if !seen[id] {
					wt.cancel()
					delete(watches, id)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// watch keeps one source's session open until ctx ends (the source was deleted or changed,
// or the watcher stops), which closes it: for a stdio source, that stops its server.
func (w *Watcher) watch(ctx context.Context, src db.Source) {
	log := w.log.With("source", src.Name, "kind", src.Kind)
	cfg, err := mcpclient.ParseConfig(src.Config)
	if err != nil {
		log.Warn("bad source config", "err", err)
		return
	}
	backoff := BackoffMin
	for ctx.Err() == nil {
		started := time.Now()
		err := w.session(ctx, src, cfg)
		if ctx.Err() != nil {
			return
		}
		if time.Since(started) >= Stable { // the session had been up a while: start over quickly
			backoff = BackoffMin
		}
		log.Info("list_changed session ended; reconnecting", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, BackoffMax)
	}
}

// session connects once (for stdio: starts the server) and serves notifications until the
// session ends or ctx ends. A nil error means the session was established and later closed.
func (w *Watcher) session(ctx context.Context, src db.Source, cfg mcpclient.Config) error {
	onChange := func(context.Context) {
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		id, dup, err := w.queue.Sync(ectx, src.ID)
		w.log.Info("tools/list_changed", "source", src.Name, "job_id", id, "duplicate", dup, "err", err)
	}
	cctx, cancel := context.WithTimeout(ctx, w.timeout)
	cs, err := mcpclient.Connect(cctx, src.Kind, cfg, mcpclient.Options{ToolListChanged: onChange, Commands: w.commands, Limits: w.limits,
		Auth: w.auth, Source: src.Name})
	cancel()
	if err != nil {
		return err
	}
	defer cs.Close()
	w.setConnected(src.ID, true)
	defer w.setConnected(src.ID, false)

	done := make(chan error, 1)
	go func() { done <- cs.Wait() }()
	ping := time.NewTicker(Ping)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-done:
			return nil
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, w.timeout)
			err := cs.Ping(pctx, nil)
			cancel()
			if err != nil {
				return err
			}
		}
	}
}

func (w *Watcher) setConnected(id int64, up bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if up {
		w.connected[id] = true
	} else {
		delete(w.connected, id)
	}
}
