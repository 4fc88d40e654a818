package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/db"
	"github.com/toolgate/toolgate/internal/mcpclient"
)

// A connection attempt gets the configured connect bound when the call's own deadline is
// further away, and the call's deadline when that is nearer.
func TestUpstreamConnectTimeoutIsTheSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		connect, call    time.Duration
		wantMin, wantMax time.Duration
	}{
		{"setting nearer", 45 * time.Second, time.Hour, 44 * time.Second, 45 * time.Second},
		{"call nearer", time.Hour, 50 * time.Second, 49 * time.Second, 50 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newUpstreamPool(1, mcpclient.Options{}, tc.connect)
			var left time.Duration
			refused := errors.New("refused")
			p.connect = func(ctx context.Context, _ string, _ db.SourceKind, _ json.RawMessage) (*mcpclient.Session, error) {
				deadline, ok := ctx.Deadline()
				if !ok {
					t.Fatal("connect without a deadline")
				}
				left = time.Until(deadline)
				return nil, refused
			}
			ctx, cancel := context.WithTimeout(context.Background(), tc.call)
			defer cancel()
			_, err := p.call(ctx, "src", mcpclient.KindHTTP, json.RawMessage(`{"url":"http://127.0.0.1:1/mcp"}`), "t", nil)
			var ue *UpstreamError
			if !errors.As(err, &ue) || !ue.Unreachable {
				t.Fatalf("err %v, want an unreachable UpstreamError", err)
			}
			if left <= tc.wantMin || left > tc.wantMax {
				t.Fatalf("connect had %s, want (%s, %s]", left, tc.wantMin, tc.wantMax)
			}
		})
	}
}
