// Package testfactory makes the rows tests start from through toolgate's own code paths,
// as River's internal/testfactory does for its tests: a catalog is imported by
// sources.Import, enriched by enrich.Service, a weight profile put by profiles.Put, an MCP
// source created by sources.Service.Create, as POST /v1/sources creates it. A fixture made this way cannot drift
// from what production writes (a content hash, a partition, an index, a lexical index
// entry). A test that needs a state no production path makes (a run left running by a
// process that died, a row of an old schema, bulk rows for a benchmark) writes it itself,
// and says so.
//
// WaitJob waits on River's job events, instead of polling river_job.
package testfactory

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/dataset"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/profiles"
	"github.com/toolgate/toolgate/internal/search"
	"github.com/toolgate/toolgate/internal/sources"
	"github.com/toolgate/toolgate/internal/tdwa"
)

// Tool is a valid tool definition with an empty object schema.
func Tool(name, description string) catalog.Tool {
	return catalog.Tool{Name: name, Description: description, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

// CatalogOpts tunes Catalog.
type CatalogOpts struct {
	// Queue receives the enrichment jobs of the changed tools; nil drops them (the test
	// enriches by hand, or not at all).
	Queue sources.Queue
}

// Catalog makes the tools of catalog source name equal to tools with sources.Import, as
// `toolgate import` and PUT /v1/sources/{name}/tools do: the source is created when
// missing and the tools are in the lexical index when it returns.
func Catalog(ctx context.Context, tb testing.TB, pool *pgxpool.Pool, name string, tools []catalog.Tool, opts *CatalogOpts) (db.Source, catalog.Result) {
	tb.Helper()
	var queue sources.Queue = noJobs{}
	if opts != nil && opts.Queue != nil {
		queue = opts.Queue
	}
	src, res, err := sources.Import(ctx, pool, queue, name, tools)
	if err != nil {
		tb.Fatalf("import %d tools into %s: %v", len(tools), name, err)
	}
	return src, res
}

// DemoCatalog imports the demo catalog's tools of the first companies companies as
// source "fin" and returns the ids of the tools it created.
func DemoCatalog(ctx context.Context, tb testing.TB, pool *pgxpool.Pool, companies int, opts *CatalogOpts) []int64 {
	tb.Helper()
	_, res := Catalog(ctx, tb, pool, "fin", dataset.Tools(dataset.DemoCompanies[:companies]), opts)
	return res.Changed
}

// noJobs is a queue that queues nothing.
type noJobs struct{}

func (noJobs) EnrichTx(context.Context, pgx.Tx, []int64) error                      { return nil }
func (noJobs) SyncTx(context.Context, pgx.Tx, int64) (int64, error)                 { return 0, nil }
func (noJobs) Sync(context.Context, int64) (int64, bool, error)                     { return 0, false, nil }
func (noJobs) DeleteWaitingEnrichTx(context.Context, pgx.Tx, string) (int64, error) { return 0, nil }

// SourceOpts tunes MCPSource.
type SourceOpts struct {
	Kind db.SourceKind // mcpclient.KindHTTP when empty
	// Config is the server's; an mcp_http source without a URL gets one no server
	// listens on.
	Config     mcpclient.Config
	ReviewMode bool
	// Interval is the sync interval as POST /v1/sources takes it ("10m", or "off" for on
	// demand only); empty means production's default, sources.DefaultSyncInterval.
	Interval string
	// Commands is the allowlist the source is created under. Nil allows exactly the
	// source's own command, arguments and env: the source was created while its command
	// was allowed (a test may then sync it under another allowlist).
	Commands *mcpclient.CommandPolicy
	// Queue receives the source's first sync; nil queues none.
	Queue sources.LifecycleQueue
}

// MCPSource creates an MCP source with sources.Service.Create, as POST /v1/sources does:
// the same validation and the same default interval.
func MCPSource(ctx context.Context, tb testing.TB, pool *pgxpool.Pool, name string, opts *SourceOpts) db.Source {
	tb.Helper()
	if opts == nil {
		opts = &SourceOpts{}
	}
	kind := opts.Kind
	if kind == "" {
		kind = mcpclient.KindHTTP
	}
	cfg := opts.Config
	if kind == mcpclient.KindHTTP && cfg.URL == "" {
		// a server that is never reached, for a test that needs the source, not its tools
		cfg.URL = "http://127.0.0.1:1/mcp"
	}
	commands := mcpclient.NewCommandPolicyOf(mcpclient.AllowedCommand{
		Words: append([]string{cfg.Command}, cfg.Args...), Env: slices.Sorted(maps.Keys(cfg.Env))})
	if opts.Commands != nil {
		commands = *opts.Commands
	}
	var queue sources.LifecycleQueue = noJobs{}
	if opts.Queue != nil {
		queue = opts.Queue
	}
	settings := sources.MCPSettings{Command: cfg.Command, Args: cfg.Args, Env: cfg.Env, URL: cfg.URL, Headers: cfg.Headers,
		ReviewMode: opts.ReviewMode}
	if opts.Interval != "" {
		settings.Interval = &opts.Interval
	}
	svc := &sources.Service{Pool: pool, Queue: queue, Commands: commands}
	out, err := svc.Create(ctx, sources.NewSource{Name: name, Kind: kind, MCP: settings})
	if err != nil {
		tb.Fatalf("create source %s: %v", name, err)
	}
	return out.Source
}

// LocalEnricher is the enrichment service of a server without providers: the heuristic
// enricher and the local embedder (384 dimensions), questions questions per tool.
func LocalEnricher(pool *pgxpool.Pool, questions int) *enrich.Service {
	return &enrich.Service{Pool: pool, Logger: slog.New(slog.DiscardHandler), Embedder: embed.NewLocal(384),
		Enricher: enrich.Heuristic{}, Questions: questions}
}

// Enrich enriches and embeds the current definition of each tool with svc, as its
// enrich_tool job does.
func Enrich(ctx context.Context, tb testing.TB, svc *enrich.Service, toolIDs ...int64) {
	tb.Helper()
	q := db.New(svc.Pool)
	for _, id := range toolIDs {
		tool, err := q.GetToolByID(ctx, id)
		if err != nil {
			tb.Fatalf("tool %d: %v", id, err)
		}
		if _, err := svc.EnrichTool(ctx, id, tool.ContentHash); err != nil {
			tb.Fatalf("enrich %s: %v", tool.Name, err)
		}
	}
}

// Weights creates the TDWA profile or changes its weights with profiles.Put, as PUT
// /admin/profiles/{name} does; its vectors change with the next re-weight.
func Weights(ctx context.Context, tb testing.TB, pool *pgxpool.Pool, profile string, weights map[string]float64) profiles.View {
	tb.Helper()
	v, _, err := profiles.Put(ctx, pool, profile, tdwa.Profile{Strategy: tdwa.StrategyTDWA, Weights: weights}, nil)
	if err != nil {
		tb.Fatalf("put profile %s: %v", profile, err)
	}
	return v
}

// CurrentSet is the id of the profile's current vector set.
func CurrentSet(ctx context.Context, tb testing.TB, pool *pgxpool.Pool, profile string) int64 {
	tb.Helper()
	p, err := db.New(pool).GetProfileByName(ctx, profile)
	if err != nil || !p.CurrentSet.Valid {
		tb.Fatalf("current set of profile %s: %+v %v", profile, p, err)
	}
	return p.CurrentSet.Int64
}

// BeginReweight creates (or finds) the profile's building vector set with
// profiles.BeginReweight, committed.
func BeginReweight(ctx context.Context, tb testing.TB, pool *pgxpool.Pool, profile string) db.VectorSet {
	tb.Helper()
	var set db.VectorSet
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		set, err = profiles.BeginReweight(ctx, tx, profile)
		return err
	})
	if err != nil {
		tb.Fatalf("begin the re-weight of %s: %v", profile, err)
	}
	return set
}

