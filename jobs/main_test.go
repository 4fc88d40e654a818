package jobs_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/internal/catalog"
	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/testfactory"
)

func TestMain(m *testing.M) {
	mcptest.RunIfChild()
	os.Exit(m.Run())
}

const timeout = 20 * time.Second

func mcpTool(name, desc, schema string) catalog.Tool {
	return catalog.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema)}
}

const schemaQ = `{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer"}},"required":["q"]}`

func createSource(t *testing.T, pool *pgxpool.Pool, name string, kind db.SourceKind, cfg mcpclient.Config, review bool) db.Source {
	return testfactory.MCPSource(context.Background(), t, pool, name, &testfactory.SourceOpts{Kind: kind, Config: cfg, ReviewMode: review})
}

func setConfig(t *testing.T, pool *pgxpool.Pool, src db.Source, cfg mcpclient.Config) {
	raw, _ := json.Marshal(cfg)
	if _, err := db.New(pool).UpdateSourceSettings(context.Background(), db.UpdateSourceSettingsParams{
		ID: src.ID, Config: raw, SyncInterval: src.SyncInterval, ReviewMode: src.ReviewMode,
	}); err != nil {
		t.Fatal(err)
	}
}
