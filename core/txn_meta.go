package core

import (
	"maps"
	"slices"

	"github.com/moraine-go/moraine/core/keys"
)

// ---- tags and options ----

// SetTag sets (or replaces) a tag on a schema, table or view id.
func (t *Transaction) SetTag(object uint64, key, value string) error {
	if key == "" {
		return errorf(InvalidArgument, "tag key is empty")
	}
	tags := t.tagsFor(object)
	for i := range tags.Entries {
		e := &tags.Entries[i]
		if e.Key == key && e.End == nil {
			if e.Value == value {
				return nil
			}
			e.End = end(t.id)
		}
	}
	tags.Entries = append(tags.Entries, TagEntry{Versioned: Versioned{Begin: t.id}, Key: key, Value: value})
	t.putTags(tags)
	return nil
}

// RemoveTag ends a tag.
func (t *Transaction) RemoveTag(object uint64, key string) error {
	tags := t.tagsFor(object)
	found := false
	for i := range tags.Entries {
		e := &tags.Entries[i]
		if e.Key == key && e.End == nil {
			e.End = end(t.id)
			found = true
		}
	}
	if !found {
		return errorf(NotFound, "object %d has no tag %q", object, key)
	}
	t.putTags(tags)
	return nil
}

func (t *Transaction) tagsFor(object uint64) *Tags {
	if old, ok := t.next.tags[object]; ok {
		return &Tags{ObjectID: object, Entries: slices.Clone(old.Entries)}
	}
	return &Tags{ObjectID: object}
}

func (t *Transaction) putTags(tags *Tags) {
	t.setTags(tags)
	t.shape(0)
}

func (t *Transaction) setTags(tags *Tags) {
	t.next.tags[tags.ObjectID] = tags
	t.put(keys.CurrentTag(tags.ObjectID), encodeTags(tags))
}

// SetOption sets a ducklake_metadata value.
func (t *Transaction) SetOption(scope OptionScope, scopeID uint64, key, value string) error {
	if key == "" {
		return errorf(InvalidArgument, "option key is empty")
	}
	o := t.optionsFor(scope, scopeID)
	o.Values[key] = value
	t.putOptions(o)
	return nil
}

// UnsetOption removes a ducklake_metadata value.
func (t *Transaction) UnsetOption(scope OptionScope, scopeID uint64, key string) error {
	o := t.optionsFor(scope, scopeID)
	if _, ok := o.Values[key]; !ok {
		return errorf(NotFound, "option %q is not set in scope %s %d", key, scope, scopeID)
	}
	delete(o.Values, key)
	t.putOptions(o)
	return nil
}

func (t *Transaction) optionsFor(scope OptionScope, id uint64) *Options {
	o := &Options{Scope: scope, ScopeID: id, Values: map[string]string{}}
	if old, ok := t.next.options[scopeKey{scope, id}]; ok {
		o.Values = maps.Clone(old.Values)
	}
	return o
}

func (t *Transaction) putOptions(o *Options) {
	t.next.options[scopeKey{o.Scope, o.ScopeID}] = o
	t.put(keys.CurrentOption(uint64(o.Scope), o.ScopeID), encodeOptions(o))
}

// ---- partitioning, sorting, mappings ----

// SetPartitioning replaces a table's partition spec.
func (t *Transaction) SetPartitioning(table TableID, cols []PartitionColumn) (PartitionID, error) {
	if _, err := t.tableOf(table); err != nil {
		return 0, err
	}
	for _, pc := range cols {
		if _, ok := t.next.columns[table][pc.ColumnID]; !ok {
			return 0, errorf(NotFound, "partition column %d does not exist in table %d", pc.ColumnID, table)
		}
	}
	if old, ok := t.next.partitions[table]; ok {
		t.endPartition(old)
	}
	p := &Partition{TableID: table, ID: PartitionID(t.allocCatalogID()), Versioned: Versioned{Begin: t.id}, Columns: slices.Clone(cols)}
	t.next.partitions[table] = p
	t.put(keys.CurrentPartition(uint64(table), uint64(p.ID)), encodePartition(p))
	t.noteTable(chAlteredTable, table)
	t.shape(table)
	return p.ID, nil
}

// ClearPartitioning removes a table's partition spec.
func (t *Transaction) ClearPartitioning(table TableID) error {
	p, ok := t.next.partitions[table]
	if !ok {
		return errorf(NotFound, "table %d is not partitioned", table)
	}
	t.endPartition(p)
	t.noteTable(chAlteredTable, table)
	t.shape(table)
	return nil
}

func (t *Transaction) endPartition(p *Partition) {
	delete(t.next.partitions, p.TableID)
	retire(t, p, keys.KindPartition, encodePartition, uint64(p.TableID), uint64(p.ID))
}

// SetSorting replaces a table's sort order.
func (t *Transaction) SetSorting(table TableID, exprs []SortExpression) (SortID, error) {
	if _, err := t.tableOf(table); err != nil {
		return 0, err
	}
	if old, ok := t.next.sorts[table]; ok {
		t.endSort(old)
	}
	s := &Sort{TableID: table, ID: SortID(t.allocCatalogID()), Versioned: Versioned{Begin: t.id}, Expressions: slices.Clone(exprs)}
	t.next.sorts[table] = s
	t.put(keys.CurrentSort(uint64(table), uint64(s.ID)), encodeSort(s))
	t.noteTable(chAlteredTable, table)
	return s.ID, nil
}

// ClearSorting removes a table's sort order.
func (t *Transaction) ClearSorting(table TableID) error {
	s, ok := t.next.sorts[table]
	if !ok {
		return errorf(NotFound, "table %d has no sort order", table)
	}
	t.endSort(s)
	t.noteTable(chAlteredTable, table)
	return nil
}

func (t *Transaction) endSort(s *Sort) {
	delete(t.next.sorts, s.TableID)
	retire(t, s, keys.KindSort, encodeSort, uint64(s.TableID), uint64(s.ID))
}

// CreateMapping records a column mapping (immutable once created).
func (t *Transaction) CreateMapping(table TableID, typ string, names []NameMapping) (MappingID, error) {
	if _, err := t.tableOf(table); err != nil {
		return 0, err
	}
	m := &Mapping{TableID: table, ID: MappingID(t.allocCatalogID()), Type: typ, Names: slices.Clone(names)}
	t.setMapping(m)
	return m.ID, nil
}

func (t *Transaction) setMapping(m *Mapping) {
	t.next.mappings[m.ID] = m
	t.put(keys.CurrentMapping(uint64(m.TableID), uint64(m.ID)), encodeMapping(m))
}
