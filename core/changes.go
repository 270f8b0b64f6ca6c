package core

import (
	"fmt"
	"strconv"
	"strings"
)

// Change kinds of DuckLake's changes_made grammar (ducklake_snapshot_changes).
// Entries are comma separated; created_* entries carry quoted names
// (created_schema:"s", created_table:"s"."t"), the others a numeric id.
const (
	chCreatedSchema      = "created_schema"
	chDroppedSchema      = "dropped_schema"
	chCreatedTable       = "created_table"
	chAlteredTable       = "altered_table"
	chDroppedTable       = "dropped_table"
	chCreatedView        = "created_view"
	chAlteredView        = "altered_view"
	chDroppedView        = "dropped_view"
	chCreatedScalarMacro = "created_scalar_macro"
	chCreatedTableMacro  = "created_table_macro"
	chDroppedScalarMacro = "dropped_scalar_macro"
	chDroppedTableMacro  = "dropped_table_macro"
	chInsertedInto       = "inserted_into_table"
	chDeletedFrom        = "deleted_from_table"
	chCompacted          = "compacted_table"
	chMergeAdjacent      = "merge_adjacent"
	chRewriteDelete      = "rewrite_delete"
	chFlushedInlined     = "flushed_inlined"
	chInlinedInsert      = "inlined_insert" // rows inlined into the catalog
	chInlinedDelete      = "inlined_delete" // inlined rows deleted
)

var knownChange = map[string]bool{
	chCreatedSchema: true, chDroppedSchema: true, chCreatedTable: true, chAlteredTable: true, chDroppedTable: true,
	chCreatedView: true, chAlteredView: true, chDroppedView: true, chCreatedScalarMacro: true, chCreatedTableMacro: true,
	chDroppedScalarMacro: true, chDroppedTableMacro: true, chInsertedInto: true, chDeletedFrom: true, chCompacted: true,
	chMergeAdjacent: true, chRewriteDelete: true, chFlushedInlined: true, chInlinedInsert: true, chInlinedDelete: true,
}

// change is one entry of changes_made.
type change struct {
	Kind string
	ID   uint64   // numeric entries
	Name []string // created_* entries: qualified name parts, unquoted
}

func (c change) String() string {
	if c.Name != nil {
		parts := make([]string, len(c.Name))
		for i, n := range c.Name {
			parts[i] = quoteIdent(n)
		}
		return c.Kind + ":" + strings.Join(parts, ".")
	}
	return c.Kind + ":" + strconv.FormatUint(c.ID, 10)
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func formatChanges(cs []change) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, ",")
}

// parseChanges splits a changes_made string. Unknown kinds are kept (the
// classifier treats them as conflicting with everything).
func parseChanges(s string) ([]change, error) {
	var out []change
	i := 0
	for i < len(s) {
		colon := strings.IndexByte(s[i:], ':')
		if colon < 0 {
			return nil, fmt.Errorf("changes_made %q: entry at %d has no ':'", s, i)
		}
		c := change{Kind: s[i : i+colon]}
		i += colon + 1
		if i < len(s) && s[i] == '"' {
			// One or more quoted names joined by '.'.
			for {
				if i >= len(s) || s[i] != '"' {
					return nil, fmt.Errorf("changes_made %q: expected a quoted name at %d", s, i)
				}
				i++
				var b strings.Builder
				for {
					if i >= len(s) {
						return nil, fmt.Errorf("changes_made %q: unterminated quoted name", s)
					}
					if s[i] == '"' {
						if i+1 < len(s) && s[i+1] == '"' {
							b.WriteByte('"')
							i += 2
							continue
						}
						i++
						break
					}
					b.WriteByte(s[i])
					i++
				}
				c.Name = append(c.Name, b.String())
				if i < len(s) && s[i] == '.' {
					i++
					continue
				}
				break
			}
		} else {
			end := strings.IndexByte(s[i:], ',')
			if end < 0 {
				end = len(s) - i
			}
			v := s[i : i+end]
			id, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				// DuckLake writes bare names in older versions; keep them.
				c.Name = []string{v}
			} else {
				c.ID = id
			}
			i += end
		}
		out = append(out, c)
		if i < len(s) {
			if s[i] != ',' {
				return nil, fmt.Errorf("changes_made %q: expected ',' at %d", s, i)
			}
			i++
		}
	}
	return out, nil
}

