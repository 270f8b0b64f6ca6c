// Package attach turns attach options, as DuckDB hands them to an ATTACH or
// to moraine_attach (names in any case; values that are strings, booleans
// or integers), into core.CatalogOptions plus the object store(s) to open.
//
// Parsing is pure: Parse checks every name, every value and every
// combination and opens nothing, so a refused attach leaves no trace.
// Config.Open then resolves the stores and opens the catalog.
//
// Options (see Known for the list with what each accepts):
//
//	READ_ONLY                    bool    open read-only (a reader); default read-write (the writer, or a committer with a commit-log provider)
//	DATA_PATH                    string  recorded when the catalog is created (ducklake_metadata data_path)
//	FLUSH_INTERVAL_MS            integer writer's WAL upload cadence; 0 = continuous (the default)
//	READER_POLL_INTERVAL_MS      integer how often a reader looks for new commits (default 10000)
//	CHECKPOINT                   uuid    pin a READ_ONLY attach to an engine checkpoint
//	WAL_STORE                    uri     keep the WAL (the commit log) in another store
//	COMMIT_LOG_TAIL              bool    a READ_ONLY attach tails the commit log
//	COMMIT_LOG_POLL_INTERVAL_MS  integer a committer's commit-log poll
//	S3_ENDPOINT, S3_REGION, S3_KEY_ID, S3_SECRET, S3_SESSION_TOKEN   strings
//	S3_URL_STYLE                 'path' or 'vhost'
//	S3_USE_SSL                   bool
//
// The two commit-log options are parsed and carried into CatalogOptions;
// with no commit-log provider registered (core.RegisterCommitLog) the
// catalog ignores them (RFC 0024), and the role stays reader or writer.
//
// Every error is a *core.Error of kind core.InvalidArgument whose message
// names the option, the value and what is accepted.
package attach

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

// Option is one attach option: its name (any case) and its value as DuckDB
// hands it: a string, a bool, a signed or unsigned integer, or nil (NULL).
type Option struct {
	Name  string
	Value any
}

// Config is a parsed attach.
type Config struct {
	// Path is the store URI (see objstore.Open).
	Path string
	// ReadOnly selects core.OpenReadOnly.
	ReadOnly bool
	// Catalog carries every catalog option the attach set. Its WalStore is
	// set by Open (see WalStore).
	Catalog core.CatalogOptions
	// S3 configures the s3:// stores (Path and WalStore).
	S3 objstore.S3Options
	// WalStore is the URI of the WAL store, "" for none.
	WalStore string
	// Given lists the options given, by canonical name, in order.
	Given []string
}

// Has reports whether the option (canonical name) was given.
func (c *Config) Has(name string) bool { return slices.Contains(c.Given, name) }

// kind is how an option's value is read.
type kind int

const (
	kindBool kind = iota
	kindString
	kindMillis   // integer milliseconds within [min, maxMillis]
	kindUUID     // a checkpoint id
	kindStoreURI // a store URI
	kindURLStyle // 'path' or 'vhost'
)

// maxMillis bounds every *_MS option: one day.
const maxMillis = 24 * 60 * 60 * 1000

type spec struct {
	name   string
	kind   kind
	min    int64 // kindMillis
	secret bool  // a credential: its value never appears in a message
	doc    string
	set    func(c *Config, v parsed)
}

// parsed is a checked value.
type parsed struct {
	b bool
	s string
	n int64
}

