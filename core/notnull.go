package core

import (
	"maps"
	"slices"
)

// checkNoNulls refuses to make column c of table NOT NULL when what the
// catalog records shows NULLs in it, as DuckLake refuses SET NOT NULL on a
// column whose statistics count NULLs: the table's column statistics
// (contains_null), a live data file's column statistics (null_count), or a
// live inlined row holding NULL there. Inlined rows written under an
// older layout of the table (before a later column change) cannot be read
// by position from the current columns, so they are refused too, with
// the advice to flush them first. The error is Constraint and names the
// table, the column and the evidence.
func (t *Transaction) checkNoNulls(table TableID, c *Column) error {
	name := t.next.tables[table].Name
	refuse := func(format string, args ...any) error {
		return errorf(Constraint, "cannot make column %q of table %q NOT NULL: "+format, append([]any{c.Name, name}, args...)...)
	}
	if st := t.next.colStats[table][c.ID]; st != nil && st.ContainsNull != nil && *st.ContainsNull {
		return refuse("the table's column statistics record NULLs in it (contains_null)")
	}
	files := t.next.dataFiles[table]
	ids := slices.Sorted(maps.Keys(files))
	for _, id := range ids {
		if fs := t.next.fileStats[id][c.ID]; fs != nil && fs.NullCount != nil && *fs.NullCount > 0 {
			return refuse("data file %d (%s) holds %d NULLs in it (null_count)", id, files[id].Path, *fs.NullCount)
		}
	}
	// The current layout, as InlineInsert lays a row out; chunks since the
	// table's last shape change use it.
	top := t.next.topColumns(table)
	pos := slices.IndexFunc(top, func(x *Column) bool { return x.ID == c.ID })
	if c.Parent != nil {
		pos = -1 // a nested field: its values sit inside its parent's
	}
	layoutSince := SnapshotID(0)
	for _, sv := range t.next.schemaVersions {
		if sv.TableID == table && sv.BeginSnapshot > layoutSince {
			layoutSince = sv.BeginSnapshot
		}
	}
	for _, ch := range t.next.inlined[table] {
		if ch.archivedAt != nil {
			continue
		}
		for _, r := range ch.rows {
			if r.End != nil {
				continue // deleted (here too: a delete in this transaction ends it)
			}
			if pos < 0 {
				return refuse("it is a nested field and the table holds inlined rows (inlined row %d), which cannot be checked for NULLs inside their parent; flush the inlined data first", r.RowID)
			}
			if ch.begin < layoutSince || len(r.Values) != len(top) {
				return refuse("it holds inlined rows written under an earlier layout of the table (inlined row %d, snapshot %d), which cannot be checked for NULLs; flush the inlined data first", r.RowID, ch.begin)
			}
			if r.Values[pos].IsNull() {
				return refuse("inlined row %d holds NULL in it", r.RowID)
			}
		}
	}
	return nil
}
