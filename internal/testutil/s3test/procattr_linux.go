//go:build linux

package s3test

import "syscall"

// sysProcAttr makes the kernel kill versitygw when the thread that started
// it exits (see startOnce: that thread lives as long as the test process).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// processGone reports whether no process has the given pid.
func processGone(pid int) bool {
	return syscall.Kill(pid, 0) == syscall.ESRCH
}
