package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// JobMiddlewares is the River middleware list for river.Config.Middleware: a worker
// middleware recording each job attempt's queue wait, duration and failures by kind. It
// is empty on a nil *Metrics.
func (m *Metrics) JobMiddlewares() []rivertype.Middleware {
	if m == nil {
		return nil
	}
	return []rivertype.Middleware{&jobMiddleware{m: m}}
}

type jobMiddleware struct {
	river.MiddlewareDefaults
	m *Metrics
}

func (j *jobMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) (err error) {
	start := time.Now()
	if job.AttemptedAt != nil {
		j.m.jobWait.WithLabelValues(job.Kind).Observe(max(job.AttemptedAt.Sub(job.ScheduledAt), 0).Seconds())
	}
	defer func() {
		// A panicking worker is a failed attempt too; River recovers it above us.
		if r := recover(); r != nil {
			j.observe(job.Kind, start, fmt.Errorf("panic: %v", r))
			panic(r)
		}
		j.observe(job.Kind, start, err)
	}()
	return doInner(ctx)
}

func (j *jobMiddleware) observe(kind string, start time.Time, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
		j.m.jobFailures.WithLabelValues(kind).Inc()
	}
	j.m.jobDuration.WithLabelValues(kind, outcome).Observe(time.Since(start).Seconds())
}