// JobEvents subscribes to the events that end a job's attempt on rc (completed, failed,
// cancelled, snoozed). Subscribe before rc starts, so that no event is missed.
func JobEvents(tb testing.TB, rc *river.Client[pgx.Tx]) <-chan *river.Event {
	tb.Helper()
	events, cancel := rc.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed,
		river.EventKindJobCancelled, river.EventKindJobSnoozed)
	tb.Cleanup(cancel)
	return events
}

// WaitJob returns the first event of events for which match holds, and fails tb when
// none came within timeout (a generous bound, not a timing assertion).
func WaitJob(tb testing.TB, events <-chan *river.Event, timeout time.Duration, what string, match func(*river.Event) bool) *river.Event {
	tb.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				tb.Fatalf("waiting for %s: the event channel closed", what)
			}
			if match(ev) {
				return ev
			}
		case <-deadline:
			tb.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Use is a request in a user's words and the tools that serve it (names as in the catalog
// file, without the source's prefix).
type Use struct {
	Query string
	Tools []string
}

// Labels searches each use's query with svc as an agent would (k 10) and reports the use's
// tools the search returned from source src as used (explicit feedback, success true): the
// labels an agent that then called them leaves. It returns the number of searches labelled.
func Labels(ctx context.Context, tb testing.TB, svc *search.Service, src string, uses []Use) int {
	tb.Helper()
	return LabelsAs(ctx, tb, svc, search.Internal(), src, uses)
}

