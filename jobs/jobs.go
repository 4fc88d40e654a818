// Package jobs holds toolgate's background work as River jobs: their arguments, their
// insert options, their workers and the River client that runs them in the same PostgreSQL
// database as the catalog. A worker's Work is short: the work itself belongs to the domain
// services it calls (internal/sources, internal/enrich, internal/profiles, internal/lexical,
// internal/observed, internal/tune).
// Queue inserts jobs for those services, which cannot import this package.
package jobs

import (
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/enrich"
	"github.com/toolgate/toolgate/internal/logging"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/search"
)

// Deps is what workers need from the process that runs them.
type Deps struct {
	Pool   *pgxpool.Pool
	Logger *slog.Logger
	// SearchLogKeep is how long retrieval log partitions are kept.
	SearchLogKeep time.Duration
	// SyncTimeout bounds connecting to an MCP server and listing its tools.
	SyncTimeout time.Duration
	// Commands are the programs mcp_stdio sources may start (TOOLGATE_STDIO_COMMANDS);
	// the zero value allows none, so a sync of such a source fails.
	Commands mcpclient.CommandPolicy
	// ListLimits bound one listing of an MCP server's tools (TOOLGATE_MAX_TOOLS_PER_SOURCE,
	// TOOLGATE_MAX_LIST_BYTES); the zero value is mcpclient.DefaultLimits.
	ListLimits mcpclient.Limits
	// Auth gives the access tokens of mcp_http sources configured for OAuth
	// (upstreamauth.Manager); nil: their syncs fail.
	Auth mcpclient.Authorizer
	// EnrichTimeout bounds one enrich_tool job, ReweightTimeout one attempt of a re-weight,
	// JobTimeout the database-only work (housekeeping jobs, applying a listed sync). Zero
	// takes the default (timeouts.go).
	EnrichTimeout   time.Duration
	ReweightTimeout time.Duration
	JobTimeout      time.Duration
	// Metrics records job durations and failures; nil records nothing.
	Metrics *metrics.Metrics
	// Embedder and Enricher produce the enrichment outputs and vectors (enrich_tool jobs);
	// Questions is how many synthetic questions to ask for per tool.
	Embedder  embed.Embedder
	Enricher  enrich.Enricher
	Questions int
	// Search are the search settings a profile_tune job scores the fused ranking with (the
	// fusion method, weights and candidates); the zero value is search.DefaultSettings().
	Search search.Settings
	// enrich is the enrichment service the enrich_tool jobs run, made of the fields above
	// by NewClient.
	enrich *enrich.Service
	// lexicalAsked is the debounce period for which this process last queued a
	// lexical_index job (Deps.enqueueLexicalIndex).
	lexicalAsked *atomic.Int64
	// vectorIndexAsked is the second in which this process last looked for deferred vector
	// indexes after an enrichment (Deps.enqueueVectorIndex).
	vectorIndexAsked *atomic.Int64
	// MCPSessionKeep is how long an unused MCP gateway session is kept.
	MCPSessionKeep time.Duration
	// ObservedQueries is the most observed queries kept per tool (TOOLGATE_OBSERVED_QUERIES,
	// internal/observed); 0 collects none and runs no observed_queries sweep.
	ObservedQueries int
	// ObservedMinKeys is how many distinct API keys must have searched a query before it
	// is observed (TOOLGATE_OBSERVED_MIN_KEYS); 0 is observed.DefaultMinKeys.
	ObservedMinKeys int
	// Memory runs the memory_sweep job (internal/memory): on when the memory branch is
	// (TOOLGATE_MEMORY_WEIGHT > 0).
	Memory bool
	// MemoryPerTool is the most memories kept per tool and tenant (TOOLGATE_MEMORY_PER_TOOL);
	// 0 is memory.DefaultMaxPerTool.
	MemoryPerTool int
	// MemoryListsFrom is the number of memories from which a tenant's are split into lists
	// (memory.Service.ListFrom: 0 is memory.DefaultListFrom, below 0 never).
	MemoryListsFrom int
}

// Options tunes the River client.
type Options struct {
	// Work makes the client fetch and run jobs. Without it the client only inserts jobs
	// (the API-only role).
	Work bool
	// MaxWorkers is the number of jobs each queue (default, enrich) works at once in this
	// process.
	MaxWorkers int
	// PollOnly makes River poll for jobs instead of using LISTEN/NOTIFY, which a
	// pgbouncer in transaction mode does not carry.
	PollOnly bool
	// RescueAfter is how long after its attempt started a job still running is taken for
	// abandoned by a dead process and retried by River's rescuer. It must exceed every job's
	// timeout (internal/config checks TOOLGATE_RESCUE_AFTER); zero derives it (timeouts.go).
	RescueAfter time.Duration
}

// unfinishedStates are the states of a job that has not finished yet: waiting (available,
// pending, scheduled, retryable) or running.
var unfinishedStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateRetryable, rivertype.JobStateScheduled,
}

// uniqueUnfinished makes a job unique by its arguments among the unfinished jobs of its
// kind: asking for it again while one waits or runs returns that one; a finished job
// (completed, cancelled or discarded) does not stand in the way of a new one.
func uniqueUnfinished() river.UniqueOpts {
	return river.UniqueOpts{ByArgs: true, ByState: slices.Clone(unfinishedStates)}
}

