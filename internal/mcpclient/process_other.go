//go:build !linux

package mcpclient

import (
	"os/exec"
	"syscall"
)

// startProcess starts cmd as the leader of its own process group and returns a channel
// that receives cmd.Wait's result once the process exits. Outside Linux there is no parent
// death signal: a killed toolgate leaves the server to notice its stdin's end-of-file.
func startProcess(cmd *exec.Cmd) (<-chan error, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return exited, nil
}