var specs = []spec{
	{name: "READ_ONLY", kind: kindBool, doc: "open read-only (a reader)",
		set: func(c *Config, v parsed) { c.ReadOnly = v.b }},
	{name: "DATA_PATH", kind: kindString, doc: "where the lake's data files live; recorded when the catalog is created",
		set: func(c *Config, v parsed) { c.Catalog.DataPath = v.s }},
	{name: "FLUSH_INTERVAL_MS", kind: kindMillis, min: 0, doc: "the writer's WAL upload cadence; 0 = upload as soon as a commit waits",
		set: func(c *Config, v parsed) { c.Catalog.FlushInterval = time.Duration(v.n) * time.Millisecond }},
	{name: "READER_POLL_INTERVAL_MS", kind: kindMillis, min: 1, doc: "how often a reader looks for new commits (default 10000)",
		set: func(c *Config, v parsed) { c.Catalog.ReaderPollInterval = time.Duration(v.n) * time.Millisecond }},
	{name: "CHECKPOINT", kind: kindUUID, doc: "pin a READ_ONLY attach to an engine checkpoint",
		set: func(c *Config, v parsed) { c.Catalog.Checkpoint = v.s }},
	{name: "WAL_STORE", kind: kindStoreURI, doc: "keep the WAL (the commit log) in another store",
		set: func(c *Config, v parsed) { c.WalStore = v.s }},
	{name: "COMMIT_LOG_TAIL", kind: kindBool, doc: "a READ_ONLY attach tails the commit log (needs a commit-log provider)",
		set: func(c *Config, v parsed) { c.Catalog.CommitLogTail = v.b }},
	{name: "COMMIT_LOG_POLL_INTERVAL_MS", kind: kindMillis, min: 1, doc: "a committer's commit-log poll (needs a commit-log provider)",
		set: func(c *Config, v parsed) { c.Catalog.CommitLogPollInterval = time.Duration(v.n) * time.Millisecond }},
	{name: "S3_ENDPOINT", kind: kindString, doc: "S3 endpoint URL (default: AWS)",
		set: func(c *Config, v parsed) { c.S3.Endpoint = v.s }},
	{name: "S3_REGION", kind: kindString, doc: "S3 region",
		set: func(c *Config, v parsed) { c.S3.Region = v.s }},
	{name: "S3_KEY_ID", kind: kindString, secret: true, doc: "S3 access key id",
		set: func(c *Config, v parsed) { c.S3.AccessKeyID = v.s }},
	{name: "S3_SECRET", kind: kindString, secret: true, doc: "S3 secret access key",
		set: func(c *Config, v parsed) { c.S3.SecretAccessKey = v.s }},
	{name: "S3_SESSION_TOKEN", kind: kindString, secret: true, doc: "S3 session token",
		set: func(c *Config, v parsed) { c.S3.SessionToken = v.s }},
	{name: "S3_URL_STYLE", kind: kindURLStyle, doc: "S3 addressing: 'path' or 'vhost'",
		set: func(c *Config, v parsed) { c.S3.URLStyle = v.s }},
	{name: "S3_USE_SSL", kind: kindBool, doc: "https for an S3_ENDPOINT given without a scheme",
		set: func(c *Config, v parsed) { b := v.b; c.S3.UseSSL = &b }},
}

// Known returns the canonical option names, sorted.
func Known() []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.name
	}
	slices.Sort(out)
	return out
}

// Describe returns what an option accepts and does, for documentation and
// messages ("" for an unknown option).
func Describe(name string) string {
	s := lookup(name)
	if s == nil {
		return ""
	}
	return s.accepted() + ": " + s.doc
}

// MetaPrefix is the prefix DuckLake users put before a metadata catalog's
// options (ATTACH 'ducklake:moraine:...' (META_READER_POLL_INTERVAL_MS 100));
// DuckLake strips it before it attaches moraine, and an option given with
// it directly is read as the option without it.
const MetaPrefix = "META_"

func lookup(name string) *spec {
	if len(name) > len(MetaPrefix) && strings.EqualFold(name[:len(MetaPrefix)], MetaPrefix) {
		name = name[len(MetaPrefix):]
	}
	for i := range specs {
		if strings.EqualFold(specs[i].name, name) {
			return &specs[i]
		}
	}
	return nil
}

