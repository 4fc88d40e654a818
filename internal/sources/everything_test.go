package sources_test

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/mcptest"
	"github.com/toolgate/toolgate/internal/sources"
)

func TestSyncServerEverythingOverStdio(t *testing.T) {
	t.Parallel()
	path := mcptest.EverythingServer(t)
	ctx := context.Background()
	pool, rc := setup(t)
	src := createSource(t, pool, "everything", mcpclient.KindStdio, mcpclient.Config{Command: "node", Args: []string{path, "stdio"}}, false)
	commands := mcpclient.NewCommandPolicy([][]string{{"node", path, "stdio"}})
	rep, err := sources.Sync(ctx, pool, rc, src.ID, timeout, commands)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result.Created < 5 || len(rep.Skipped) != 0 {
		t.Fatalf("first sync: %+v skipped %+v", rep.Result, rep.Skipped)
	}
	echo, err := db.New(pool).GetToolByName(ctx, "everything__echo")
	if err != nil || echo.OriginalName != "echo" || echo.Description == "" {
		t.Fatalf("echo tool: %+v %v", echo, err)
	}
	again, err := sources.Sync(ctx, pool, rc, src.ID, timeout, commands)
	if err != nil {
		t.Fatal(err)
	}
	wantResult(t, again, 0, 0, 0, rep.Result.Created, 0)
}
