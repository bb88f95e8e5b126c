//go:build unix

package devenv

import "syscall"

// renice lowers the CPU priority of every process of the process group pgid
// (a server started with childProcAttr) by n; on Linux that is every thread,
// and threads started later inherit it.
func renice(pgid, n int) error { return syscall.Setpriority(syscall.PRIO_PGRP, pgid, n) }