func (s *spec) accepted() string {
	switch s.kind {
	case kindBool:
		return "a boolean (true/false, 1/0, yes/no, on/off)"
	case kindString:
		return "a non-empty string"
	case kindMillis:
		return fmt.Sprintf("an integer number of milliseconds from %d to %d", s.min, maxMillis)
	case kindUUID:
		return "a checkpoint id (a UUID such as '01234567-89ab-cdef-0123-456789abcdef')"
	case kindStoreURI:
		return "a store URI (" + objstore.AcceptedURIForms + ")"
	case kindURLStyle:
		return "'path' or 'vhost'"
	}
	return "?"
}

// invalid builds the package's error.
func invalid(format string, args ...any) error {
	return &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf(format, args...)}
}

// Render shows a value as the messages quote it: strings in single quotes,
// numbers and booleans bare, NULL for nil.
func Render(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case []byte:
		return fmt.Sprintf("BLOB of %d bytes", len(x))
	}
	return fmt.Sprint(v)
}

func (s *spec) bad(v any) error {
	return invalid("attach option %s: %s is not accepted (accepted: %s)", s.name, s.render(v), s.accepted())
}

// render shows a value in a message; a credential's value is never shown.
func (s *spec) render(v any) string {
	if s.secret {
		return "the value given"
	}
	return Render(v)
}

// asInt reads an integer value (a Go integer or a string of digits).
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	case uint:
		if uint64(x) > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// ParseBool reads a boolean as the options accept it: a bool, the integers
// 0 and 1, or true/false, t/f, 1/0, yes/no, y/n, on/off in any case.
func ParseBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "t", "1", "yes", "y", "on":
			return true, true
		case "false", "f", "0", "no", "n", "off":
			return false, true
		}
		return false, false
	}
	if n, ok := asInt(v); ok && (n == 0 || n == 1) {
		return n == 1, true
	}
	return false, false
}

func (s *spec) parse(v any) (parsed, error) {
	if v == nil {
		return parsed{}, s.bad(v)
	}
	switch s.kind {
	case kindBool:
		b, ok := ParseBool(v)
		if !ok {
			return parsed{}, s.bad(v)
		}
		return parsed{b: b}, nil
	case kindMillis:
		n, ok := asInt(v)
		if !ok || n < s.min || n > maxMillis {
			return parsed{}, s.bad(v)
		}
		return parsed{n: n}, nil
	}
	str, ok := v.(string)
	if !ok {
		return parsed{}, s.bad(v)
	}
	switch s.kind {
	case kindString:
		if str == "" || strings.ContainsRune(str, 0) {
			return parsed{}, s.bad(v)
		}
	case kindUUID:
		id, err := uuid.Parse(strings.TrimSpace(str))
		if err != nil {
			return parsed{}, s.bad(v)
		}
		str = id.String()
	case kindStoreURI:
		if err := CheckStoreURI(str); err != nil {
			return parsed{}, invalid("attach option %s: %s is not accepted: %s", s.name, s.render(v), err)
		}
	case kindURLStyle:
		str = strings.ToLower(strings.TrimSpace(str))
		if str != "path" && str != "vhost" {
			return parsed{}, s.bad(v)
		}
	}
	return parsed{s: str}, nil
}

