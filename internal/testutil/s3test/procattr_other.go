//go:build !linux

package s3test

import "syscall"

// sysProcAttr: no parent-death signal outside Linux; Main/Stop must stop
// the server.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// processGone cannot tell portably; stale directories are kept.
func processGone(pid int) bool { return false }