// changeSet is what one commit did, for conflict classification.
type changeSet struct {
	Snapshot     SnapshotID
	Changes      []change
	DeletedFiles []DataFileID // targets of deleted_from_table; empty: untargeted
}

func (c changeSet) touchesSchemaList() bool {
	for _, ch := range c.Changes {
		if ch.Kind == chCreatedSchema || ch.Kind == chDroppedSchema {
			return true
		}
	}
	return false
}

// tableKinds groups a change set's per-table kinds.
func (c changeSet) tableKinds() map[uint64]map[string]bool {
	out := map[uint64]map[string]bool{}
	add := func(id uint64, k string) {
		if out[id] == nil {
			out[id] = map[string]bool{}
		}
		out[id][k] = true
	}
	for _, ch := range c.Changes {
		switch ch.Kind {
		case chInsertedInto, chDeletedFrom, chCompacted, chAlteredTable, chDroppedTable, chFlushedInlined, chInlinedInsert, chInlinedDelete:
			add(ch.ID, ch.Kind)
		case chMergeAdjacent, chRewriteDelete:
			add(ch.ID, chCompacted)
		}
	}
	return out
}

// tableConflicts lists, per kind, the kinds it conflicts with on the same
// table (the relation is symmetric; see conflictingKinds). The inlined
// kinds are DuckLake's own rules (CheckForConflicts): an inlined insert
// conflicts with an alter or a drop; an inlined delete with those, another
// inlined delete and a flush of the inlined rows.
var tableConflicts = map[string][]string{
	chInlinedInsert:  {chAlteredTable, chDroppedTable},
	chInlinedDelete:  {chAlteredTable, chDroppedTable, chInlinedDelete, chFlushedInlined},
	chInsertedInto:   {chAlteredTable, chDeletedFrom, chDroppedTable},
	chDeletedFrom:    {chAlteredTable, chCompacted, chDroppedTable, chInsertedInto, chFlushedInlined},
	chAlteredTable:   {chAlteredTable, chDroppedTable},
	chCompacted:      {chDeletedFrom, chDroppedTable, chCompacted},
	chDroppedTable:   {chDroppedTable},
	chFlushedInlined: {chFlushedInlined, chDroppedTable, chAlteredTable},
}

func conflictingKinds(a, b string) bool {
	for _, k := range tableConflicts[a] {
		if k == b {
			return true
		}
	}
	for _, k := range tableConflicts[b] {
		if k == a {
			return true
		}
	}
	return false
}

// schemaNameOf resolves a schema id to its name (for "created inside a
// schema the other dropped").
type schemaNameOf func(SchemaID) (string, bool)

