//go:build linux

package sqllogictest

import "syscall"

// physicalMemory is the machine's memory (DuckDB's
// FileSystem::GetAvailableMemory: physical pages times the page size).
func physicalMemory() (uint64, bool) {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0, false
	}
	return uint64(si.Totalram) * uint64(si.Unit), true
}

// freeDiskSpace is the free space of the file system holding path
// (FileSystem::GetAvailableDiskSpace: free blocks times the block size).
func freeDiskSpace(path string) (uint64, bool) {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(path, &fs); err != nil {
		return 0, false
	}
	return fs.Bfree * uint64(fs.Frsize), true
}
