package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/internal/testfactory"
)

// lockedBuffer is a bytes.Buffer safe for one writer and one reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The demo's enrichment log: where it starts, how it goes, and that it is done (then the
// watch ends).
func TestWatchEnrichmentLogsProgressUntilDone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	_, res := testfactory.Catalog(ctx, t, pool, "demo", []catalog.Tool{
		testfactory.Tool("quote", "Stock quote."), testfactory.Tool("news", "Company news."),
		testfactory.Tool("rates", "Interest rates."), testfactory.Tool("fx", "Exchange rates."),
	}, nil)
	enricher := testfactory.LocalEnricher(pool, 1)
	testfactory.Enrich(ctx, t, enricher, res.Changed[:1]...)

	var out lockedBuffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	done := make(chan struct{})
	go func() {
		defer close(done)
		watchEnrichment(ctx, log, pool, "demo", 10*time.Millisecond)
	}()
	waitFor(t, "the first progress line", time.Minute, func() bool { return strings.Contains(out.String(), "enrichment started") })
	testfactory.Enrich(ctx, t, enricher, res.Changed[1:2]...)
	waitFor(t, "a progress line with a rate", time.Minute, func() bool { return strings.Contains(out.String(), "tools_per_s=") })
	testfactory.Enrich(ctx, t, enricher, res.Changed[2:]...)
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("the watch did not end when every tool was embedded:\n%s", out.String())
	}
	log1 := out.String()
	for _, want := range []string{
		`msg="enrichment started: tools are searchable by keyword now, by meaning as they are embedded" source=demo embedded=1 enriched=1 tools=4`,
		`msg=enrichment source=demo embedded=2 enriched=2 tools=4 tools_per_s=`,
		`msg="enrichment done" source=demo tools=4 seconds=`,
	} {
		if !strings.Contains(log1, want) {
			t.Errorf("log lacks %q:\n%s", want, log1)
		}
	}

	// Started again on an enriched catalog, it says so once and ends.
	var again lockedBuffer
	watchEnrichment(ctx, slog.New(slog.NewTextHandler(&again, nil)), pool, "demo", time.Hour)
	if got := again.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, `msg="enrichment done: every tool has its vectors" source=demo tools=4`) {
		t.Errorf("on an enriched catalog: %s", got)
	}
}

// TOOLGATE_LOG_FORMAT=auto logs JSON lines to what is not a terminal (a pipe's buffer, a
// file); text and json are what they say.
func TestLogFormatAutoIsJSONOffATerminal(t *testing.T) {
	t.Parallel()
	file, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var buf bytes.Buffer
	for _, tc := range []struct {
		format string
		w      io.Writer
		json   bool
	}{
		{config.LogFormatAuto, &buf, true},
		{config.LogFormatAuto, file, true},
		{"text", &buf, false},
		{"json", &buf, true},
	} {
		buf.Reset()
		newLogger(config.Config{LogFormat: tc.format, LogLevel: slog.LevelInfo}, tc.w).Info("hello")
		got := buf.String()
		if tc.w == file {
			b, err := os.ReadFile(file.Name())
			if err != nil {
				t.Fatal(err)
			}
			got = string(b)
		}
		if isJSON := strings.HasPrefix(got, "{"); isJSON != tc.json || !strings.Contains(got, "hello") {
			t.Errorf("format %s to %T: %q", tc.format, tc.w, got)
		}
	}
}
