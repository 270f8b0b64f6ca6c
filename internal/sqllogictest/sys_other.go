//go:build !linux

package sqllogictest

// physicalMemory is unknown off Linux: require ram is unmet.
func physicalMemory() (uint64, bool) { return 0, false }

// freeDiskSpace is unknown off Linux: require disk_space is unmet.
func freeDiskSpace(string) (uint64, bool) { return 0, false }
