package devenv

import "syscall"

// childProcAttr puts a server in its own process group, so Stop can signal
// all of it, and has the kernel stop it if this process dies first.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
