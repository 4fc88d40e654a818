// Package config reads toolgate's settings from the environment. Every setting has a safe
// default; a setting that cannot be parsed fails with an *Error naming it.
package config

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultDatabaseURL is the cluster made by scripts/pg-setup.sh.
const DefaultDatabaseURL = "postgres://postgres@127.0.0.1:55432/toolgate?sslmode=disable"

// Role selects what `toolgate serve` runs.
type Role string

const (
	RoleAll    Role = "all"    // HTTP API and River workers
	RoleAPI    Role = "api"    // HTTP API only; jobs are enqueued, never worked
	RoleWorker Role = "worker" // River workers only, plus /healthz and /readyz
)

// Config is every setting of toolgate.
type Config struct {
	DatabaseURL     string        // DATABASE_URL
	ListenAddr      string        // LISTEN_ADDR
	Role            Role          // TOOLGATE_ROLE
	AutoMigrate     bool          // TOOLGATE_AUTO_MIGRATE
	ShutdownTimeout time.Duration // TOOLGATE_SHUTDOWN_TIMEOUT
	Workers         int           // TOOLGATE_WORKERS
	LogLevel        slog.Level    // TOOLGATE_LOG_LEVEL
	LogFormat       string        // TOOLGATE_LOG_FORMAT
	SearchLogKeep   time.Duration // TOOLGATE_SEARCH_LOG_RETENTION
	Open            bool          // TOOLGATE_OPEN: no API key needed, every caller is admin
	Planner         string        // TOOLGATE_PLANNER: heuristic or llm, for requests that ask for a plan
	PlanTimeout     time.Duration // TOOLGATE_PLAN_TIMEOUT: bound of one LLM planning call
	PlanVocabulary  string        // TOOLGATE_PLAN_VOCABULARY: JSON file of entity surface → name for the heuristic planner
	Reranker        string        // TOOLGATE_RERANKER: none, http or llm
	RerankURL       string        // TOOLGATE_RERANK_URL: the full /rerank endpoint (http reranker)
	RerankKey       string        // TOOLGATE_RERANK_KEY: bearer token of the rerank API
	RerankModel     string        // TOOLGATE_RERANK_MODEL: model sent to cohere and jina
	RerankStyle     string        // TOOLGATE_RERANK_STYLE: cohere, jina or tei
	RerankTopN      int           // TOOLGATE_RERANK_TOP_N: fused candidates sent to the reranker
	RerankTimeout   time.Duration // TOOLGATE_RERANK_TIMEOUT: bound of one rerank call
}

// Error is a setting that cannot be used.
type Error struct {
	Setting string
	Value   string
	Reason  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("invalid %s=%q: %s", e.Setting, e.Value, e.Reason)
}

// Load reads the settings through getenv (os.Getenv in production).
func Load(getenv func(string) string) (Config, error) {
	r := reader{getenv: getenv}
	c := Config{
		DatabaseURL:     r.str("DATABASE_URL", DefaultDatabaseURL),
		ListenAddr:      r.str("LISTEN_ADDR", ":8080"),
		Role:            Role(r.str("TOOLGATE_ROLE", string(RoleAll))),
		AutoMigrate:     r.boolean("TOOLGATE_AUTO_MIGRATE", true),
		ShutdownTimeout: r.duration("TOOLGATE_SHUTDOWN_TIMEOUT", 30*time.Second),
		Workers:         r.integer("TOOLGATE_WORKERS", 10, 1, 1000),
		LogFormat:       r.str("TOOLGATE_LOG_FORMAT", "json"),
		SearchLogKeep:   r.duration("TOOLGATE_SEARCH_LOG_RETENTION", 90*24*time.Hour),
		Open:            r.boolean("TOOLGATE_OPEN", false),
		Planner:         r.str("TOOLGATE_PLANNER", "heuristic"),
		PlanTimeout:     r.duration("TOOLGATE_PLAN_TIMEOUT", 3*time.Second),
		PlanVocabulary:  r.str("TOOLGATE_PLAN_VOCABULARY", ""),
		Reranker:        r.str("TOOLGATE_RERANKER", "none"),
		RerankURL:       r.str("TOOLGATE_RERANK_URL", ""),
		RerankKey:       r.str("TOOLGATE_RERANK_KEY", ""),
		RerankModel:     r.str("TOOLGATE_RERANK_MODEL", ""),
		RerankStyle:     r.str("TOOLGATE_RERANK_STYLE", "cohere"),
		RerankTopN:      r.integer("TOOLGATE_RERANK_TOP_N", 30, 1, 1000),
		RerankTimeout:   r.duration("TOOLGATE_RERANK_TIMEOUT", 2*time.Second),
	}
	c.LogLevel = r.level("TOOLGATE_LOG_LEVEL", slog.LevelInfo)
	if r.err != nil {
		return c, r.err
	}
	return c, c.Validate()
}

// Validate checks settings that may also have been changed by flags.
func (c Config) Validate() error {
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return &Error{"DATABASE_URL", redact(c.DatabaseURL), "want postgres://user@host:port/db"}
	}
	if _, _, err := net.SplitHostPort(c.ListenAddr); err != nil {
		return &Error{"LISTEN_ADDR", c.ListenAddr, "want host:port or :port"}
	}
	switch c.Role {
	case RoleAll, RoleAPI, RoleWorker:
	default:
		return &Error{"TOOLGATE_ROLE", string(c.Role), "want all, api or worker"}
	}
	switch c.LogFormat {
	case "json", "text":
	default:
		return &Error{"TOOLGATE_LOG_FORMAT", c.LogFormat, "want json or text"}
	}
	if c.SearchLogKeep < 24*time.Hour {
		return &Error{"TOOLGATE_SEARCH_LOG_RETENTION", c.SearchLogKeep.String(), "must be at least 24h"}
	}
	if err := c.validatePlanRerank(); err != nil {
		return err
	}
	return nil
}

// redact hides a password in a database URL.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// reader parses settings, keeping the first error.
type reader struct {
	getenv func(string) string
	err    error
}

func (r *reader) fail(name, value, reason string) {
	if r.err == nil {
		r.err = &Error{name, value, reason}
	}
}

func (r *reader) str(name, def string) string {
	if v := strings.TrimSpace(r.getenv(name)); v != "" {
		return v
	}
	return def
}

func (r *reader) boolean(name string, def bool) bool {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.fail(name, v, "want true or false")
	}
	return b
}

func (r *reader) integer(name string, def, min, max int) int {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		r.fail(name, v, fmt.Sprintf("want an integer from %d to %d", min, max))
	}
	return n
}

func (r *reader) float(name string, def, min, max float64) float64 {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < min || f > max {
		r.fail(name, v, fmt.Sprintf("want a number from %g to %g", min, max))
	}
	return f
}

func (r *reader) duration(name string, def time.Duration) time.Duration {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return def
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		r.fail(name, v, "want a positive duration such as 30s, 5m or 90d")
	}
	return d
}

func (r *reader) level(name string, def slog.Level) slog.Level {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		return def
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(v)); err != nil {
		r.fail(name, v, "want debug, info, warn or error")
	}
	return l
}
