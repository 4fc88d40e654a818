package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Options control one benchmark run.
type Options struct {
	// Warmup operations run first and are not measured (caches, prepared statements, pools).
	Warmup int
	// Runs is the number of measured operations, shared by the workers. Ignored when
	// Duration is set.
	Runs int
	// Duration, when positive, measures for this long instead of a fixed number of runs.
	Duration time.Duration
	// Concurrency is the number of workers running operations in parallel; 1 when < 1.
	Concurrency int
}

// Validate reports options that cannot run.
func (o Options) Validate() error {
	switch {
	case o.Warmup < 0:
		return errors.New("bench: warm-up must not be negative")
	case o.Duration < 0:
		return errors.New("bench: duration must not be negative")
	case o.Duration == 0 && o.Runs < 1:
		return errors.New("bench: need at least one run or a duration")
	}
	return nil
}

// Result is the outcome of one benchmark.
type Result struct {
	Name        string        `json:"name"`
	Concurrency int           `json:"concurrency"`
	Runs        int           `json:"runs"`   // measured operations, failed ones included
	Errors      int           `json:"errors"` // failed operations
	Elapsed     time.Duration `json:"elapsed_ns"`
	// Latency percentiles and mean of the successful operations.
	P50  time.Duration `json:"p50_ns"`
	P95  time.Duration `json:"p95_ns"`
	P99  time.Duration `json:"p99_ns"`
	Mean time.Duration `json:"mean_ns"`
	// Throughput is successful operations per second of wall time.
	Throughput float64 `json:"throughput_per_s"`
	// FirstError is the first failure, for the log; nil when none failed.
	FirstError error `json:"-"`
}

// Op is one measured operation; worker is its worker's index (0 to Concurrency-1).
type Op func(ctx context.Context, worker int) error

// Run warms up, then runs op on opts.Concurrency workers until opts.Runs operations have
// run or opts.Duration has passed, timing each one. A failed operation is counted, not
// timed, and does not stop the run; a cancelled context does.
func Run(ctx context.Context, name string, opts Options, op Op) (Result, error) {
	if err := opts.Validate(); err != nil {
		return Result{}, err
	}
	workers := max(opts.Concurrency, 1)
	for range opts.Warmup {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		_ = op(ctx, 0) // warm-up failures show again in the measured runs
	}

	var (
		next     atomic.Int64 // operations claimed so far
		mu       sync.Mutex
		lat      []float64
		errCount int
		firstErr error
		wg       sync.WaitGroup
	)
	start := time.Now()
	var deadline time.Time
	if opts.Duration > 0 {
		deadline = start.Add(opts.Duration)
	}
	claim := func() bool {
		if ctx.Err() != nil {
			return false
		}
		if opts.Duration > 0 {
			return time.Now().Before(deadline)
		}
		return next.Add(1) <= int64(opts.Runs)
	}
	for w := range workers {
		wg.Go(func() {
			var mine []float64
			for claim() {
				t0 := time.Now()
				err := op(ctx, w)
				d := time.Since(t0)
				if err != nil {
					mu.Lock()
					errCount++
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				mine = append(mine, float64(d))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	r := Result{
		Name:        name,
		Concurrency: workers,
		Runs:        len(lat) + errCount,
		Errors:      errCount,
		Elapsed:     elapsed,
		P50:         time.Duration(Percentile(lat, 50)),
		P95:         time.Duration(Percentile(lat, 95)),
		P99:         time.Duration(Percentile(lat, 99)),
		FirstError:  firstErr,
	}
	if len(lat) > 0 {
		var sum float64
		for _, v := range lat {
			sum += v
		}
		r.Mean = time.Duration(sum / float64(len(lat)))
	}
	if elapsed > 0 {
		r.Throughput = float64(len(lat)) / elapsed.Seconds()
	}
	return r, nil
}

// String is a one-line summary for logs.
func (r Result) String() string {
	return fmt.Sprintf("%s: %d runs (%d errors) on %d workers, p50 %s p95 %s p99 %s, %.1f/s",
		r.Name, r.Runs, r.Errors, r.Concurrency, r.P50, r.P95, r.P99, r.Throughput)
}
