package keys

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Key is a decoded key: its shape and its parts.
type Key struct {
	Shape Shape
	// Kind is the entity kind of ShapeCurrent and ShapeHistory keys (0
	// otherwise).
	Kind Kind
	// NameKind is the kind of a ShapeNameDir key (0 otherwise).
	NameKind NameKind
	// Comps are the u64 components in key order, without End: the kind's
	// components for current/history, parent_id and name_hash for the name
	// directory, the shape's fields otherwise. Nil when there are none.
	Comps []uint64
	// End is the end snapshot of history and archived inline keys (0
	// otherwise).
	End uint64
}

// Subspace is the key's subspace.
func (k Key) Subspace() Subspace { return k.Shape.Subspace() }

// HasEnd reports whether the key carries an end snapshot.
func (k Key) HasEnd() bool { return k.Shape.HasEnd() }

// arity is the number of components (without End) k's shape wants, or -1.
func (k Key) arity() int {
	switch k.Shape {
	case ShapeCurrent, ShapeHistory:
		if !k.Kind.Valid() {
			return -1
		}
		return k.Kind.Arity()
	}
	if !k.Shape.Valid() {
		return -1
	}
	return len(shapeInfos[k.Shape].comps)
}

func (k Key) check() error {
	if !k.Shape.Valid() {
		return fmt.Errorf("%w: unknown shape %d", ErrInvalid, uint8(k.Shape))
	}
	switch k.Shape {
	case ShapeCurrent, ShapeHistory:
		if !k.Kind.Valid() {
			return fmt.Errorf("%w: %s key with unknown kind 0x%02x", ErrInvalid, k.Shape, byte(k.Kind))
		}
		if k.Shape == ShapeHistory && !k.Kind.Versioned() {
			return fmt.Errorf("%w: %s is unversioned and has no history", ErrInvalid, k.Kind)
		}
	default:
		if k.Kind != 0 {
			return fmt.Errorf("%w: %s key with a kind", ErrInvalid, k.Shape)
		}
	}
	if k.Shape == ShapeNameDir {
		if !k.NameKind.Valid() {
			return fmt.Errorf("%w: name directory key with unknown name kind 0x%02x", ErrInvalid, byte(k.NameKind))
		}
	} else if k.NameKind != 0 {
		return fmt.Errorf("%w: %s key with a name kind", ErrInvalid, k.Shape)
	}
	if !k.HasEnd() && k.End != 0 {
		return fmt.Errorf("%w: %s key with an end snapshot", ErrInvalid, k.Shape)
	}
	if n := k.arity(); len(k.Comps) != n {
		return fmt.Errorf("%w: %s key takes %d components, got %d", ErrInvalid, k.name(), n, len(k.Comps))
	}
	return nil
}

// Encode returns k's bytes; Decode(k.Encode()) == k. It fails (ErrInvalid)
// when k does not describe a key.
func (k Key) Encode() ([]byte, error) {
	if err := k.check(); err != nil {
		return nil, err
	}
	kb := -1
	switch k.Shape {
	case ShapeCurrent, ShapeHistory:
		kb = int(k.Kind)
	case ShapeNameDir:
		kb = int(k.NameKind)
	}
	extra := 0
	if k.HasEnd() {
		extra = 1
	}
	b := build(shapeInfos[k.Shape].header, kb, k.Comps, extra)
	if k.HasEnd() {
		b = binary.BigEndian.AppendUint64(b, k.End)
	}
	return b, nil
}

// name is the shape path with the kind: "current/table", "index/name/view".
func (k Key) name() string {
	switch k.Shape {
	case ShapeCurrent, ShapeHistory:
		return k.Shape.String() + "/" + k.Kind.String()
	case ShapeNameDir:
		return k.Shape.String() + "/" + k.NameKind.String()
	}
	return k.Shape.String()
}

// String renders k for tools and messages: the shape path, the kind, the
// components and the end snapshot, e.g. "current/table/7",
// "history/column/7/3/end=12", "index/name/table/1/0x9f3a…",
// "sys/head".
func (k Key) String() string {
	if !k.Shape.Valid() {
		return fmt.Sprintf("invalid key (shape %d)", uint8(k.Shape))
	}
	var sb strings.Builder
	sb.WriteString(k.name())
	for i, c := range k.Comps {
		sb.WriteByte('/')
		if k.Shape == ShapeNameDir && i == 1 {
			fmt.Fprintf(&sb, "0x%016x", c)
			continue
		}
		sb.WriteString(strconv.FormatUint(c, 10))
	}
	if k.HasEnd() {
		sb.WriteString("/end=")
		sb.WriteString(strconv.FormatUint(k.End, 10))
	}
	return sb.String()
}

// Describe renders raw key bytes for tools: the decoded key's String, or
// "corrupt key <hex>" with the reason.
func Describe(key []byte) string {
	k, err := Decode(key)
	if err != nil {
		return fmt.Sprintf("corrupt key %x (%v)", key, err)
	}
	return k.String()
}

// maxHexInError bounds how much of a key an error message quotes.
const maxHexInError = 64

