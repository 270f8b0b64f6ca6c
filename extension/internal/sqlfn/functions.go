package sqlfn

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/moraine-go/moraine/attach"
	"github.com/moraine-go/moraine/core"
)

// Param is a positional or named parameter.
type Param struct {
	Name string
	Type Type
	Doc  string
}

// Function is one table function.
type Function struct {
	Name   string
	Doc    string
	Params []Param // positional, all required
	Named  []Param // optional, by name
	// Columns are the result columns. nil means they depend on what the
	// function reads (moraine_ducklake_inlined_data): such a function only
	// reads, runs at bind, and its first execution returns that result.
	Columns []Column
	// check validates the arguments at bind; run does the work at
	// execution (at bind when Columns is nil).
	run   func(ctx context.Context, in *Instance, a *Args) (*Table, error)
	check func(a *Args) error
}

// Args are one call's arguments.
type Args struct {
	fn    *Function
	Pos   []Value
	Named map[string]Value // given named parameters only, by lower-cased name
}

// Bound is a bound call: its result columns and how to execute it.
type Bound struct {
	fn      *Function
	in      *Instance
	args    *Args
	Columns []Column

	mu    sync.Mutex
	first *Table // a reading function's bind-time result, served once
}

var (
	registryOnce sync.Once
	registry     []*Function
)

// Functions returns every table function, in registration order (the order
// is the index the bridge passes back to Bind).
func Functions() []*Function {
	registryOnce.Do(func() {
		registry = append(registry, lakeFunctions()...)
		registry = append(registry, metadataFunctions()...)
		registry = append(registry, writeFunctions()...)
	})
	return registry
}

