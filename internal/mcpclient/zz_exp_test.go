package mcpclient_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/mcptest"
)

func TestZZDeep(t *testing.T) {
	for _, depth := range []int{5000, 9990, 10001} {
		deep := strings.Repeat(`{"items":`, depth) + `{}` + strings.Repeat(`}`, depth)
		srv := mcptest.NewRawHTTP(t, func(w http.ResponseWriter, r *http.Request, req mcptest.RawRequest) {
			mcptest.WriteResult(w, req.ID, json.RawMessage(`{"tools":[{"name":"ok","inputSchema":{"type":"object"}},{"name":"deep","inputSchema":{"type":"object","properties":{"a":`+deep+`}}}]}`))
		})
		got, err := mcpclient.List(context.Background(), mcpclient.KindHTTP, srv.Config(), 20*time.Second, mcpclient.Options{})
		t.Logf("%d: %d tools, err %v", depth, len(got), err)
		for _, g := range got {
			t.Logf("  %s valid=%v", g.Name, g.Validate())
		}
	}
}