// fetchCooldown is the least time between two fetches of jobs by one client (River's
// default is 100 ms). A fetch is one short query, made only while jobs keep coming.
const fetchCooldown = 10 * time.Millisecond

// NewClient builds the River client with every toolgate worker and periodic job registered.
func NewClient(deps Deps, opts Options) (*river.Client[pgx.Tx], error) {
	workers := river.NewWorkers()
	deps.enrich = deps.enrichService()
	deps.lexicalAsked = &atomic.Int64{}
	deps.vectorIndexAsked = &atomic.Int64{}
	river.AddWorker(workers, &SearchLogMaintenanceWorker{deps: deps})
	river.AddWorker(workers, &SyncWorker{deps: deps})
	river.AddWorker(workers, &SyncDueWorker{deps: deps})
	river.AddWorker(workers, &APIKeyRateCleanupWorker{deps: deps})
	river.AddWorker(workers, &EnrichToolWorker{deps: deps})
	river.AddWorker(workers, &MCPSessionCleanupWorker{deps: deps})
	river.AddWorker(workers, &ReweightWorker{deps: deps})
	river.AddWorker(workers, &TuneWorker{deps: deps})
	river.AddWorker(workers, &LexicalIndexWorker{deps: deps})
	river.AddWorker(workers, &ObservedQueriesWorker{deps: deps})
	river.AddWorker(workers, &MemorySweepWorker{deps: deps})
	river.AddWorker(workers, &SearchRollupWorker{deps: deps})
	river.AddWorker(workers, &VectorIndexWorker{deps: deps})

	cfg := &river.Config{
		// River's INFO records (job counts every few seconds, each retry) at DEBUG
		Logger:     slog.New(logging.Demoted(deps.Logger.Handler())).With("component", "river"),
		Workers:    workers,
		Middleware: deps.Metrics.JobMiddlewares(),
		PollOnly:   opts.PollOnly,
		// River fetches new jobs at most once per cooldown, up to the free worker slots:
		// with its default (100 ms) and enrich_tool jobs of about 25 ms, 4 workers could
		// never work more than 40 jobs/s, whatever the machine.
		FetchCooldown: fetchCooldown,
		// The bound of the jobs without a timeout of their own, and when a job left running
		// by a dead process is retried (River's default, an hour, left a killed process's
		// work stuck that long).
		JobTimeout:           deps.jobTimeout(),
		RescueStuckJobsAfter: deps.rescueAfter(opts),
	}
	if opts.Work {
		// Each queue has MaxWorkers: enrichment, however much of it is queued, leaves the
		// default queue's workers free for syncs, re-weights, tunes and maintenance.
		cfg.Queues = map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: max(opts.MaxWorkers, 1)},
			QueueEnrich:        {MaxWorkers: max(opts.MaxWorkers, 1)},
		}
		cfg.PeriodicJobs = []*river.PeriodicJob{
			river.NewPeriodicJob(river.PeriodicInterval(6*time.Hour),
				func() (river.JobArgs, *river.InsertOpts) { return SearchLogMaintenanceArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true, ID: "search_log_maintenance"}),
			river.NewPeriodicJob(river.PeriodicInterval(syncDueEvery),
				func() (river.JobArgs, *river.InsertOpts) { return SyncDueArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true, ID: "sync_due_sources"}),
			river.NewPeriodicJob(river.PeriodicInterval(5*time.Minute),
				func() (river.JobArgs, *river.InsertOpts) { return APIKeyRateCleanupArgs{}, nil },
				&river.PeriodicJobOpts{ID: "api_key_rate_cleanup"}),
			river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
				func() (river.JobArgs, *river.InsertOpts) { return MCPSessionCleanupArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true, ID: "mcp_session_cleanup"}),
			// A safety net: what a crash left queued, or a process whose clock disagrees
			// with the debounce, is indexed within a minute.
			river.NewPeriodicJob(river.PeriodicInterval(time.Minute),
				func() (river.JobArgs, *river.InsertOpts) { return LexicalIndexArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true, ID: "lexical_index"}),
			// What a crash left deferred is built within a minute of a restart.
			river.NewPeriodicJob(river.PeriodicInterval(time.Minute),
				func() (river.JobArgs, *river.InsertOpts) { return VectorIndexArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true, ID: "vector_index"}),
			river.NewPeriodicJob(river.PeriodicInterval(rollupEvery),
				func() (river.JobArgs, *river.InsertOpts) { return SearchRollupArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true, ID: "search_rollup"}),
		}
		if deps.ObservedQueries > 0 {
			cfg.PeriodicJobs = append(cfg.PeriodicJobs, river.NewPeriodicJob(river.PeriodicInterval(observedEvery),
				func() (river.JobArgs, *river.InsertOpts) { return ObservedQueriesArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true, ID: "observed_queries"}))
		}
		if deps.Memory {
			cfg.PeriodicJobs = append(cfg.PeriodicJobs, river.NewPeriodicJob(river.PeriodicInterval(memoryEvery),
				func() (river.JobArgs, *river.InsertOpts) { return MemorySweepArgs{}, nil },
				&river.PeriodicJobOpts{RunOnStart: true, ID: "memory_sweep"}))
		}
	}
	return river.NewClient(riverpgxv5.New(deps.Pool), cfg)
}
