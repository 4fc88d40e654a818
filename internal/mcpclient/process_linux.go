package mcpclient

import (
	"os/exec"
	"runtime"
	"syscall"
)

// startProcess starts cmd as the leader of its own process group, with the kernel set to
// SIGKILL it when toolgate dies (Pdeathsig), so that a killed toolgate leaves no server
// running. It returns a channel that receives cmd.Wait's result once the process exits.
//
// Pdeathsig fires when the OS thread that forked the child exits, not the process: Go may
// end a thread while toolgate runs (a goroutine that exits locked to its thread takes the
// thread with it), which would kill a healthy server. So the fork happens on a goroutine
// locked to its thread, and that goroutine keeps the thread, waiting for the process, for
// as long as the process lives: one parked thread per running stdio server.
func startProcess(cmd *exec.Cmd) (<-chan error, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	exited := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Once the process has exited the thread may serve others again.
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return exited, nil
}
