package console_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/embed"
	"github.com/toolgate/toolgate/internal/memory"
)

// TestConsoleShowsWhatAToolLearned: labelled searches, swept into memories as the
// memory_sweep job does, show on the tool's page with their tenant, query, count and time;
// Forget removes them after a confirmation.
func TestConsoleShowsWhatAToolLearned(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	st := newStack(t, true)
	ctx := context.Background()
	st.label(t, "what is the weather in Paris", 6)
	mem := &memory.Service{Pool: st.pool, Embedder: embed.NewLocal(384), Logger: slog.New(slog.DiscardHandler)}
	if stats, err := mem.Sweep(ctx); err != nil || stats.Added == 0 {
		t.Fatalf("sweep: %+v %v", stats, err)
	}
	b := newBrowser(t)

	b.open(st.url+"/ui/tool/acme__get_weather", "table.memories")
	rows := eval[[]string](b, `[...document.querySelectorAll('table.memories tbody tr')].map(r => [...r.cells].map(c => c.textContent).join(' | '))`)
	if len(rows) != 1 || !strings.HasPrefix(rows[0], "operator or global | – | what is the weather in Paris | 3 | 20") {
		t.Errorf("memories shown: %q", rows)
	}
	b.settled()
	b.shot("tool-learned")

	b.click("#forget-memories")
	b.wait(`//span[@class="question"][contains(., "Remove the 1 memories of acme__get_weather, of every tenant?")]`)
	b.click("button.confirm")
	b.wait(`//div[@id="memories-status"]/div[contains(., "acme__get_weather forgot 1 memory.")]`)
	b.wait(`//div[@id="memories"]/p[contains(., "Nothing learned yet")]`)
	var left int
	if err := st.pool.QueryRow(ctx, `SELECT count(*) FROM tool_memories m JOIN tools t ON t.id = m.tool_id WHERE t.name = 'acme__get_weather'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d memories left after Forget (%v)", left, err)
	}

	// A tool that learned nothing says so, and offers nothing to forget.
	b.open(st.url+"/ui/tool/acme__send_email", "#memories p.empty")
	if n := eval[int](b, `document.querySelectorAll('#forget-memories').length`); n != 0 {
		t.Error("Forget offered for a tool without memories")
	}
}
