package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// WatchPool exports the statistics of pool, labelled pool=name (primary, read).
func (m *Metrics) WatchPool(name string, pool *pgxpool.Pool) {
	m.reg.MustRegister(&poolCollector{pool: pool, name: name})
}

var (
	poolLabels      = []string{"pool"}
	poolAcquired    = prometheus.NewDesc(Namespace+"_db_pool_acquired_conns", "Connections currently in use.", poolLabels, nil)
	poolIdle        = prometheus.NewDesc(Namespace+"_db_pool_idle_conns", "Idle connections.", poolLabels, nil)
	poolTotal       = prometheus.NewDesc(Namespace+"_db_pool_total_conns", "Open connections (acquired, idle and being made).", poolLabels, nil)
	poolMax         = prometheus.NewDesc(Namespace+"_db_pool_max_conns", "Most connections the pool opens.", poolLabels, nil)
	poolAcquires    = prometheus.NewDesc(Namespace+"_db_pool_acquires_total", "Successful connection acquisitions.", poolLabels, nil)
	poolAcquireSecs = prometheus.NewDesc(Namespace+"_db_pool_acquire_seconds_total", "Total time spent waiting for a connection.", poolLabels, nil)
	poolEmpty       = prometheus.NewDesc(Namespace+"_db_pool_empty_acquires_total", "Acquisitions that had to wait because no idle connection was free.", poolLabels, nil)
	poolCanceled    = prometheus.NewDesc(Namespace+"_db_pool_canceled_acquires_total", "Acquisitions cancelled by their context.", poolLabels, nil)
)

type poolCollector struct {
	pool *pgxpool.Pool
	name string
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolAcquired, poolIdle, poolTotal, poolMax, poolAcquires, poolAcquireSecs, poolEmpty, poolCanceled} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, c.name)
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, c.name)
	}
	gauge(poolAcquired, float64(s.AcquiredConns()))
	gauge(poolIdle, float64(s.IdleConns()))
	gauge(poolTotal, float64(s.TotalConns()))
	gauge(poolMax, float64(s.MaxConns()))
	counter(poolAcquires, float64(s.AcquireCount()))
	counter(poolAcquireSecs, s.AcquireDuration().Seconds())
	counter(poolEmpty, float64(s.EmptyAcquireCount()))
	counter(poolCanceled, float64(s.CanceledAcquireCount()))
}

// WatchJobs exports the number of River jobs by kind and state, counted in river_job at
// scrape time (River's cleaner keeps finished jobs for a day, so the table stays small).
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
	// Raw SQL: river_job belongs to River's own migrations, which sqlc does not read.
	rows, err := c.pool.Query(ctx, `SELECT kind, state::text, count(*) FROM river_job GROUP BY kind, state`)
	if err != nil {
		c.log.Warn("count river jobs for metrics", "err", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var (
			kind, state string
			n           int64
		)
		if err := rows.Scan(&kind, &state, &n); err != nil {
			c.log.Warn("count river jobs for metrics", "err", err)
			return
		}
		ch <- prometheus.MustNewConstMetric(jobCount, prometheus.GaugeValue, float64(n), kind, state)
	}
	if err := rows.Err(); err != nil {
		c.log.Warn("count river jobs for metrics", "err", err)
	}
}
