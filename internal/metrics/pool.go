package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/internal/riverdb"
)

// WatchPool exports the statistics of pool, labelled pool=name (primary, replica). Each
// pool's series carry its name as a constant label, so several pools can be watched.
func (m *Metrics) WatchPool(name string, pool *pgxpool.Pool) {
	labels := prometheus.Labels{"pool": name}
	desc := func(metric, help string) *prometheus.Desc {
		return prometheus.NewDesc(Namespace+"_db_pool_"+metric, help, nil, labels)
	}
	m.reg.MustRegister(&poolCollector{pool: pool,
		acquired:    desc("acquired_conns", "Connections currently in use."),
		idle:        desc("idle_conns", "Idle connections."),
		total:       desc("total_conns", "Open connections (acquired, idle and being made)."),
		max:         desc("max_conns", "Most connections the pool opens."),
		acquires:    desc("acquires_total", "Successful connection acquisitions."),
		acquireSecs: desc("acquire_seconds_total", "Total time spent waiting for a connection."),
		empty:       desc("empty_acquires_total", "Acquisitions that had to wait because no idle connection was free."),
		canceled:    desc("canceled_acquires_total", "Acquisitions cancelled by their context."),
	})
}

type poolCollector struct {
	pool                                                               *pgxpool.Pool
	acquired, idle, total, max, acquires, acquireSecs, empty, canceled *prometheus.Desc
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.acquired, c.idle, c.total, c.max, c.acquires, c.acquireSecs, c.empty, c.canceled} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(c.acquired, float64(s.AcquiredConns()))
	gauge(c.idle, float64(s.IdleConns()))
	gauge(c.total, float64(s.TotalConns()))
	gauge(c.max, float64(s.MaxConns()))
	counter(c.acquires, float64(s.AcquireCount()))
	counter(c.acquireSecs, s.AcquireDuration().Seconds())
	counter(c.empty, float64(s.EmptyAcquireCount()))
	counter(c.canceled, float64(s.CanceledAcquireCount()))
}

// WatchJobs exports the number of River jobs by kind and state, counted at scrape time
// (riverdb.CountJobs; River's cleaner keeps finished jobs for a day, so the table stays
// small).
// A failed count is logged and leaves the metric out of that scrape.
func (m *Metrics) WatchJobs(pool *pgxpool.Pool, log *slog.Logger) {
	m.reg.MustRegister(&jobCountCollector{pool: pool, log: log})
}

var jobCount = prometheus.NewDesc(Namespace+"_jobs", "River jobs in the job table by kind and state.", []string{"kind", "state"}, nil)

// jobCountTimeout bounds the count query of one scrape.
const jobCountTimeout = 2 * time.Second

type jobCountCollector struct {
	pool *pgxpool.Pool
	log  *slog.Logger
}

func (c *jobCountCollector) Describe(ch chan<- *prometheus.Desc) { ch <- jobCount }

func (c *jobCountCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), jobCountTimeout)
	defer cancel()
	counts, err := riverdb.CountJobs(ctx, c.pool)
	if err != nil {
		c.log.Warn("count river jobs for metrics", "err", err)
		return
	}
	for _, n := range counts {
		ch <- prometheus.MustNewConstMetric(jobCount, prometheus.GaugeValue, float64(n.Count), n.Kind, n.State)
	}
}
