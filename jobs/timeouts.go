package jobs

import (
	"time"

	"github.com/riverqueue/river"
)

// Every attempt of a job is bounded: River cancels its context at its kind's timeout. A job
// whose process died (kill -9, a lost machine) stays `running` in river_job until River's
// rescuer, run by the leader every 30 s, finds its attempt older than RescueAfter (and than
// its kind's timeout) and makes it retryable. RescueAfter must therefore exceed every
// timeout (else a slow but live attempt would run twice at once), and is best kept just
// above the longest one, so that abandoned work resumes within minutes: River's own default
// is one hour.

// DefaultReweightTimeout bounds one attempt of a re-weight. An attempt resumes the vectors
// its predecessors wrote, so only the steps that cannot be split must fit in one attempt:
// the HNSW build of the whole set (about 35 s for 50,000 tools on a loaded 2-core machine,
// docs/benchmarks.md) and the switch. Ten minutes leave room for catalogs several times
// that size.
const DefaultReweightTimeout = 10 * time.Minute

// DefaultJobTimeout bounds the database-only work: the housekeeping jobs (River's default
// job timeout) and a sync's diff once the server has listed its tools.
const DefaultJobTimeout = river.JobTimeoutDefault

// WindDown is how long a worker may still take to return once its attempt's context is
// cancelled: a sync records its failed run (at most 10 s), a re-weight's last attempt drops
// its set's partition (at most 30 one-second lock waits). An attempt older than its kind's
// timeout plus WindDown has certainly no live worker.
const WindDown = time.Minute

func (d Deps) enrichTimeout() time.Duration {
	if d.EnrichTimeout > 0 {
		return d.EnrichTimeout
	}
	return DefaultEnrichTimeout
}

func (d Deps) reweightTimeout() time.Duration {
	if d.ReweightTimeout > 0 {
		return d.ReweightTimeout
	}
	return DefaultReweightTimeout
}

func (d Deps) jobTimeout() time.Duration {
	if d.JobTimeout > 0 {
		return d.JobTimeout
	}
	return DefaultJobTimeout
}

// syncJobTimeout bounds one sync_source attempt: the listing, then applying its diff.
// internal/config checks TOOLGATE_RESCUE_AFTER against the same sum.
func (d Deps) syncJobTimeout() time.Duration { return d.syncTimeout() + d.jobTimeout() }

// Timeout is how long one attempt of a job of kind may run in a client built with d: the
// timeout its worker gives River. Kinds without their own timeout get the JobTimeout.
func (d Deps) Timeout(kind string) time.Duration {
	switch kind {
	case EnrichToolArgs{}.Kind(), ObservedQueriesArgs{}.Kind():
		return d.enrichTimeout()
	case ReweightArgs{}.Kind(), TuneArgs{}.Kind(), VectorIndexArgs{}.Kind():
		return d.reweightTimeout()
	case SyncArgs{}.Kind():
		return d.syncJobTimeout()
	}
	return d.jobTimeout()
}

// AbandonedAfter is how long after its attempt started a job of kind still `running` has
// certainly been abandoned by a process that died: its worker, if alive, would have been
// cancelled at the kind's timeout and returned within WindDown. Every instance must use the
// same timeouts for this to hold across instances.
func (d Deps) AbandonedAfter(kind string) time.Duration { return d.Timeout(kind) + WindDown }

// DefaultAbandonedAfter is AbandonedAfter with the default timeouts, for a caller that was
// given none (the API of a process without workers).
func DefaultAbandonedAfter(kind string) time.Duration { return Deps{}.AbandonedAfter(kind) }

// rescueAfter is Options.RescueAfter, or, when unset, WindDown more than the longest job
// timeout (11 minutes with the defaults: the re-weight's 10).
func (d Deps) rescueAfter(opts Options) time.Duration {
	if opts.RescueAfter > 0 {
		return opts.RescueAfter
	}
	return max(d.enrichTimeout(), d.reweightTimeout(), d.syncJobTimeout(), d.jobTimeout()) + WindDown
}
