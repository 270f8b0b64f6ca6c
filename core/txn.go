package core

import (
	"maps"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/moraine-go/moraine/core/keys"
)

// kvWrite is one staged engine write.
type kvWrite struct {
	key   []byte
	value []byte // nil: delete
}

// Transaction stages one commit: verbs check their premises against the
// catalog as this transaction sees it (the snapshot it started from plus
// its own changes) and stage the writes. Nothing is visible to anyone else
// until the commit lands. A Transaction is not safe for concurrent use.
type Transaction struct {
	base *CatalogView
	next *CatalogView
	id   SnapshotID // the snapshot this transaction mints
	now  time.Time

	nextCatalogID uint64
	nextFileID    uint64
	schemaVersion uint64 // next.snap.SchemaVersion once bumped
	shapeChanged  bool
	changes       []change
	deletedFiles  []DataFileID
	shapeTables   map[TableID]bool
	// statsOverwrites: tables whose statistics this transaction overwrote
	// (see noteStatsOverwrite; resolved by finish).
	statsOverwrites map[TableID]bool

	author, message, extra *string

	writes map[string]kvWrite
	order  []string
	owned  map[unsafe.Pointer]bool // inner maps already copied by this transaction
	// dirty name-directory slots to rewrite at finish.
	nameSlots map[nameSlot]bool
	chunkSeq  map[TableID]uint64
	format    uint64 // the catalog's format: which derived indexes to maintain

	// Explicit transactions (Catalog.Begin) only.
	cat  *Catalog
	sess session
	head Head
	// rows is set for a transaction from Catalog.BeginRows (rows.go).
	rows *rowsState
}

type nameSlot struct {
	kind   keys.NameKind
	parent uint64
	hash   uint64
}

func newTransaction(base *CatalogView, now time.Time, format uint64) *Transaction {
	t := &Transaction{
		base:          base,
		next:          base.clone(),
		id:            base.snap.ID + 1,
		now:           now,
		nextCatalogID: base.snap.NextCatalogID,
		nextFileID:    base.snap.NextFileID,
		schemaVersion: base.snap.SchemaVersion,
		shapeTables:   map[TableID]bool{},
		writes:        map[string]kvWrite{},
		owned:         map[unsafe.Pointer]bool{},
		nameSlots:     map[nameSlot]bool{},
		chunkSeq:      map[TableID]uint64{},
		format:        format,
	}
	return t
}

// View returns the catalog as this transaction sees it (base plus its
// own changes so far). The view is only valid until the next verb.
func (t *Transaction) View() *CatalogView { return t.next }

// SnapshotID is the id the commit will mint.
func (t *Transaction) SnapshotID() SnapshotID { return t.id }

// changed reports whether any verb staged anything.
func (t *Transaction) changed() bool {
	return len(t.order) > 0 || t.rows != nil && (t.rows.snapshot != nil || t.rows.genesis)
}

// SetAuthor, SetCommitMessage and SetCommitExtraInfo annotate the snapshot
// (invalid UTF-8 is replaced).
func (t *Transaction) SetAuthor(s string)          { t.author = validUTF8(s) }
func (t *Transaction) SetCommitMessage(s string)   { t.message = validUTF8(s) }
func (t *Transaction) SetCommitExtraInfo(s string) { t.extra = validUTF8(s) }

func validUTF8(s string) *string {
	v := strings.ToValidUTF8(s, "\uFFFD")
	return &v
}

func (t *Transaction) put(key, value []byte) {
	k := string(key)
	if _, ok := t.writes[k]; !ok {
		t.order = append(t.order, k)
	}
	t.writes[k] = kvWrite{key: key, value: value}
}

func (t *Transaction) del(key []byte) {
	k := string(key)
	if _, ok := t.writes[k]; !ok {
		t.order = append(t.order, k)
	}
	t.writes[k] = kvWrite{key: key}
}

func (t *Transaction) note(c change) { t.changes = append(t.changes, c) }

func (t *Transaction) noteTable(kind string, id TableID) {
	for _, c := range t.changes {
		if c.Kind == kind && c.ID == uint64(id) && c.Name == nil {
			return
		}
	}
	t.note(change{Kind: kind, ID: uint64(id)})
}

// shape marks a schema change (bumps the snapshot's schema version once);
// table, when non-zero, records a ducklake_schema_versions row for it.
func (t *Transaction) shape(table TableID) {
	if !t.shapeChanged {
		t.shapeChanged = true
		t.schemaVersion = t.base.snap.SchemaVersion + 1
	}
	if table != 0 {
		t.shapeTables[table] = true
	}
}

func (t *Transaction) allocCatalogID() uint64 {
	id := t.nextCatalogID
	t.nextCatalogID++
	return id
}

func (t *Transaction) allocFileID() uint64 {
	id := t.nextFileID
	t.nextFileID++
	return id
}

// innerCopy returns the inner map outer[k] in a form the transaction may
// modify: the first write copies the map shared with the base snapshot.
func innerCopy[K1, K2 comparable, V any](t *Transaction, outer map[K1]map[K2]V, k K1) map[K2]V {
	inner, ok := outer[k]
	if ok && inner != nil && t.owned[reflect.ValueOf(inner).UnsafePointer()] {
		return inner
	}
	c := maps.Clone(inner)
	if c == nil {
		c = map[K2]V{}
	}
	outer[k] = c
	t.owned[reflect.ValueOf(c).UnsafePointer()] = true
	return c
}

func end(id SnapshotID) *SnapshotID { return &id }

func checkName(what, name string) error {
	if name == "" {
		return errorf(InvalidArgument, "%s name is empty", what)
	}
	if strings.ContainsRune(name, 0) {
		return errorf(InvalidArgument, "%s name %q contains a NUL byte", what, name)
	}
	if !utf8.ValidString(name) {
		return errorf(InvalidArgument, "%s name %q is not valid UTF-8", what, name)
	}
	return nil
}