func corrupt(key []byte, format string, args ...any) error {
	q := key
	more := ""
	if len(q) > maxHexInError {
		q, more = q[:maxHexInError], "…"
	}
	return fmt.Errorf("%w: %s (key %x%s)", ErrCorrupt, fmt.Sprintf(format, args...), q, more)
}

// Decode parses key. Unknown discriminants, a wrong number of components
// and trailing bytes give an error wrapping ErrCorrupt.
func Decode(key []byte) (Key, error) {
	if len(key) == 0 {
		return Key{}, corrupt(key, "empty key")
	}
	need := func(n int, what string) error {
		if len(key) < n {
			return corrupt(key, "%s key ends before its %s byte", Subspace(key[0]), what)
		}
		return nil
	}
	var k Key
	var rest []byte
	switch sub := Subspace(key[0]); sub {
	case SubspaceSys:
		if err := need(2, "discriminant"); err != nil {
			return Key{}, err
		}
		switch key[1] {
		case sysFormat:
			k.Shape = ShapeFormat
		case sysHead:
			k.Shape = ShapeHead
		case sysMigration:
			k.Shape = ShapeMigration
		case sysMaintenanceStatus:
			k.Shape = ShapeMaintenanceStatus
		default:
			return Key{}, corrupt(key, "unknown sys discriminant 0x%02x", key[1])
		}
		rest = key[2:]
	case SubspaceSnapshot:
		k.Shape, rest = ShapeSnapshot, key[1:]
	case SubspaceCurrent:
		if err := need(2, "discriminant"); err != nil {
			return Key{}, err
		}
		switch key[1] {
		case currentEntity:
			if err := need(3, "kind"); err != nil {
				return Key{}, err
			}
			k.Shape, k.Kind, rest = ShapeCurrent, Kind(key[2]), key[3:]
			if !k.Kind.Valid() {
				return Key{}, corrupt(key, "unknown entity kind 0x%02x", key[2])
			}
		case currentGcFile:
			k.Shape, rest = ShapeGcFile, key[2:]
		default:
			return Key{}, corrupt(key, "unknown current discriminant 0x%02x", key[1])
		}
	case SubspaceHistory:
		if err := need(2, "kind"); err != nil {
			return Key{}, err
		}
		k.Shape, k.Kind, rest = ShapeHistory, Kind(key[1]), key[2:]
		if !k.Kind.Valid() {
			return Key{}, corrupt(key, "unknown entity kind 0x%02x", key[1])
		}
		if !k.Kind.Versioned() {
			return Key{}, corrupt(key, "history key of unversioned kind %s", k.Kind)
		}
	case SubspaceInline:
		if err := need(3, "operation"); err != nil {
			return Key{}, err
		}
		switch {
		case key[1] == inlineLive && key[2] == inlineInsert:
			k.Shape = ShapeInlineLiveInsert
		case key[1] == inlineLive && key[2] == inlineDelete:
			k.Shape = ShapeInlineLiveDelete
		case key[1] == inlineArchived && key[2] == inlineInsert:
			k.Shape = ShapeInlineArchivedInsert
		case key[1] == inlineArchived && key[2] == inlineDelete:
			k.Shape = ShapeInlineArchivedDelete
		default:
			return Key{}, corrupt(key, "unknown inline discriminants 0x%02x 0x%02x", key[1], key[2])
		}
		rest = key[3:]
	case SubspaceIndex:
		if err := need(2, "discriminant"); err != nil {
			return Key{}, err
		}
		switch key[1] {
		case indexNameDir:
			if err := need(3, "name kind"); err != nil {
				return Key{}, err
			}
			k.Shape, k.NameKind, rest = ShapeNameDir, NameKind(key[2]), key[3:]
			if !k.NameKind.Valid() {
				return Key{}, corrupt(key, "unknown name-directory kind 0x%02x", key[2])
			}
		case indexDeleteTarget:
			k.Shape, rest = ShapeDeleteTarget, key[2:]
		default:
			return Key{}, corrupt(key, "unknown index discriminant 0x%02x", key[1])
		}
	case SubspaceSchemaVersion:
		k.Shape, rest = ShapeSchemaVersion, key[1:]
	case SubspaceChangelog:
		k.Shape, rest = ShapeChangelog, key[1:]
	default:
		return Key{}, corrupt(key, "unknown subspace 0x%02x", key[0])
	}

	n := k.arity()
	total := n
	if k.HasEnd() {
		total++
	}
	switch want := 8 * total; {
	case len(rest) < want:
		return Key{}, corrupt(key, "%s key truncated: wants %d bytes of components, has %d", k.name(), want, len(rest))
	case len(rest) > want:
		return Key{}, corrupt(key, "%s key has %d trailing bytes", k.name(), len(rest)-want)
	}
	if n > 0 {
		k.Comps = make([]uint64, n)
		for i := range k.Comps {
			k.Comps[i] = binary.BigEndian.Uint64(rest[8*i:])
		}
	}
	if k.HasEnd() {
		k.End = binary.BigEndian.Uint64(rest[8*n:])
	}
	return k, nil
}
