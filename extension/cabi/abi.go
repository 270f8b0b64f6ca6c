package cabi

/*
#cgo CFLAGS: -I${SRCDIR}/../../cshim -I${SRCDIR}
#include "export.h"
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/moraine-go/moraine/attach"
	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/extension/internal/codes"
	"github.com/moraine-go/moraine/extension/internal/sqlfn"
	"github.com/moraine-go/moraine/extension/internal/storage"
)

// setError fills *err (when not NULL) and returns the code. The message is
// C.malloc'ed; moraine_error_free releases it.
func setError(cerr *C.moraine_error, err error) C.int32_t {
	code := codes.Of(err)
	if cerr != nil {
		cerr.code = C.int32_t(code)
		cerr.message = nil
		if err != nil {
			cerr.message = C.CString(codes.Message(err))
		}
	}
	return C.int32_t(code)
}

func invalidf(format string, args ...any) error {
	return &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf(format, args...)}
}

// goStr copies a C string; NULL and "" both read as "".
func goStr(s C.moraine_cstr) string {
	if s == nil {
		return ""
	}
	return C.GoString((*C.char)(unsafe.Pointer(s)))
}

// attachedCatalog is what a moraine_catalog handle holds: the attach and
// the storage extension's view of it.
type attachedCatalog struct {
	*attach.Attached
	lake *storage.Lake
	key  string // what it is shared under (shared.go)
}

//export moraine_error_free
func moraine_error_free(err *C.moraine_error) {
	defer codes.Guard(func(error) {})
	if err == nil {
		return
	}
	if err.message != nil {
		C.free(unsafe.Pointer(err.message))
	}
	err.message = nil
	err.code = 0
}

//export moraine_attach
func moraine_attach(path C.moraine_cstr, s3 C.moraine_s3_config_cptr, readOnly C.bool, dataPath C.moraine_cstr,
	flushIntervalMS C.uint64_t, checkpoint C.moraine_cstr, out *C.moraine_catalog, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	return moraine_attach_with_commit_log(path, s3, readOnly, dataPath, flushIntervalMS, checkpoint, nil, out, cerr)
}

//export moraine_attach_with_commit_log
func moraine_attach_with_commit_log(path C.moraine_cstr, s3 C.moraine_s3_config_cptr, readOnly C.bool, dataPath C.moraine_cstr,
	flushIntervalMS C.uint64_t, checkpoint C.moraine_cstr, commitLog C.moraine_commit_log_options_cptr,
	out *C.moraine_catalog, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if out != nil {
		*out = 0
	}
	if path == nil {
		return setError(cerr, invalidf("moraine_attach: path is NULL"))
	}
	if out == nil {
		return setError(cerr, invalidf("moraine_attach: out is NULL"))
	}
	cfg, key, err := abiConfig(goStr(path), s3, bool(readOnly), goStr(dataPath), uint64(flushIntervalMS), goStr(checkpoint), commitLog)
	if err != nil {
		return setError(cerr, err)
	}
	a, err := acquire(key, func() (*attach.Attached, error) { return cfg.Open(context.Background()) })
	if err != nil {
		if core.NeedsCommitLog(err) && !core.CommitLogRegistered() {
			err = &core.Error{Kind: core.KindOf(err), Err: err,
				Msg: "this is the single-writer build of the extension and the lake is on a commit log: load the commit-log build, moraine_commitlog, in a fresh process (INSTALL moraine_commitlog FROM '<repository>'; LOAD moraine_commitlog)"}
		}
		return setError(cerr, err)
	}
	*out = C.moraine_catalog(newHandle(a))
	return setError(cerr, nil)
}

// commitLogOptionsV1Size is the size of the first version of
// moraine_commit_log_options: every field up to wal_store; version 2 adds
// the host's option list and the flags.
var (
	commitLogOptionsV1Size = uint32(unsafe.Offsetof(C.moraine_commit_log_options{}.wal_store) + unsafe.Sizeof(C.moraine_commit_log_options{}.wal_store))
	commitLogOptionsV2Size = uint32(unsafe.Offsetof(C.moraine_commit_log_options{}.flags) + unsafe.Sizeof(C.moraine_commit_log_options{}.flags))
)

// maxOptions bounds commit_log->option_count (a sanity limit on what the
// host claims; there are a few dozen attach options).
const maxOptions = 1 << 16

// abiConfig turns the C arguments into attach options and parses them, so
// the C ABI and SQL follow the same rules and messages.
func abiConfig(path string, s3 C.moraine_s3_config_cptr, readOnly bool, dataPath string, flushMS uint64,
	checkpoint string, cl C.moraine_commit_log_options_cptr) (*attach.Config, string, error) {
	var opts []attach.Option
	add := func(name string, v any) { opts = append(opts, attach.Option{Name: name, Value: v}) }
	if readOnly {
		add("READ_ONLY", true)
	}
	if dataPath != "" {
		add("DATA_PATH", dataPath)
	}
	switch flushMS {
	case 0:
	case ^uint64(0):
		add("FLUSH_INTERVAL_MS", int64(0))
	default:
		add("FLUSH_INTERVAL_MS", flushMS)
	}
	if checkpoint != "" {
		add("CHECKPOINT", checkpoint)
	}
	walStore := ""
	leaveEmpty := false
	if cl != nil {
		if uint32(cl.size) < commitLogOptionsV1Size {
			return nil, "", invalidf("moraine_attach_with_commit_log: commit_log->size is %d; set it to sizeof(moraine_commit_log_options) (at least %d)", uint32(cl.size), commitLogOptionsV1Size)
		}
		if uint32(cl.size) >= commitLogOptionsV2Size {
			if n := uint64(cl.option_count); n > maxOptions {
				return nil, "", invalidf("moraine_attach_with_commit_log: commit_log->option_count %d is too many (at most %d)", n, maxOptions)
			} else if n > 0 {
				if cl.options == nil {
					return nil, "", invalidf("moraine_attach_with_commit_log: commit_log->options is NULL with option_count %d", n)
				}
				for i, o := range unsafe.Slice(cl.options, int(n)) {
					name := goStr(o.name)
					if name == "" {
						return nil, "", invalidf("moraine_attach_with_commit_log: option %d has no name", i)
					}
					v, err := optionValue(name, (*C.moraine_value)(unsafe.Pointer(o.value)))
					if err != nil {
						return nil, "", err
					}
					add(name, v)
				}
			}
			if unknown := uint32(cl.flags) &^ C.MORAINE_ATTACH_LEAVE_EMPTY; unknown != 0 {
				return nil, "", invalidf("moraine_attach_with_commit_log: unknown flags %#x (accepted: MORAINE_ATTACH_LEAVE_EMPTY)", unknown)
			}
			leaveEmpty = uint32(cl.flags)&C.MORAINE_ATTACH_LEAVE_EMPTY != 0
		}
		if cl.tail {
			add("COMMIT_LOG_TAIL", true)
		}
		if cl.poll_interval_ms != 0 {
			add("COMMIT_LOG_POLL_INTERVAL_MS", uint64(cl.poll_interval_ms))
		}
		if cl.reader_poll_interval_ms != 0 {
			add("READER_POLL_INTERVAL_MS", uint64(cl.reader_poll_interval_ms))
		}
		if walStore = goStr(cl.wal_store); walStore != "" {
			add("WAL_STORE", walStore)
		}
	}
	// S3 settings only concern s3:// stores; a host may pass them always.
	if s3 != nil && (attach.IsS3(path) || attach.IsS3(walStore)) {
		for _, f := range []struct {
			name string
			v    C.moraine_cstr
		}{
			{"S3_KEY_ID", s3.key_id}, {"S3_SECRET", s3.secret}, {"S3_REGION", s3.region},
			{"S3_SESSION_TOKEN", s3.session_token}, {"S3_ENDPOINT", s3.endpoint}, {"S3_URL_STYLE", s3.url_style},
		} {
			if s := goStr(f.v); s != "" {
				add(f.name, s)
			}
		}
		switch s3.use_ssl {
		case -1:
		case 0, 1:
			add("S3_USE_SSL", s3.use_ssl == 1)
		default:
			return nil, "", invalidf("moraine_attach: s3->use_ssl is %d (accepted: -1 for not given, 0, 1)", int32(s3.use_ssl))
		}
	}
	cfg, err := attach.Parse(path, opts)
	if err != nil {
		return nil, "", err
	}
	cfg.Catalog.LeaveEmpty = leaveEmpty
	return cfg, attachKey(path, opts, leaveEmpty), nil
}

// optionValue reads a host option's value as attach.Option takes it.
func optionValue(name string, v *C.moraine_value) (any, error) {
	if v == nil {
		return nil, invalidf("attach option %s: no value (NULL pointer)", name)
	}
	x, err := valueFromC(v, 0)
	if err != nil {
		return nil, invalidf("attach option %s: %v", name, err)
	}
	switch x.Type {
	case sqlfn.TypeBoolean:
		return x.Bool, nil
	case sqlfn.TypeBigint:
		return x.Int, nil
	case sqlfn.TypeUbigint:
		return x.Uint, nil
	case sqlfn.TypeVarchar, sqlfn.TypeOther:
		return x.Str, nil
	case sqlfn.TypeNull:
		return nil, nil // attach.Parse refuses it, naming the option
	}
	return nil, invalidf("attach option %s: a %s value is not accepted (give a boolean, an integer or a string)", name, x.Type)
}

//export moraine_detach
func moraine_detach(catalog C.moraine_catalog, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	a, err := lookupHandle[attachedCatalog](uint64(catalog), "moraine_catalog")
	if err != nil {
		return setError(cerr, err)
	}
	if !deleteHandle(uint64(catalog)) {
		return setError(cerr, invalidf("moraine_detach: %d was detached concurrently", uint64(catalog)))
	}
	return setError(cerr, release(context.Background(), a.key))
}

//export moraine_catalog_info
func moraine_catalog_info(catalog C.moraine_catalog, out *C.moraine_info, cerr *C.moraine_error) (rc C.int32_t) {
	defer codes.Guard(func(err error) { rc = setError(cerr, err) })
	if out == nil {
		return setError(cerr, invalidf("moraine_catalog_info: out is NULL"))
	}
	a, err := lookupHandle[attachedCatalog](uint64(catalog), "moraine_catalog")
	if err != nil {
		return setError(cerr, err)
	}
	var role C.int32_t
	switch r := a.Role(); r {
	case core.RoleWriter:
		role = C.MORAINE_ROLE_WRITER
	case core.RoleReader:
		role = C.MORAINE_ROLE_READER
	case core.RoleTailingReader:
		role = C.MORAINE_ROLE_TAILING_READER
	case core.RoleCommitter, core.RoleHolder:
		role = C.MORAINE_ROLE_COMMITTER
	default:
		return setError(cerr, &core.Error{Kind: core.Internal, Msg: fmt.Sprintf("moraine_catalog_info: role %v has no MORAINE_ROLE_* code", r)})
	}
	commits, conflicts := a.lake.Counts()
	*out = C.moraine_info{
		role:             role,
		read_only:        C.bool(a.Config.ReadOnly),
		commits:          C.uint64_t(commits),
		commit_conflicts: C.uint64_t(conflicts),
		claims:           C.uint64_t(a.lake.Claims()),
	}
	// A store holding no lake yet has no format and no head: *out holds
	// the rest, and the error says so (MORAINE_NOT_FOUND).
	h, err := a.Catalog.Head(context.Background())
	if err != nil {
		return setError(cerr, err)
	}
	format, _ := a.Catalog.Format()
	out.format = C.uint64_t(format)
	out.head_snapshot = C.uint64_t(h.SnapshotID)
	out.head_batch_seq = C.uint64_t(h.BatchSeq)
	return setError(cerr, nil)
}
