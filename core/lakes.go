package core

import (
	"context"
	"encoding/hex"
	"errors"
	"sort"
	"strings"

	"github.com/moraine-go/moraine/core/objstore"
)

// Several lakes in one store.
//
// A store holds its own lake at its root: the lake Open opens, DuckLake's
// metadata schema "main". It also holds any number of named lakes, one per
// DuckLake METADATA_SCHEMA: the lake named n is a catalog of its own
// (snapshots, ids, engine and, on a log-resident lake, its own commit log)
// under the key prefix lakes/<k>/, and the marker object schemas/<k>
// (holding n as it was written) lists it, where k is the hex of n in ASCII
// lower case: names compare as DuckDB compares schema names. A marker is
// written once, before the lake's first commit, and never changes or goes
// away (DuckLake never drops its metadata schema).
//
// One commit log per lake, not one per store: two lakes share nothing, so
// their commits never contend for a slot and a lake's log can be read,
// folded and collected without the others'.

// MainLake is the name of the store's own lake (at the store's root).
const MainLake = "main"

// MaxLakeNameLen bounds a lake's name in bytes: its key prefix (twice as
// long) leaves room for the engine's keys within objstore.MaxKeyLen.
const MaxLakeNameLen = 255

const (
	lakesPrefix   = "lakes/"
	markersPrefix = "schemas/"
)

// IsMainLake reports whether name names the store's own lake.
func IsMainLake(name string) bool { return FoldLakeName(name) == MainLake }

// FoldLakeName is the form lake names compare in: ASCII lower case, as
// DuckDB compares schema names. Two names name one lake if they fold to
// the same string.
func FoldLakeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

func lakeKey(name string) (string, error) {
	switch {
	case name == "":
		return "", errorf(InvalidArgument, "a lake's name is empty")
	case len(name) > MaxLakeNameLen:
		return "", errorf(InvalidArgument, "the lake name %.40q... is %d bytes; the limit is %d", name, len(name), MaxLakeNameLen)
	case IsMainLake(name):
		return "", errorf(InvalidArgument, "%q names the store's own lake, at its root, not a named lake", name)
	}
	return hex.EncodeToString([]byte(FoldLakeName(name))), nil
}

// LakeStore returns the part of root that holds the lake named name: root
// itself for MainLake, the lake's prefix for any other name. Open it as any
// store (Open, OpenReadOnly); with a WAL store, pass LakeStore of that too.
func LakeStore(root objstore.Store, name string) (objstore.Store, error) {
	if IsMainLake(name) {
		return root, nil
	}
	k, err := lakeKey(name)
	if err != nil {
		return nil, err
	}
	return objstore.WithPrefix(root, lakesPrefix+k+"/"), nil
}

// PublishLake writes the marker that lists the lake named name in root
// (Lakes, FindLake). Publishing a published lake does nothing.
func PublishLake(ctx context.Context, root objstore.Store, name string) error {
	k, err := lakeKey(name)
	if err != nil {
		return err
	}
	if _, err := root.PutIfAbsent(ctx, markersPrefix+k, []byte(name)); err != nil && !errors.Is(err, objstore.ErrExists) {
		return storeErr(err, "publishing the lake %q in %s", name, root)
	}
	return nil
}

// FindLake returns the name a published lake was written with, for any
// spelling of it (ASCII case-insensitively), and whether it is published.
// MainLake is always there.
func FindLake(ctx context.Context, root objstore.Store, name string) (string, bool, error) {
	if IsMainLake(name) {
		return MainLake, true, nil
	}
	k, err := lakeKey(name)
	if err != nil {
		return "", false, err
	}
	data, _, err := root.Get(ctx, markersPrefix+k)
	if errors.Is(err, objstore.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, storeErr(err, "looking up the lake %q in %s", name, root)
	}
	return string(data), true, nil
}

// Lakes lists the named lakes published in root (not MainLake), by name.
func Lakes(ctx context.Context, root objstore.Store) ([]string, error) {
	objs, err := objstore.ListAll(ctx, root, markersPrefix, "")
	if err != nil {
		return nil, storeErr(err, "listing the lakes of %s", root)
	}
	var names []string
	for _, o := range objs {
		k := strings.TrimPrefix(o.Key, markersPrefix)
		if _, err := hex.DecodeString(k); err != nil || strings.Contains(k, "/") {
			continue // not a marker moraine wrote
		}
		data, _, err := root.Get(ctx, o.Key)
		if err != nil {
			return nil, storeErr(err, "reading the lake marker %s of %s", o.Key, root)
		}
		names = append(names, string(data))
	}
	sort.Strings(names)
	return names, nil
}
