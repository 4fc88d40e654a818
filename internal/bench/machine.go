package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Machine describes where a benchmark ran, for the report next to its numbers.
type Machine struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	OS         string `json:"os"`
	Go         string `json:"go"`
	PostgreSQL string `json:"postgresql,omitempty"`
}

// DescribeMachine reads the CPU model (from /proc/cpuinfo on Linux), the usable cores and the
// Go version. postgres is the server version, or "" when the benchmark does not use one.
func DescribeMachine(postgres string) Machine {
	return Machine{
		CPU:        cpuModel(),
		Cores:      runtime.GOMAXPROCS(0),
		OS:         runtime.GOOS + "/" + runtime.GOARCH,
		Go:         runtime.Version(),
		PostgreSQL: postgres,
	}
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// LoadAverage is the system's 1, 5 and 15-minute load averages as /proc/loadavg gives
// them ("1.52 2.10 3.01"), for a report to state the load it ran under; "unknown" where
// there is no /proc/loadavg.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// Querier is what PostgresVersion needs: a pool, a connection or a transaction.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// PostgresVersion asks the server for its version. A server setting read, not application
// data, so it is raw SQL rather than a sqlc query.
func PostgresVersion(ctx context.Context, q Querier) (string, error) {
	var v string
	if err := q.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return "", fmt.Errorf("postgres version: %w", err)
	}
	return v, nil
}

// String is the machine line of a report.
func (m Machine) String() string {
	s := fmt.Sprintf("%s, %d cores, %s, %s", m.CPU, m.Cores, m.OS, m.Go)
	if m.PostgreSQL != "" {
		s += ", PostgreSQL " + m.PostgreSQL
	}
	return s
}