// CheckStoreURI checks a store URI's form the way objstore.Open reads it,
// without opening anything.
func CheckStoreURI(uri string) error {
	if uri == "" {
		return errors.New("the store URI is empty; accepted forms: " + objstore.AcceptedURIForms)
	}
	if strings.ContainsRune(uri, 0) {
		return errors.New("the store URI contains a NUL byte")
	}
	scheme, rest, hasScheme := strings.Cut(uri, "://")
	if !hasScheme {
		if strings.Contains(uri, ":") && !strings.HasPrefix(uri, "/") && !strings.HasPrefix(uri, ".") {
			return fmt.Errorf("%q is not a recognised store URI; accepted forms: %s", uri, objstore.AcceptedURIForms)
		}
		return nil
	}
	switch strings.ToLower(scheme) {
	case "file":
		if !strings.HasPrefix(rest, "/") && !strings.HasPrefix(rest, "localhost/") {
			return fmt.Errorf("file URI %q must be file:///absolute/dir", uri)
		}
	case "memory":
		if rest == "" {
			return fmt.Errorf("memory URI %q needs a name (memory://name)", uri)
		}
	case "s3":
		if bucket, _, _ := strings.Cut(rest, "/"); bucket == "" {
			return fmt.Errorf("s3 URI %q has no bucket (s3://bucket/prefix)", uri)
		}
	default:
		return fmt.Errorf("unknown store scheme %q; accepted forms: %s", scheme, objstore.AcceptedURIForms)
	}
	return nil
}

// IsS3 reports whether a store URI is an s3:// one.
func IsS3(uri string) bool {
	scheme, _, ok := strings.Cut(uri, "://")
	return ok && strings.EqualFold(scheme, "s3")
}

