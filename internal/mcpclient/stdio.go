package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport runs a stdio MCP server so that it does not outlive its session or
// toolgate. It replaces the go-sdk's CommandTransport, which signals only the process it
// started: a server started through `npx` is npx → sh → node, and the node process would
// be left behind. Here the server runs in its own process group, and closing the session
// ends the whole group. If toolgate itself is killed (kill -9), the kernel kills the
// process it started (startProcess: Pdeathsig on Linux), and the rest of the group reads
// end-of-file on stdin, toolgate's end of which dies with toolgate: that is the MCP stdio
// signal to shut down, and reference servers exit on it (a server that ignores it and runs
// behind a wrapper such as npx survives; start such a server directly).
type stdioTransport struct {
	cmd *exec.Cmd
	// terminate is how long Close waits for the server after closing its stdin, and again
	// after SIGTERM, before SIGKILL.
	terminate time.Duration
	// budget counts the bytes read from the server's stdout (nil: not counted).
	budget *byteBudget
	// maxLine bounds one line (one message) of the server.
	maxLine int64
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	// Pipes made here rather than with StdinPipe/StdoutPipe: exec.Cmd.Wait, which runs as
	// soon as the server exits (startProcess), closes those, and the session could lose the
	// last bytes the server wrote before exiting.
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	t.cmd.Stdin, t.cmd.Stdout = stdinR, stdoutW
	exited, err := startProcess(t.cmd)
	// The server holds its own copies; toolgate keeps only its ends, so that the server
	// sees end-of-file when toolgate closes (or loses) stdin, and toolgate when the server
	// and all its children are gone.
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, err
	}
	p := &serverProcess{cmd: t.cmd, stdin: stdinW, stdout: stdoutR, exited: exited, terminate: t.terminate}
	out := serverLines{Reader: stdioLines(serverOutput{p: p, budget: t.budget}, t.maxLine)}
	return (&mcp.IOTransport{Reader: out, Writer: p, MaxLineLength: int(t.maxLine)}).Connect(ctx)
}

// serverProcess is a running stdio server: its stdin, its stdout and its exit.
type serverProcess struct {
	cmd       *exec.Cmd
	stdin     *os.File
	stdout    *os.File
	exited    <-chan error // receives exec.Cmd.Wait's result once the server has exited
	terminate time.Duration
}

// serverOutput reads the server's stdout. Closing it does nothing: the session closes the
// server through its stdin (serverProcess.Close), as the MCP stdio transport specifies;
// closing stdout first could kill a server with SIGPIPE in the middle of its last write.
// Its bytes count against the session's budget: a read past the budget of a listing fails,
// which ends the session.
type serverOutput struct {
	p      *serverProcess
	budget *byteBudget
}

func (o serverOutput) Read(b []byte) (int, error) {
	n, err := o.p.stdout.Read(b)
	if o.budget != nil {
		if berr := o.budget.count(n); berr != nil {
			return 0, berr
		}
	}
	return n, err
}
func (serverOutput) Close() error { return nil }

// serverLines is the server's output, line by line through trimDeepTools. Closing it does
// nothing, as closing serverOutput.
type serverLines struct{ io.Reader }

func (serverLines) Close() error { return nil }

func (p *serverProcess) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close shuts the server down as the MCP stdio transport asks: close its stdin, wait, then
// SIGTERM, then SIGKILL. The signals go to the server's whole process group, and once the
// server has exited whatever is left of its group is killed, so that no child of it
// outlives the session. It returns the server's exit error, as exec.Cmd.Wait reports it.
func (p *serverProcess) Close() error {
	defer p.stdout.Close()
	stdinErr := p.stdin.Close()
	wait := func() (bool, error) {
		select {
		case err := <-p.exited:
			return true, err
		case <-time.After(p.terminate):
			return false, nil
		}
	}
	exited, err := wait()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if exited {
			break
		}
		p.signalGroup(sig)
		exited, err = wait()
	}
	if !exited {
		return fmt.Errorf("stdio MCP server (pid %d) still running after SIGKILL", p.cmd.Process.Pid)
	}
	// What is left of the group once the server has exited (a wrapper's children). While
	// any member lives the group's id, the server's pid, stays reserved; when none does the
	// kill finds no group.
	p.signalGroup(syscall.SIGKILL)
	if stdinErr != nil && !errors.Is(stdinErr, os.ErrClosed) {
		return errors.Join(err, stdinErr)
	}
	return err
}

// signalGroup signals the server's process group (startProcess makes the server its
// leader). ESRCH, an empty group, is what a clean exit leaves.
func (p *serverProcess) signalGroup(sig syscall.Signal) {
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
}