// Lookup finds a function by name.
func Lookup(name string) *Function {
	for _, f := range Functions() {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Bind checks a call's arguments and fixes its columns. pos holds one value
// per positional parameter; named the given named parameters (any case;
// absent ones may be left out or have Type TypeAbsent).
func (f *Function) Bind(ctx context.Context, in *Instance, pos []Value, named map[string]Value) (b *Bound, err error) {
	defer recoverInto(&err)
	if len(pos) != len(f.Params) {
		return nil, errorf(core.InvalidArgument, "takes %d positional arguments (%s), got %d", len(f.Params), f.paramNames(), len(pos))
	}
	a := &Args{fn: f, Pos: pos, Named: map[string]Value{}}
	for k, v := range named {
		if v.Type == TypeAbsent {
			continue
		}
		name := strings.ToLower(k)
		if !slices.ContainsFunc(f.Named, func(p Param) bool { return p.Name == name }) {
			return nil, errorf(core.InvalidArgument, "no named parameter %q", k)
		}
		a.Named[name] = v
	}
	for i, p := range f.Params {
		if pos[i].IsNull() {
			return nil, errorf(core.InvalidArgument, "the argument %s is NULL", p.Name)
		}
	}
	b = &Bound{fn: f, in: in, args: a, Columns: f.Columns}
	if f.check != nil {
		if err := f.check(a); err != nil {
			return nil, err
		}
	}
	if f.Columns == nil {
		t, err := f.run(ctx, in, a)
		if err != nil {
			return nil, err
		}
		if err := t.check(); err != nil {
			return nil, errorf(core.Internal, "%v", err)
		}
		b.Columns = t.Columns
		b.first = t
	}
	return b, nil
}

// Execute runs the call and returns its rows. A function whose columns
// bind read returns that result the first time; later executions read
// again and must find the same columns.
func (b *Bound) Execute(ctx context.Context) (t *Table, err error) {
	defer recoverInto(&err)
	b.mu.Lock()
	first := b.first
	b.first = nil
	b.mu.Unlock()
	if first != nil {
		return first, nil
	}
	t, err = b.fn.run(ctx, b.in, b.args)
	if err != nil {
		return nil, err
	}
	if err := t.check(); err != nil {
		return nil, errorf(core.Internal, "%v", err)
	}
	if !slices.Equal(t.Columns, b.Columns) {
		return nil, errorf(core.Constraint, "the result columns changed since the query was bound (the table was altered); run the query again")
	}
	return t, nil
}

// withContext prefixes an error's message, keeping its kind.
func withContext(err error, format string, args ...any) error {
	var ce *core.Error
	if errors.As(err, &ce) {
		return &core.Error{Kind: ce.Kind, Msg: fmt.Sprintf(format, args...) + ": " + ce.Msg, Err: ce.Err}
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// recoverInto turns a panic into an Internal error.
func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = &core.Error{Kind: core.Internal, Msg: fmt.Sprintf("panic: %v\n%s", r, debug.Stack())}
	}
}

func (f *Function) paramNames() string {
	var names []string
	for _, p := range f.Params {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// Signature renders the function's SQL signature, for documentation.
func (f *Function) Signature() string {
	var parts []string
	for _, p := range f.Params {
		parts = append(parts, p.Name+" "+p.Type.String())
	}
	for _, p := range f.Named {
		parts = append(parts, p.Name+" := "+p.Type.String())
	}
	return f.Name + "(" + strings.Join(parts, ", ") + ")"
}

// --- argument access ---

func (a *Args) str(i int) (string, error) {
	v := a.Pos[i]
	if v.Type != TypeVarchar {
		return "", errorf(core.InvalidArgument, "%s must be a string, got %s", a.fn.Params[i].Name, v.SQL())
	}
	return v.Str, nil
}

func (a *Args) namedU64(name string) (uint64, bool, error) {
	v, ok := a.Named[name]
	if !ok {
		return 0, false, nil
	}
	if v.IsNull() {
		return 0, false, nil
	}
	n, good := asU64(v)
	if !good {
		return 0, false, errorf(core.InvalidArgument, "%s must be a non-negative integer, got %s", name, v.SQL())
	}
	return n, true, nil
}

func (a *Args) namedBool(name string) (bool, error) {
	v, ok := a.Named[name]
	if !ok || v.IsNull() {
		return false, nil
	}
	b, good := attach.ParseBool(v.Scalar())
	if !good {
		return false, errorf(core.InvalidArgument, "%s must be a boolean, got %s", name, v.SQL())
	}
	return b, nil
}

func (a *Args) namedStr(name string) (string, bool, error) {
	v, ok := a.Named[name]
	if !ok || v.IsNull() {
		return "", false, nil
	}
	if v.Type != TypeVarchar {
		return "", false, errorf(core.InvalidArgument, "%s must be a string, got %s", name, v.SQL())
	}
	return v.Str, true, nil
}

// lake resolves the first positional argument, the lake name.
func (a *Args) lake(in *Instance) (*Lake, error) {
	name, err := a.str(0)
	if err != nil {
		return nil, err
	}
	return in.Lake(name)
}

// --- lakes: moraine_attach, moraine_detach, moraine_lakes ---

// attachConfig parses moraine_attach's path and named options.
func attachConfig(a *Args) (*attach.Config, error) {
	path, err := a.str(1)
	if err != nil {
		return nil, err
	}
	var opts []attach.Option
	for _, p := range a.fn.Named {
		if v, ok := a.Named[p.Name]; ok {
			opts = append(opts, attach.Option{Name: p.Name, Value: v.Scalar()})
		}
	}
	return attach.Parse(path, opts)
}

func lakeFunctions() []*Function {
	var attachNamed []Param
	for _, name := range attach.Known() {
		attachNamed = append(attachNamed, Param{Name: strings.ToLower(name), Type: TypeAny, Doc: attach.Describe(name)})
	}
	return []*Function{
		{
			Name: "moraine_attach",
			Doc:  "Attach the lake at path under name, with the attach options as named parameters; returns its role, format and head snapshot.",
			Params: []Param{
				{Name: "name", Type: TypeVarchar, Doc: "the name the other functions use for the lake"},
				{Name: "path", Type: TypeVarchar, Doc: "the store URI"},
			},
			Named:   attachNamed,
			Columns: []Column{{"name", TypeVarchar}, {"role", TypeVarchar}, {"format", TypeUbigint}, {"head_snapshot", TypeUbigint}},
			check: func(a *Args) error {
				if name, err := a.str(0); err != nil {
					return err
				} else if err := checkLakeName(name); err != nil {
					return err
				}
				_, err := attachConfig(a)
				return err
			},
			run: func(ctx context.Context, in *Instance, a *Args) (*Table, error) {
				name, _ := a.str(0)
				cfg, err := attachConfig(a)
				if err != nil {
					return nil, err
				}
				l, err := in.Attach(ctx, name, cfg)
				if err != nil {
					return nil, err
				}
				h, err := l.Catalog.Head(ctx)
				if err != nil {
					return nil, err
				}
				format, _ := l.Catalog.Format()
				return &Table{Columns: a.fn.Columns, Rows: [][]any{{l.Name, l.Role().String(), format, uint64(h.SnapshotID)}}}, nil
			},
		},
		{
			Name:    "moraine_detach",
			Doc:     "Detach a lake (closing its catalog).",
			Params:  []Param{{Name: "name", Type: TypeVarchar, Doc: "the lake"}},
			Columns: []Column{{"name", TypeVarchar}},
			run: func(ctx context.Context, in *Instance, a *Args) (*Table, error) {
				name, err := a.str(0)
				if err != nil {
					return nil, err
				}
				l, err := in.Detach(ctx, name)
				if err != nil {
					return nil, err
				}
				return &Table{Columns: a.fn.Columns, Rows: [][]any{{l.Name}}}, nil
			},
		},
		{
			Name:    "moraine_create_checkpoint",
			Doc:     "Pin the lake's current state for read-only attaches (checkpoint := the returned id); lifetime_ms 0 never expires.",
			Params:  []Param{{Name: "name", Type: TypeVarchar, Doc: "the lake"}},
			Named:   []Param{{Name: "lifetime_ms", Type: TypeUbigint, Doc: "milliseconds until GC may remove the checkpoint (0: never)"}},
			Columns: []Column{{"checkpoint", TypeVarchar}},
			run: func(ctx context.Context, in *Instance, a *Args) (*Table, error) {
				l, err := a.lake(in)
				if err != nil {
					return nil, err
				}
				ms, _, err := a.namedU64("lifetime_ms")
				if err != nil {
					return nil, err
				}
				id, err := l.Catalog.CreateCheckpoint(ctx, time.Duration(ms)*time.Millisecond)
				if err != nil {
					return nil, err
				}
				return &Table{Columns: a.fn.Columns, Rows: [][]any{{id}}}, nil
			},
		},
		{
			Name: "moraine_lakes",
			Doc:  "The lakes attached in this database.",
			Columns: []Column{
				{"name", TypeVarchar}, {"path", TypeVarchar}, {"role", TypeVarchar}, {"read_only", TypeBoolean},
				{"format", TypeUbigint}, {"head_snapshot", TypeUbigint}, {"data_path", TypeVarchar}, {"wal_store", TypeVarchar},
				{"flush_interval_ms", TypeUbigint}, {"reader_poll_interval_ms", TypeUbigint}, {"checkpoint", TypeVarchar},
				{"commit_log_tail", TypeBoolean}, {"commit_log_poll_interval_ms", TypeUbigint}, {"options", TypeVarchar},
			},
			run: func(ctx context.Context, in *Instance, a *Args) (*Table, error) {
				t := &Table{Columns: a.fn.Columns}
				for _, l := range in.Lakes() {
					c := l.Config
					h, err := l.Catalog.Head(ctx)
					if err != nil {
						return nil, fmt.Errorf("lake %s: %w", quote(l.Name), err)
					}
					var dataPath any
					if s, err := l.Catalog.View(ctx); err == nil {
						if v, ok := s.Option(core.ScopeGlobal, 0, "data_path"); ok {
							dataPath = v
						}
					}
					format, _ := l.Catalog.Format()
					ms := func(name string, d int64) any {
						if !c.Has(name) {
							return nil
						}
						return uint64(d / 1e6)
					}
					var ckpt, wal any
					if c.Catalog.Checkpoint != "" {
						ckpt = c.Catalog.Checkpoint
					}
					if c.WalStore != "" {
						wal = c.WalStore
					}
					t.Rows = append(t.Rows, []any{
						l.Name, c.Path, l.Role().String(), c.ReadOnly, format, uint64(h.SnapshotID), dataPath, wal,
						ms("FLUSH_INTERVAL_MS", int64(c.Catalog.FlushInterval)), ms("READER_POLL_INTERVAL_MS", int64(c.Catalog.ReaderPollInterval)),
						ckpt, c.Catalog.CommitLogTail, ms("COMMIT_LOG_POLL_INTERVAL_MS", int64(c.Catalog.CommitLogPollInterval)),
						strings.Join(c.Given, ","),
					})
				}
				return t, nil
			},
		},
	}
}