// LabelsAs is Labels with the searches and feedback made as caller (an API key's, say).
func LabelsAs(ctx context.Context, tb testing.TB, svc *search.Service, caller auth.Caller, src string, uses []Use) int {
	tb.Helper()
	labelled, ok := 0, true
	for _, u := range uses {
		resp, err := svc.Search(ctx, caller, search.Request{Query: u.Query, K: 10})
		if err != nil {
			tb.Fatalf("search %q: %v", u.Query, err)
		}
		var fb []search.Feedback
		for _, r := range resp.Results {
			if slices.Contains(u.Tools, strings.TrimPrefix(r.Name, src+"__")) {
				fb = append(fb, search.Feedback{Name: r.Name, Success: &ok})
			}
		}
		if len(fb) == 0 {
			continue
		}
		if _, err := svc.RecordFeedback(ctx, caller, resp.SearchID, fb); err != nil {
			tb.Fatalf("feedback on %q: %v", u.Query, err)
		}
		labelled++
	}
	return labelled
}

// MisleadingCatalog is a catalog of 48 tools whose descriptions each describe another
// tool's job (a catalog with copied or stale descriptions): the names tell the tools apart,
// while the descriptions, and everything enrichment derives from them, point at the wrong
// tool. Its uses ask for each tool's job in three phrasings. Weights that lean on the
// descriptions rank the right tool lower: the case tuning weights from labels is for.
func MisleadingCatalog() ([]catalog.Tool, []Use) {
	verbs := []string{"archive", "restore", "export", "audit"}
	objects := []string{"invoice", "contract", "certificate", "mailbox", "playlist", "warehouse",
		"vaccine", "telescope", "glacier", "orchestra", "satellite", "greenhouse"}
	type job struct{ verb, object string }
	var jobs []job
	for _, o := range objects {
		for _, v := range verbs {
			jobs = append(jobs, job{v, o})
		}
	}
	var tools []catalog.Tool
	var uses []Use
	for i, j := range jobs {
		other := jobs[(i+5)%len(jobs)]
		name := j.verb + "_" + j.object
		tools = append(tools, Tool(name, fmt.Sprintf("Use this to %s a %s record of the workspace by its id.", other.verb, other.object)))
		for _, q := range []string{"%s the %s", "please %s my %s now", "I need to %s a %s"} {
			uses = append(uses, Use{Query: fmt.Sprintf(q, j.verb, j.object), Tools: []string{name}})
		}
	}
	return tools, uses
}
