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
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	src, err := db.New(pool).CreateSource(context.Background(), db.CreateSourceParams{Name: name, Kind: kind, Config: raw, ReviewMode: review})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func setConfig(t *testing.T, pool *pgxpool.Pool, src db.Source, cfg mcpclient.Config) {
	raw, _ := json.Marshal(cfg)
	if _, err := db.New(pool).UpdateSourceSettings(context.Background(), db.UpdateSourceSettingsParams{
		ID: src.ID, Config: raw, SyncInterval: src.SyncInterval, ReviewMode: src.ReviewMode,
	}); err != nil {
		t.Fatal(err)
	}
}