// Parse checks path and every option and returns the configuration. It
// opens nothing. Names are case-insensitive; an option given twice, an
// unknown option, a value the option does not accept and a combination
// that cannot work are refused.
func Parse(path string, opts []Option) (*Config, error) {
	if err := CheckStoreURI(path); err != nil {
		return nil, invalid("store path: %v", err)
	}
	c := &Config{Path: path}
	seen := map[string]bool{}
	for _, o := range opts {
		s := lookup(o.Name)
		if s == nil {
			return nil, invalid("unknown attach option %q; known options: %s", o.Name, strings.Join(Known(), ", "))
		}
		if seen[s.name] {
			return nil, invalid("attach option %s is given more than once", s.name)
		}
		seen[s.name] = true
		v, err := s.parse(o.Value)
		if err != nil {
			return nil, err
		}
		s.set(c, v)
		c.Given = append(c.Given, s.name)
	}
	if err := c.checkCombination(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) checkCombination() error {
	switch {
	case c.Has("CHECKPOINT") && !c.ReadOnly:
		return invalid("attach option CHECKPOINT needs READ_ONLY: a checkpoint pins a read-only attach; a read-write attach cannot use one")
	case c.Catalog.CommitLogTail && !c.ReadOnly:
		return invalid("attach option COMMIT_LOG_TAIL needs READ_ONLY: only a reader tails the commit log (a read-write attach commits through it)")
	case c.Catalog.CommitLogTail && c.Has("CHECKPOINT"):
		return invalid("attach options COMMIT_LOG_TAIL and CHECKPOINT conflict: a checkpoint attach reads one pinned state and never tails")
	case c.Has("READER_POLL_INTERVAL_MS") && c.Has("CHECKPOINT"):
		return invalid("attach options READER_POLL_INTERVAL_MS and CHECKPOINT conflict: a checkpoint attach reads one pinned state and never polls")
	case c.Has("COMMIT_LOG_POLL_INTERVAL_MS") && c.ReadOnly:
		return invalid("attach option COMMIT_LOG_POLL_INTERVAL_MS is a committer's poll and does not apply to a READ_ONLY attach (a reader polls at READER_POLL_INTERVAL_MS)")
	case c.Has("FLUSH_INTERVAL_MS") && c.ReadOnly:
		return invalid("attach option FLUSH_INTERVAL_MS paces the writer's uploads and does not apply to a READ_ONLY attach")
	}
	if !IsS3(c.Path) && !IsS3(c.WalStore) {
		for _, name := range c.Given {
			if strings.HasPrefix(name, "S3_") {
				return invalid("attach option %s applies to s3:// stores, but neither the path %s nor WAL_STORE is one", name, Render(c.Path))
			}
		}
	}
	return nil
}

// Attached is an open attach: the catalog and the stores it runs on.
type Attached struct {
	Config   *Config
	Catalog  *core.Catalog
	Store    objstore.Store
	WalStore objstore.Store // nil without WAL_STORE
	// Requests counts the requests the catalog made to Store and WalStore
	// (both are wrapped): what an operator or a test reads to see what an
	// attach costs. A named lake (OpenLake) counts into its store's.
	Requests, WalRequests *objstore.CountingStore
	// Lake is the name of a named lake (OpenLake), "" for the store's own.
	Lake string
	// root is the store a named lake was opened in, parent the attach it
	// was opened from (both nil for the store's own lake).
	root   objstore.Store
	parent *Attached

	// lakes is the store's list of named lakes as last read (Lakes).
	lakes struct {
		mu    sync.Mutex
		names []string
		at    time.Time // zero: never read
	}
}

// Role is the attach's role, as the catalog handle reports it, except that
// a holder (which only the library API creates) reports as a committer: an
// attach is a writer, a committer, a reader or a tailing reader.
func (a *Attached) Role() core.Role {
	if r := a.Catalog.Role(); r != core.RoleHolder {
		return r
	}
	return core.RoleCommitter
}

// Close closes the catalog.
func (a *Attached) Close(ctx context.Context) error { return a.Catalog.Close(ctx) }

// OpenStore opens a store URI with the attach's S3 settings. Errors are
// *core.Error: InvalidArgument for a URI objstore refuses, Store otherwise.
func (c *Config) OpenStore(ctx context.Context, uri string) (objstore.Store, error) {
	s, err := objstore.Open(ctx, uri, objstore.Options{S3: c.S3})
	if err != nil {
		k := core.Store
		if errors.Is(err, objstore.ErrInvalid) {
			k = core.InvalidArgument
		}
		return nil, &core.Error{Kind: k, Msg: fmt.Sprintf("opening the store %s", Render(uri)), Err: err}
	}
	return s, nil
}

// Open resolves the store(s) and opens the catalog: read-only with
// READ_ONLY, read-write (creating the catalog in an empty store)
// otherwise.
func (c *Config) Open(ctx context.Context) (*Attached, error) {
	store, err := c.OpenStore(ctx, c.Path)
	if err != nil {
		return nil, err
	}
	if err := c.checkConditionalPut(ctx, c.Path, store); err != nil {
		return nil, err
	}
	a := &Attached{Config: c, Requests: objstore.WithCounting(store)}
	a.Store = a.Requests
	if c.WalStore != "" {
		wal, err := c.OpenStore(ctx, c.WalStore)
		if err != nil {
			return nil, err
		}
		if err := c.checkConditionalPut(ctx, c.WalStore, wal); err != nil {
			return nil, err
		}
		a.WalRequests = objstore.WithCounting(wal)
		a.WalStore = a.WalRequests
	}
	if err := a.openCatalog(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// checkConditionalPut refuses, before the catalog writes anything, an S3
// store that ignores create-if-absent (objstore.CheckConditionalPut), for
// a read-write attach: its commits would overwrite each other. A store
// that passed once costs one refused PUT per attach. Local and memory
// stores are moraine's own and always honour it.
func (c *Config) checkConditionalPut(ctx context.Context, uri string, s objstore.Store) error {
	if c.ReadOnly || !IsS3(uri) {
		return nil
	}
	err := objstore.CheckConditionalPut(ctx, s)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, objstore.ErrNoConditionalWrites):
		return &core.Error{Kind: core.Configuration, Err: err,
			Msg: fmt.Sprintf("the store %s does not honour conditional writes, so it cannot hold a lake read-write (attach it READ_ONLY to read one)", Render(uri))}
	default:
		return &core.Error{Kind: core.Store, Err: err, Msg: fmt.Sprintf("checking that the store %s honours conditional writes", Render(uri))}
	}
}

// openCatalog opens the catalog on a.Store (and a.WalStore) with the
// attach's options.
func (a *Attached) openCatalog(ctx context.Context) error {
	opts := a.Config.Catalog
	opts.NamedLake = a.Lake
	if a.WalStore != nil {
		opts.WalStore = a.WalStore
	}
	var err error
	if a.Config.ReadOnly {
		a.Catalog, err = core.OpenReadOnly(ctx, a.Store, opts)
	} else {
		a.Catalog, err = core.Open(ctx, a.Store, opts)
	}
	return err
}

// OpenLake opens the lake named name in the store a was opened on (a
// DuckLake METADATA_SCHEMA; see core.LakeStore), with a's options: its own
// catalog, read-only when a is, its WAL (or commit log) under the same name
// in the WAL store. Without create, a lake that is not published is
// NotFound; with it, an unpublished lake opens too (empty, with LeaveEmpty)
// and PublishLake lists it. Close it as any attach.
func (a *Attached) OpenLake(ctx context.Context, name string, create bool) (*Attached, error) {
	if a.root != nil {
		return nil, &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("the lake %q holds no lakes of its own; open %q in the store's own lake", a.Lake, name)}
	}
	if core.IsMainLake(name) {
		return nil, &core.Error{Kind: core.InvalidArgument, Msg: fmt.Sprintf("%q is the store's own lake, the one the attach opened, not a named lake", name)}
	}
	if !create {
		_, ok, err := core.FindLake(ctx, a.Store, name)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, &core.Error{Kind: core.NotFound, Msg: fmt.Sprintf("the store %s holds no lake (metadata schema) named %q", Render(a.Config.Path), name)}
		}
	}
	l := &Attached{Config: a.Config, Requests: a.Requests, WalRequests: a.WalRequests, Lake: name, root: a.Store, parent: a}
	var err error
	if l.Store, err = core.LakeStore(a.Store, name); err != nil {
		return nil, err
	}
	if a.WalStore != nil {
		if l.WalStore, err = core.LakeStore(a.WalStore, name); err != nil {
			return nil, err
		}
	}
	if err := l.openCatalog(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// PublishLake lists a named lake in its store (core.PublishLake); for the
// store's own lake it does nothing.
func (a *Attached) PublishLake(ctx context.Context) error {
	if a.root == nil {
		return nil
	}
	if err := core.PublishLake(ctx, a.root, a.Lake); err != nil {
		return err
	}
	// The attach it was opened from lists it from now on.
	a.parent.lakes.mu.Lock()
	a.parent.lakes.at = time.Time{}
	a.parent.lakes.mu.Unlock()
	return nil
}

// FindLake reports whether the lake named name is published in the store a
// was opened on, and the name it was published with (core.FindLake).
func (a *Attached) FindLake(ctx context.Context, name string) (string, bool, error) {
	if a.root != nil {
		return "", false, nil
	}
	return core.FindLake(ctx, a.Store, name)
}

// Lakes lists the named lakes of the store a was opened on (core.Lakes):
// read at the first call, then again at most once per reader poll interval
// (READER_POLL_INTERVAL_MS, default 10 s), the freshness bound readers have
// for commits, so listing schemas again and again costs no request; fresh
// reads it now. A lake published since is found by name at once (FindLake
// reads its marker), and one published through this attach is listed at
// once.
func (a *Attached) Lakes(ctx context.Context, fresh bool) ([]string, error) {
	if a.root != nil {
		return nil, nil
	}
	every := a.Config.Catalog.ReaderPollInterval
	if every == 0 {
		every = core.DefaultReaderPollInterval
	}
	a.lakes.mu.Lock()
	defer a.lakes.mu.Unlock()
	if !fresh && !a.lakes.at.IsZero() && (every < 0 || time.Since(a.lakes.at) < every) {
		return slices.Clone(a.lakes.names), nil
	}
	names, err := core.Lakes(ctx, a.Store)
	if err != nil {
		return nil, err
	}
	a.lakes.names, a.lakes.at = names, time.Now()
	return slices.Clone(names), nil
}
