package bench

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
)

func TestPercentile(t *testing.T) {
	vals := []float64{15, 20, 35, 40, 50} // unsorted input is sorted internally below
	cases := []struct{ p, want float64 }{
		{0, 15}, {100, 50},
		{50, 35},   // h = 4·0.5 = 2 → v[2]
		{25, 20},   // h = 1
		{40, 29},   // h = 1.6 → 20 + 0.6·15
		{95, 48},   // h = 3.8 → 40 + 0.8·10
		{99, 49.6}, // h = 3.96
	}
	shuffled := []float64{40, 15, 50, 35, 20}
	for _, c := range cases {
		if got := Percentile(shuffled, c.p); !near(got, c.want) {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
		if got := Percentile(vals, c.p); !near(got, c.want) {
			t.Errorf("sorted p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if shuffled[0] != 40 {
		t.Fatal("Percentile reordered its input")
	}
	if Percentile(nil, 50) != 0 || Percentile([]float64{7}, 99) != 7 {
		t.Fatal("edge cases")
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestRunCountsRunsAndErrors(t *testing.T) {
	var calls atomic.Int64
	workersSeen := make([]atomic.Bool, 3)
	op := func(_ context.Context, w int) error {
		workersSeen[w].Store(true)
		if calls.Add(1)%4 == 0 {
			return errors.New("every fourth call fails")
		}
		time.Sleep(100 * time.Microsecond) // the measured operation takes time, so its latencies are not zero
		return nil
	}
	r, err := Run(context.Background(), "op", Options{Warmup: 4, Runs: 40, Concurrency: 3}, op)
	if err != nil {
		t.Fatal(err)
	}
	// 4 warm-up calls (one failing) + 40 measured calls of which 10 fail.
	if calls.Load() != 44 || r.Runs != 40 || r.Errors != 10 || r.Concurrency != 3 {
		t.Fatalf("calls %d, result %+v", calls.Load(), r)
	}
	if r.FirstError == nil || r.P50 <= 0 || r.P50 > r.P95 || r.P95 > r.P99 || r.Throughput <= 0 {
		t.Fatalf("statistics: %+v", r)
	}
	for w := range workersSeen {
		if !workersSeen[w].Load() {
			t.Errorf("worker %d never ran", w)
		}
	}
}

func TestRunDurationAndCancel(t *testing.T) {
	r, err := Run(context.Background(), "d", Options{Duration: 20 * time.Millisecond, Concurrency: 2}, func(context.Context, int) error {
		time.Sleep(time.Millisecond) // the measured operation, repeated for the run's duration
		return nil
	})
	if err != nil || r.Runs == 0 || r.Errors != 0 {
		t.Fatalf("duration run: %+v %v", r, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = Run(ctx, "c", Options{Runs: 1000}, func(context.Context, int) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	for _, bad := range []Options{{}, {Runs: 1, Warmup: -1}, {Duration: -time.Second}} {
		if _, err := Run(context.Background(), "bad", bad, func(context.Context, int) error { return nil }); err == nil {
			t.Errorf("options %+v accepted", bad)
		}
	}
}

func TestTable(t *testing.T) {
	got := Table([]Result{
		{Name: "parse", Concurrency: 1, Runs: 20, P50: 1500 * time.Microsecond, P95: 2 * time.Millisecond, P99: 1200 * time.Millisecond, Throughput: 612.34},
		{Name: "a|b", Concurrency: 2, Runs: 5, Errors: 1, P50: 800 * time.Nanosecond, P95: 900 * time.Nanosecond, P99: time.Microsecond, Throughput: 1e6},
	})
	want := `| Benchmark | Workers | Runs | Errors | p50 | p95 | p99 | Throughput |
|---|---:|---:|---:|---:|---:|---:|---:|
| parse | 1 | 20 | 0 | 1.50 ms | 2.00 ms | 1.20 s | 612.3/s |
| a\|b | 2 | 5 | 1 | 0.8 µs | 0.9 µs | 1.0 µs | 1000000.0/s |
`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestMachine(t *testing.T) {
	m := DescribeMachine("16.4")
	if m.Cores < 1 || m.CPU == "" || !strings.HasPrefix(m.Go, "go") || !strings.Contains(m.String(), "PostgreSQL 16.4") {
		t.Fatalf("machine %+v", m)
	}
	if strings.Contains(DescribeMachine("").String(), "PostgreSQL") {
		t.Fatal("PostgreSQL shown without a version")
	}
}

func TestPostgresVersion(t *testing.T) {
	pool := pgtest.NewPool(t)
	v, err := PostgresVersion(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	if v == "" || v[0] < '1' || v[0] > '9' {
		t.Fatalf("version %q", v)
	}
}

func TestLoadAverage(t *testing.T) {
	got := LoadAverage()
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		if got != "unknown" {
			t.Fatalf("LoadAverage() = %q without /proc/loadavg", got)
		}
		return
	}
	if f := strings.Fields(got); len(f) != 3 {
		t.Fatalf("LoadAverage() = %q, want three averages", got)
	}
}
