package sqlfn

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/moraine-go/moraine/attach"
	"github.com/moraine-go/moraine/core"
)

// Instance holds the lakes attached in one DuckDB database. The shim makes
// one per database the extension is loaded into and closes it when DuckDB
// destroys the database's functions, so lakes live and die with their
// database, as ATTACHed catalogs do.
type Instance struct {
	mu     sync.Mutex
	lakes  map[string]*Lake // by lower-cased name; nil value: an attach in progress
	closed bool
}

// Lake is one attached lake.
type Lake struct {
	Name string
	*attach.Attached
	AttachedAt time.Time
}

// NewInstance returns an empty instance.
func NewInstance() *Instance { return &Instance{lakes: map[string]*Lake{}} }

func errorf(k core.Kind, format string, args ...any) error {
	return &core.Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

func lakeKey(name string) string { return strings.ToLower(name) }

func checkLakeName(name string) error {
	if name == "" {
		return errorf(core.InvalidArgument, "the lake name is empty")
	}
	if strings.ContainsRune(name, 0) {
		return errorf(core.InvalidArgument, "the lake name %s contains a NUL byte", quote(name))
	}
	return nil
}

// Attach opens cfg and registers it under name. The name is reserved while
// the catalog opens, so two concurrent attaches of one name cannot both
// succeed.
func (in *Instance) Attach(ctx context.Context, name string, cfg *attach.Config) (*Lake, error) {
	if err := checkLakeName(name); err != nil {
		return nil, err
	}
	key := lakeKey(name)
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return nil, errorf(core.InvalidArgument, "the database is closing")
	}
	if _, taken := in.lakes[key]; taken {
		in.mu.Unlock()
		return nil, errorf(core.AlreadyExists, "a lake named %s is already attached (moraine_detach(%s) first)", quote(name), quote(name))
	}
	in.lakes[key] = nil
	in.mu.Unlock()

	a, err := cfg.Open(ctx)
	in.mu.Lock()
	defer in.mu.Unlock()
	if err != nil {
		delete(in.lakes, key)
		return nil, err
	}
	l := &Lake{Name: name, Attached: a, AttachedAt: time.Now()}
	if in.closed {
		delete(in.lakes, key)
		a.Close(ctx)
		return nil, errorf(core.InvalidArgument, "the database is closing")
	}
	in.lakes[key] = l
	return l, nil
}

// Lake returns an attached lake by name.
func (in *Instance) Lake(name string) (*Lake, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	l := in.lakes[lakeKey(name)]
	if l == nil {
		return nil, errorf(core.NotFound, "no lake named %s is attached (attached: %s)", quote(name), in.namesLocked())
	}
	return l, nil
}

func (in *Instance) namesLocked() string {
	var names []string
	for _, l := range in.lakes {
		if l != nil {
			names = append(names, quote(l.Name))
		}
	}
	if len(names) == 0 {
		return "none"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Lakes lists the attached lakes by name.
func (in *Instance) Lakes() []*Lake {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []*Lake
	for _, l := range in.lakes {
		if l != nil {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b *Lake) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Detach closes and forgets a lake.
func (in *Instance) Detach(ctx context.Context, name string) (*Lake, error) {
	in.mu.Lock()
	l := in.lakes[lakeKey(name)]
	if l == nil {
		defer in.mu.Unlock()
		return nil, errorf(core.NotFound, "no lake named %s is attached (attached: %s)", quote(name), in.namesLocked())
	}
	delete(in.lakes, lakeKey(name))
	in.mu.Unlock()
	return l, l.Close(ctx)
}

// Close detaches every lake; later attaches are refused.
func (in *Instance) Close(ctx context.Context) {
	in.mu.Lock()
	in.closed = true
	lakes := in.lakes
	in.lakes = map[string]*Lake{}
	in.mu.Unlock()
	for _, l := range lakes {
		if l != nil {
			l.Close(ctx)
		}
	}
}
