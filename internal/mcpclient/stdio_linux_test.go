package mcpclient_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/mcpclient"
	"github.com/toolgate/toolgate/internal/mcptest"
)

// waitUntil polls cond every 20 ms for up to 10 s (a generous bound, not a timing assertion).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestCloseEndsTheServersChildren: a server started through a wrapper leaves a child behind
// that ignores stdin (as node under npx can); closing the session ends it too.
func TestCloseEndsTheServersChildren(t *testing.T) {
	t.Parallel()
	cfg := mcptest.NewStdio(t, sampleTools(2), mcptest.Normal, 0).Config()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	cfg.Env["CHILD_PID_FILE"] = pidFile
	cfg.Args = []string{"-c", `sleep 300 & echo $! > "$CHILD_PID_FILE"; exec "$0"`, cfg.Command}
	cfg.Command = "/bin/sh"
	ctx := context.Background()
	s, err := mcpclient.Connect(ctx, mcpclient.KindStdio, cfg, mcpclient.Options{Commands: mcpclient.NewCommandPolicyOf(
		mcpclient.AllowedCommand{Words: []string{"/bin/sh"}, Env: append([]string{"CHILD_PID_FILE"}, mcptest.EnvNames...)})})
	if err != nil {
		t.Fatal(err)
	}
	if tools, err := s.ListTools(ctx); err != nil || len(tools) != 2 {
		t.Fatalf("list: %d tools, %v", len(tools), err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || !mcptest.Alive(child) {
		t.Fatalf("the server's child %q is not running (%v)", data, err)
	}
	_ = s.Close() // the server exits on its own: no error to check
	waitUntil(t, fmt.Sprintf("the server's child %d to end", child), func() bool { return !mcptest.Alive(child) })
}

// TestServerOutlivesTheThreadThatStartedIt: the parent death signal follows the OS thread
// that forked the server. A session opened from a goroutine whose thread then ends (a
// goroutine exiting while locked to its thread takes the thread with it) must keep its server.
func TestServerOutlivesTheThreadThatStartedIt(t *testing.T) {
	t.Parallel()
	cfg := mcptest.NewStdio(t, sampleTools(3), mcptest.Normal, 0).Config()
	ctx := context.Background()
	type opened struct {
		s   *mcpclient.Session
		tid int
		err error
	}
	connect := func(res chan<- opened) {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		s, err := mcpclient.Connect(ctx, mcpclient.KindStdio, cfg, mcpclient.Options{Commands: mcptest.Commands()})
		res <- opened{s, syscall.Gettid(), err}
	}
	res := make(chan opened, 1)
	go func() {
		runtime.LockOSThread()
		if syscall.Gettid() != syscall.Getpid() {
			connect(res)
			return
		}
		// A goroutine exiting locked to the main thread parks that thread instead of ending
		// it: hold the main thread here while another thread connects.
		defer runtime.UnlockOSThread()
		inner := make(chan opened, 1)
		go connect(inner)
		res <- <-inner
	}()
	o := <-res
	if o.err != nil {
		t.Fatal(o.err)
	}
	defer o.s.Close()
	waitUntil(t, "the goroutine's thread to end", func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", o.tid))
		return os.IsNotExist(err)
	})
	if tools, err := o.s.ListTools(ctx); err != nil || len(tools) != 3 {
		t.Fatalf("after the thread ended: %d tools, %v", len(tools), err)
	}
}