// classify decides whether mine (not yet landed, prepared against an older
// head) truly conflicts with theirs (landed since). It returns a reason
// naming what mine lost to, or "" when the race is benign and mine can be
// re-run on top of theirs.
func classify(mine, theirs changeSet, schemaName schemaNameOf) string {
	for _, cs := range []changeSet{mine, theirs} {
		for _, ch := range cs.Changes {
			if !knownChange[ch.Kind] {
				return fmt.Sprintf("snapshot %d recorded an unknown change %q", theirs.Snapshot, ch.Kind)
			}
		}
	}
	if mine.touchesSchemaList() && theirs.touchesSchemaList() {
		return fmt.Sprintf("both this commit and snapshot %d changed the list of schemas", theirs.Snapshot)
	}
	// A relation created inside a schema the other side dropped.
	for _, pair := range [][2]changeSet{{mine, theirs}, {theirs, mine}} {
		for _, d := range pair[1].Changes {
			if d.Kind != chDroppedSchema {
				continue
			}
			name, ok := schemaName(SchemaID(d.ID))
			for _, c := range pair[0].Changes {
				switch c.Kind {
				case chCreatedTable, chCreatedView, chCreatedScalarMacro, chCreatedTableMacro:
					if !ok || (len(c.Name) > 1 && c.Name[0] == name) {
						return fmt.Sprintf("snapshot %d dropped schema %d, which this commit creates a relation in", theirs.Snapshot, d.ID)
					}
				}
			}
		}
	}
	mk, tk := mine.tableKinds(), theirs.tableKinds()
	for table, mineKinds := range mk {
		theirKinds, ok := tk[table]
		if !ok {
			continue
		}
		for a := range mineKinds {
			for b := range theirKinds {
				if a == chDeletedFrom && b == chDeletedFrom {
					if deletesOverlap(mine.DeletedFiles, theirs.DeletedFiles) {
						return fmt.Sprintf("snapshot %d also deleted from table %d (overlapping data files)", theirs.Snapshot, table)
					}
					continue
				}
				if conflictingKinds(a, b) {
					return fmt.Sprintf("snapshot %d %s table %d, which this commit %s", theirs.Snapshot, pastTense(b), table, pastTense(a))
				}
			}
		}
	}
	// Views: altering or dropping the same view.
	views := func(cs changeSet) map[uint64]string {
		out := map[uint64]string{}
		for _, ch := range cs.Changes {
			if ch.Kind == chAlteredView || ch.Kind == chDroppedView {
				out[ch.ID] = ch.Kind
			}
		}
		return out
	}
	tv := views(theirs)
	for id := range views(mine) {
		if _, ok := tv[id]; ok {
			return fmt.Sprintf("snapshot %d also altered or dropped view %d", theirs.Snapshot, id)
		}
	}
	// Macros: dropping the same macro, or creating one of the same name.
	macros := func(cs changeSet) (dropped map[uint64]bool, created map[string]bool) {
		dropped, created = map[uint64]bool{}, map[string]bool{}
		for _, ch := range cs.Changes {
			switch ch.Kind {
			case chDroppedScalarMacro, chDroppedTableMacro:
				dropped[ch.ID] = true
			case chCreatedScalarMacro, chCreatedTableMacro:
				created[ch.Kind+"\x00"+strings.Join(ch.Name, "\x00")] = true
			}
		}
		return dropped, created
	}
	md, mc := macros(mine)
	td, tc := macros(theirs)
	for id := range md {
		if td[id] {
			return fmt.Sprintf("snapshot %d also dropped macro %d", theirs.Snapshot, id)
		}
	}
	for name := range mc {
		if tc[name] {
			kind, qualified, _ := strings.Cut(name, "\x00")
			return fmt.Sprintf("snapshot %d also %s %s", theirs.Snapshot, strings.ReplaceAll(kind, "_", " "), strings.ReplaceAll(qualified, "\x00", "."))
		}
	}
	return ""
}

func pastTense(kind string) string {
	switch kind {
	case chInsertedInto:
		return "inserted into"
	case chDeletedFrom:
		return "deleted from"
	case chAlteredTable:
		return "altered"
	case chDroppedTable:
		return "dropped"
	case chCompacted:
		return "compacted"
	case chFlushedInlined:
		return "flushed inlined rows of"
	case chInlinedInsert:
		return "inserted inlined rows into"
	case chInlinedDelete:
		return "deleted inlined rows from"
	}
	return kind
}

// deletesOverlap: two deletes on one table conflict unless both name their
// target files and the sets are disjoint.
func deletesOverlap(a, b []DataFileID) bool {
	if len(a) == 0 || len(b) == 0 {
		return true
	}
	set := make(map[DataFileID]bool, len(a))
	for _, f := range a {
		set[f] = true
	}
	for _, f := range b {
		if set[f] {
			return true
		}
	}
	return false
}

// changeSetOf describes a concurrent snapshot for classification, from its
// changes_made string (an unparseable one conflicts with everything) and
// its delete targets.
func changeSetOf(id SnapshotID, changesMade string, deleted []DataFileID) changeSet {
	chs, err := parseChanges(changesMade)
	if err != nil {
		chs = []change{{Kind: "unparseable"}}
	}
	return changeSet{Snapshot: id, Changes: chs, DeletedFiles: deleted}
}
