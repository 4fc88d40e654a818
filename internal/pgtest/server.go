package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgBin holds the PostgreSQL 15 server programs installed by scripts/pg-setup.sh.
const pgBin = "/usr/lib/postgresql/15/bin"

// Server is a private PostgreSQL instance for fault tests, which stop and start it: the
// shared cluster must never be restarted under the tests running against it in parallel.
// It has its own data directory and loopback port and is removed at cleanup.
type Server struct {
	t    testing.TB
	dir  string
	port int
}

// NewServer initialises and starts a private instance with an empty database "toolgate"
// (no migrations). PostgreSQL refuses to run as root, so when the tests run as root the
// programs run as the postgres user, which owns the directory.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := newInstance(t)
	s.run("initdb", "-D", s.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	s.Start()
	t.Cleanup(func() { s.ctl("stop", "-m", "immediate") })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatalf("pgtest: connect to private server: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE DATABASE toolgate`); err != nil {
		t.Fatal(err)
	}
	return s
}

// NewStandby makes a hot standby of s, a read replica fed by streaming replication
// (pg_basebackup -R), on its own port, and starts it. It is stopped and removed at cleanup.
func (s *Server) NewStandby() *Server {
	s.t.Helper()
	st := newInstance(s.t)
	st.run("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(s.port), "-U", "postgres",
		"-D", st.data(), "-R", "-X", "stream", "-c", "fast", "--no-sync")
	st.Start()
	s.t.Cleanup(func() { st.ctl("stop", "-m", "immediate") })
	return st
}

// newInstance reserves a directory owned by the postgres user and a free loopback port.
func newInstance(t testing.TB) *Server {
	t.Helper()
	// Not t.TempDir: its parent directory is private to the test's user.
	dir, err := os.MkdirTemp("", "toolgate-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chown", "postgres:postgres", dir).CombinedOutput(); err != nil {
			t.Fatalf("pgtest: chown %s: %v: %s", dir, err, out)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return &Server{t: t, dir: dir, port: ln.Addr().(*net.TCPAddr).Port}
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// URL is the connection URL of database db on the instance.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// Start starts the instance and waits until it accepts connections.
func (s *Server) Start() {
	s.t.Helper()
	s.ctl("start", "-w", "-t", "60", "-l", filepath.Join(s.dir, "log"),
		"-o", "-p "+strconv.Itoa(s.port)+" -k "+s.dir+" -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50")
}

// Stop shuts the instance down in fast mode: open sessions are terminated, as by a restart.
func (s *Server) Stop() {
	s.t.Helper()
	s.ctl("stop", "-w", "-m", "fast")
}

func (s *Server) ctl(args ...string) {
	s.t.Helper()
	s.run("pg_ctl", append([]string{"-D", s.data()}, args...)...)
}

func (s *Server) run(prog string, args ...string) {
	s.t.Helper()
	path := filepath.Join(pgBin, prog)
	cmd := exec.Command(path, args...)
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		s.t.Fatalf("pgtest: %s %v: %v\n%s\n%s", prog, args, err, out, log)
	}
}
