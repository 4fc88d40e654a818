package main

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/toolgate/toolgate/internal/postgres"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/tracing"
)

// startTracing sets env.tracing from TOOLGATE_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT
// (off when neither is set) and returns the function flushing it at exit.
func startTracing(ctx context.Context, env *cliEnv) (func(), error) {
	version := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	tp, err := tracing.New(ctx, env.cfg.OTLPEndpoint, "toolgate", version)
	if err != nil {
		return nil, err
	}
	env.tracing = tp
	if tp.Enabled() {
		env.log.Info("tracing on", "otlp_endpoint", env.cfg.OTLPEndpoint)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			env.log.Warn("flush traces", "err", err)
		}
	}, nil
}

// tracer is the process's tracing provider: the disabled one before startTracing.
func (env *cliEnv) tracer() *tracing.Provider {
	if env.tracing == nil {
		return tracing.Disabled()
	}
	return env.tracing
}

// spanTracer starts toolgate's own spans (provider calls, MCP proxying); nil when tracing
// is off, so that those calls carry no tracing cost.
func (env *cliEnv) spanTracer() *tracing.Tracer {
	if !env.tracer().Enabled() {
		return nil
	}
	return tracing.NewTracer(env.tracer())
}

// providerObserver records model provider calls in the process's metrics and traces; nil
// when there are neither.
func (env *cliEnv) providerObserver() *provider.Observer {
	t := env.spanTracer()
	if env.metrics == nil && t == nil {
		return nil
	}
	return &provider.Observer{Metrics: env.metrics, Tracer: t}
}

// poolOptions sizes a pool by TOOLGATE_DB_MAX_CONNS and traces its queries when tracing is on.
func poolOptions(env *cliEnv) []postgres.Option {
	return []postgres.Option{postgres.WithMaxConns(env.cfg.DBMaxConns), postgres.WithQueryTracer(env.tracer().SQLTracer())}
}
