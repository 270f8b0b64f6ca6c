package core

import "github.com/moraine-go/moraine/core/keys"

// versionedEntity is every model type with DuckLake begin/end snapshots.
type versionedEntity interface{ version() *Versioned }

func (x *Schema) version() *Versioned     { return &x.Versioned }
func (x *Table) version() *Versioned      { return &x.Versioned }
func (x *View) version() *Versioned       { return &x.Versioned }
func (x *Column) version() *Versioned     { return &x.Versioned }
func (x *DataFile) version() *Versioned   { return &x.Versioned }
func (x *DeleteFile) version() *Versioned { return &x.Versioned }
func (x *Partition) version() *Versioned  { return &x.Versioned }
func (x *Sort) version() *Versioned       { return &x.Versioned }
func (x *Macro) version() *Versioned      { return &x.Versioned }

// recordEnd writes the history record of e's current version, ended at
// this transaction's snapshot — unless that version began in this very
// transaction, so nobody ever saw it. The caller deletes or replaces the
// current key.
func recordEnd[E any, P interface {
	*E
	versionedEntity
}](t *Transaction, e P, kind keys.Kind, encode func(P) []byte, comps ...uint64) {
	if e.version().Begin == t.id {
		return
	}
	ended := *e
	P(&ended).version().End = end(t.id)
	t.put(keys.History(kind, uint64(t.id), comps...), encode(&ended))
}

// retire ends e: its current key goes and its history records it.
func retire[E any, P interface {
	*E
	versionedEntity
}](t *Transaction, e P, kind keys.Kind, encode func(P) []byte, comps ...uint64) {
	t.del(keys.Current(kind, comps...))
	recordEnd(t, e, kind, encode, comps...)
}

// replaceVersion ends old's version and makes nv (the same entity, changed)
// live from this transaction's snapshot.
func replaceVersion[E any, P interface {
	*E
	versionedEntity
}](t *Transaction, old, nv P, kind keys.Kind, encode func(P) []byte, comps ...uint64) {
	recordEnd(t, old, kind, encode, comps...)
	nv.version().Begin = t.id
	nv.version().End = nil
	t.put(keys.Current(kind, comps...), encode(nv))
}
