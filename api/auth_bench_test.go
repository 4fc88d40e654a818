package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/internal/auth"
	"github.com/toolgate/toolgate/internal/pgtest"
)

// BenchmarkAuth measures what authentication adds to a request that does nothing else:
// open mode (no database work) against a key (lookup by prefix, hash compare, and the
// rate-limit upsert that also refreshes last_used_at).
func BenchmarkAuth(b *testing.B) {
	pool := pgtest.NewPool(b)
	keys := auth.NewKeys(pool, time.Now)
	_, limited, err := keys.Create(context.Background(), auth.Spec{Name: "bench", Scope: auth.ScopeSearch, RatePerMin: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	noop := func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }
	for _, bc := range []struct {
		name string
		open bool
		key  string
	}{
		{"open", true, ""},
		{"key", false, limited},
	} {
		e := api.New(api.Deps{Pool: pool, Logger: slog.New(slog.DiscardHandler), Keys: keys, Open: bc.open})
		e.POST("/search", noop)
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "http://localhost/search", nil)
				if bc.key != "" {
					req.Header.Set("Authorization", "Bearer "+bc.key)
				}
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, req)
				if rec.Code != http.StatusNoContent {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
		b.Run(bc.name+"-parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest(http.MethodPost, "http://localhost/search", nil)
					if bc.key != "" {
						req.Header.Set("Authorization", "Bearer "+bc.key)
					}
					rec := httptest.NewRecorder()
					e.ServeHTTP(rec, req)
					if rec.Code != http.StatusNoContent {
						b.Errorf("status %d", rec.Code)
						return
					}
				}
			})
		})
	}
}
