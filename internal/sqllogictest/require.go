package sqllogictest

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// require checks a require record as DuckDB v1.4.4's runner does
// (CheckRequire): platform keywords, sizes, settings, or an extension.
func (r *runner) require(rec *Record, st *execState) error {
	args := rec.Args()
	what := strings.ToLower(args[0])
	unmet := func(format string, a ...any) error {
		return &skipFile{line: rec.Line, what: what, msg: "require " + strings.Join(args, " ") + ": " + fmt.Sprintf(format, a...)}
	}
	intArg := func() (int, error) {
		if len(args) != 2 {
			return 0, r.failf(rec, st, "require %s needs a number", what)
		}
		n, err := strconv.Atoi(args[1])
		if err != nil {
			return 0, r.failf(rec, st, "require %s: %q is not a number", what, args[1])
		}
		return n, nil
	}
	sizeArg := func() (uint64, error) {
		if len(args) != 2 {
			return 0, r.failf(rec, st, "require %s needs a size (e.g. 4gb)", what)
		}
		n, err := parseMemoryLimit(args[1])
		if err != nil {
			return 0, r.failf(rec, st, "require %s: %v", what, err)
		}
		return n, nil
	}
	setting := func(name string) (string, error) {
		v, ok := r.currentSetting(name)
		if !ok {
			return "", fmt.Errorf("cannot read the setting %s", name)
		}
		return v, nil
	}
	switch what {
	case "vector_size", "exact_vector_size", "block_size":
		n, err := intArg()
		if err != nil {
			return err
		}
		switch {
		case what == "vector_size" && standardVectorSize < n,
			what == "exact_vector_size" && standardVectorSize != n:
			return unmet("the vector size is %d", standardVectorSize)
		case what == "block_size" && defaultBlockSize != n:
			return unmet("the block size is %d", defaultBlockSize)
		}
		return nil
	case "windows", "mingw":
		if runtime.GOOS != "windows" {
			return unmet("not on Windows")
		}
		if what == "mingw" {
			return unmet("not a MinGW build")
		}
		return nil
	case "notwindows", "notmingw", "notmusl":
		if what == "notwindows" && runtime.GOOS == "windows" {
			return unmet("on Windows")
		}
		return nil
	case "64bit":
		if strconv.IntSize != 64 {
			return unmet("not a 64-bit build")
		}
		return nil
	case "longdouble":
		if !longDoubleWider() {
			return unmet("long double is not wider than double on this platform")
		}
		return nil
	case "ram":
		n, err := sizeArg()
		if err != nil {
			return err
		}
		have, ok := physicalMemory()
		if !ok {
			return unmet("the memory of this machine is unknown")
		}
		if have < n {
			return unmet("this machine has %d bytes of memory", have)
		}
		return nil
	case "disk_space":
		n, err := sizeArg()
		if err != nil {
			return err
		}
		have, ok := freeDiskSpace(".")
		if !ok {
			return unmet("the free disk space is unknown")
		}
		if have < n {
			return unmet("%d bytes are free", have)
		}
		return nil
	case "skip_reload", "noforcestorage", "no_alternative_verify", "nothreadsan", "strinline", "no_latest_storage",
		"no_vector_verification":
		return nil // this runner never forces reloads, storage, alternative or vector verification, or a thread sanitizer
	case "allow_unsigned_extensions":
		v, err := setting("allow_unsigned_extensions")
		if err != nil {
			return r.failf(rec, st, "require %s: %v", what, err)
		}
		if v != "true" {
			return unmet("allow_unsigned_extensions is %s (set it in Options.Settings)", v)
		}
		return nil
	case "no_extension_autoloading":
		if err := explanation(args[1:]); err != nil {
			return r.failf(rec, st, "require no_extension_autoloading: %v", err)
		}
		v, err := setting("autoload_known_extensions")
		if err != nil {
			return r.failf(rec, st, "require %s: %v", what, err)
		}
		if v != "false" {
			return unmet("autoload_known_extensions is %s", v)
		}
		return nil
	}
	name := what
	unavailable, err := r.loadExtension(name)
	if p, configured := r.opts.Extensions[name]; configured && err != nil {
		return r.failf(rec, st, "require %s: LOAD %s failed: %v", name, sqlQuote(p), errText(err))
	}
	if err != nil {
		return r.failf(rec, st, "require %s: loading it failed: %v", name, errText(err))
	}
	if unavailable != nil {
		return unmet("%v", unavailable)
	}
	if !slices.Contains(r.loaded, name) {
		r.loaded = append(r.loaded, name)
	}
	return nil
}

// explanation checks the quoted explanation of require
// no_extension_autoloading, which must start with EXPECTED or FIXME.
func explanation(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("needs an explanation string")
	}
	text := strings.Join(args, " ")
	if !strings.HasPrefix(text, `"`) {
		return fmt.Errorf("the explanation must be in double quotes")
	}
	text = strings.TrimPrefix(text, `"`)
	if !strings.HasPrefix(text, "EXPECTED") && !strings.HasPrefix(text, "FIXME") {
		return fmt.Errorf("the explanation string should begin with either 'EXPECTED' or 'FIXME'")
	}
	return nil
}

// longDoubleWider reports whether C's long double has more than 53 mantissa
// bits on this platform (DuckDB's require longdouble).
func longDoubleWider() bool {
	switch runtime.GOOS {
	case "windows":
		return false
	case "darwin", "ios":
		return runtime.GOARCH == "amd64"
	}
	switch runtime.GOARCH {
	case "amd64", "386", "arm64", "riscv64", "s390x", "ppc64le", "ppc64", "loong64", "mips64", "mips64le":
		return true
	}
	return false
}

// parseMemoryLimit parses a size as DuckDB's DBConfig::ParseMemoryLimit
// does: a number and a unit (b, kb/k, mb/m, gb/g, tb/t in powers of 1000,
// kib, mib, gib, tib in powers of 1024, or the unit spelled out).
func parseMemoryLimit(s string) (uint64, error) {
	if strings.HasPrefix(s, "-") || s == "null" || s == "none" {
		return math.MaxUint64, nil
	}
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == 'e' || s[i] == 'E' || s[i] == '-') {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q must have a number (e.g. 1GB)", s)
	}
	n, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %v", s, err)
	}
	unit := strings.ToLower(strings.TrimSpace(s[i:]))
	var mult float64
	switch unit {
	case "byte", "bytes", "b":
		mult = 1
	case "kilobyte", "kilobytes", "kb", "k":
		mult = 1e3
	case "megabyte", "megabytes", "mb", "m":
		mult = 1e6
	case "gigabyte", "gigabytes", "gb", "g":
		mult = 1e9
	case "terabyte", "terabytes", "tb", "t":
		mult = 1e12
	case "kib":
		mult = 1 << 10
	case "mib":
		mult = 1 << 20
	case "gib":
		mult = 1 << 30
	case "tib":
		mult = 1 << 40
	default:
		return 0, fmt.Errorf("unknown unit for memory: %q (expected: KB, MB, GB, TB for 1000^i units or KiB, MiB, GiB, TiB for 1024^i units)", unit)
	}
	return uint64(n * mult), nil
}
