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
// a row's Forget removes that memory alone, Forget what it learned the rest, each after a
// confirmation.
func TestConsoleShowsWhatAToolLearned(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	t.Parallel()
	st := newStack(t, true)
	ctx := context.Background()
	st.label(t, "weather forecast for Paris tomorrow", 2)
	st.label(t, "what is the weather in Paris", 6)
	mem := &memory.Service{Pool: st.pool, Embedder: embed.NewLocal(384), Logger: slog.New(slog.DiscardHandler)}
	if stats, err := mem.Sweep(ctx); err != nil || stats.Added == 0 {
		t.Fatalf("sweep: %+v %v", stats, err)
	}
	b := newBrowser(t)

	b.open(st.url+"/ui/tool/acme__get_weather", "table.memories")
	rows := eval[[]string](b, `[...document.querySelectorAll('table.memories tbody tr')].map(r => [...r.cells].map(c => c.textContent).join(' | '))`)
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "operator or global | – | what is the weather in Paris | 3 | 20") ||
		!strings.HasPrefix(rows[1], "operator or global | – | weather forecast for Paris tomorrow | 1 | 20") {
		t.Errorf("memories shown: %q", rows)
	}
	b.settled()
	b.shot("tool-learned")

	b.click("table.memories tbody tr:nth-child(2) button.forget-memory")
	b.wait(`//span[@class="question"][contains(., 'Remove the memory "weather forecast for Paris tomorrow" of the operator and global?')]`)
	b.click("button.confirm")
	b.wait(`//div[@id="memories-status"]/div[contains(., 'acme__get_weather forgot "weather forecast for Paris tomorrow" (1 memory).')]`)
	b.wait(`//table[contains(@class, "memories")]/tbody[count(tr) = 1]`)
	var kept []string
	if err := st.pool.QueryRow(ctx, `SELECT array_agg(m.query) FROM tool_memories m JOIN tools t ON t.id = m.tool_id
		WHERE t.name = 'acme__get_weather'`).Scan(&kept); err != nil || len(kept) != 1 || kept[0] != "what is the weather in Paris" {
		t.Errorf("memories left after one was forgotten: %q (%v)", kept, err)
	}

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
