//go:build unix && !linux

package devenv

import "syscall"

// childProcAttr puts a server in its own process group, so Stop can signal
// all of it.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
