package core

// format.go: the structural format ladder (sys/format), the check every
// open runs against it, the additive format raise, and the adoption and
// demotion stamps the commit-log boundary (RFC 0024) writes.
//
// The ladder:
//
//	 9  legacy base.
//	10  legacy log-resident: a format-9 catalog adopted by a commit log.
//	11  adds the persistent name directory (index 07 04: name -> id of
//	    schemas, tables and views within their parent, maintained by every
//	    commit) and the commit_log_batch_origin field, which from here on is
//	    what marks a catalog as log-resident.
//	12  adds the delete-file target lookup (index 07 05: data file -> its
//	    live delete files, maintained by every commit).
//	13  adds DuckLake 1.0's entities: macros (current/macro; not in the
//	    name directory) and the data and delete files' partial_max. Additive: a catalog at 12 has none of them, so the
//	    stamp is all the step needs; a transaction writing one on a
//	    catalog below 13 is refused, naming the raise.
//
// Reaching 11 and 12 needs the derived indexes built over existing data:
// those are migration units (migrate.go), run explicitly by an operator,
// never on open. RaiseFormat stamps only additive steps (12 -> 13).

import (
	"context"
	"fmt"

	"github.com/moraine-go/moraine/core/keys"
	"github.com/moraine-go/moraine/core/slate"
)

// formatStep is one rung of the ladder. A rewriting step (additive false)
// is a migration unit; an additive one needs nothing but the stamp.
type formatStep struct {
	from, to uint64
	unit     string
	additive bool
}

// formatLadder lists every step, at most one per from-format. Tests may
// swap it (see the export hooks).
var formatLadder = []formatStep{
	{from: FormatLegacy, to: FormatNameDirectory, unit: "9->11"},
	{from: FormatLegacyLog, to: FormatNameDirectory, unit: "10->11"},
	{from: FormatNameDirectory, to: FormatDeleteTargets, unit: "11->12"},
	{from: FormatDeleteTargets, to: FormatDuckLake10, unit: "12->13", additive: true},
}

func stepFrom(format uint64) (formatStep, bool) {
	for _, s := range formatLadder {
		if s.from == format {
			return s, true
		}
	}
	return formatStep{}, false
}

// logResident reports whether a catalog's commits go through a commit log:
// legacy format 10, or any format carrying a commit-log origin.
func (f *formatRecord) logResident() bool {
	return f.Format == FormatLegacyLog || f.Origin != nil
}

func (f *formatRecord) originText() string {
	if f.Origin == nil {
		return "none"
	}
	return fmt.Sprint(*f.Origin)
}

// hasNameDirectory and hasDeleteTargets say which derived indexes a catalog
// at this format keeps complete (and so which lookups may use them).
func hasNameDirectory(format uint64) bool { return format >= FormatNameDirectory }
func hasDeleteTargets(format uint64) bool { return format >= FormatDeleteTargets }

// hasDuckLake10 says whether a catalog at this format may hold DuckLake
// 1.0's entities (macros, partial_max).
func hasDuckLake10(format uint64) bool { return format >= FormatDuckLake10 }

// currentFormat is the format record of a lake this build creates.
func currentFormat() formatRecord {
	return formatRecord{Format: FormatCurrent, WriterVersion: WriterVersion}
}

// commitLogLibrary names what a log-resident catalog needs, for messages.
const commitLogLibrary = "the moraine commit-log library (a commit-log provider registered by the build that links it)"

// checkKnownFormat refuses a format this build cannot read at all: one
// from the future (first, before anything else is looked at), or one older
// than the ladder.
func checkKnownFormat(f *formatRecord) error {
	if f.Format > FormatCurrent {
		return errorf(Migration, "the catalog is at format %d, newer than this build understands (formats %d to %d): upgrade moraine", f.Format, MinFormat, FormatCurrent)
	}
	if f.Format < MinFormat {
		return errorf(Migration, "the catalog is at format %d, older than this build opens (formats %d to %d) or migrates: bring it to format 9 with an older moraine release first", f.Format, MinFormat, FormatCurrent)
	}
	return nil
}

// logResidentKind names a log-resident catalog's format as refusals do.
func (f *formatRecord) logResidentKind() string {
	kind := "format 10, a legacy log-resident catalog"
	if f.Format != FormatLegacyLog {
		kind = fmt.Sprintf("format %d with commit_log_batch_origin %d", f.Format, *f.Origin)
	} else if f.Origin != nil {
		kind += fmt.Sprintf(", commit_log_batch_origin %d", *f.Origin)
	}
	return kind
}

// refuseLogResident is the refusal a log-resident catalog gets from a path
// without a commit-log provider; needs says what was attempted and why it
// needs the library ("opening it needs").
func refuseLogResident(f *formatRecord, needs string) error {
	e := errorf(Migration, "the catalog is log-resident (%s): %s %s, and this process has none: use a moraine build that links the commit-log library", f.logResidentKind(), needs, commitLogLibrary)
	e.needsLog = true
	return e
}

// validateFormat is validate_format, run by every open path, in this
// order: an unknown future format, then a catalog in the middle of a
// migration, then a log-resident catalog when no commit-log provider is
// present. hasProvider is true on the opens that go through a commit-log
// provider (loadFormat's callers in commitlog_roles.go) and on MoveWal,
// which refuses a log-resident catalog itself; the single writer and a
// provider-less read-only open pass false.
func validateFormat(ctx context.Context, kv kvReader, f *formatRecord, hasProvider bool) error {
	if err := checkKnownFormat(f); err != nil {
		return err
	}
	m, ok, err := readMigration(ctx, kv)
	if err != nil {
		return err
	}
	if ok {
		return errorf(Migration, "the catalog is in the middle of a format migration (%s): finish it with `moraine migrate <uri>` (or core.Migrate) before opening it", m.describe())
	}
	if f.logResident() && !hasProvider {
		return refuseLogResident(f, "opening it needs")
	}
	return nil
}

func readMigration(ctx context.Context, kv kvReader) (*migrationRecord, bool, error) {
	v, ok, err := kv.Get(ctx, keys.Migration())
	if err != nil || !ok {
		return nil, false, storeErr(err, "reading the migration marker")
	}
	m, err := decodeMigration(v)
	if err != nil {
		return nil, false, err
	}
	return m, true, nil
}

func (m *migrationRecord) describe() string {
	unit := "an unnamed unit"
	if m.Unit != "" {
		unit = "unit " + m.Unit
	}
	return fmt.Sprintf("%s, from format %d to %d", unit, m.From, m.To)
}

// FormatRaise reports what RaiseFormat did or, on a dry run, would do.
type FormatRaise struct {
	From, To uint64
	// Written is true when the format record was rewritten.
	Written bool
	// Pending names the migration units still needed above To: only
	// Migrate (`moraine migrate`) runs them.
	Pending []string
}

// additiveCeiling is the highest format reachable from format through
// additive steps only.
func additiveCeiling(format uint64) uint64 {
	for {
		s, ok := stepFrom(format)
		if !ok || !s.additive || s.to > FormatCurrent {
			return format
		}
		format = s.to
	}
}

// pendingUnits lists the rewriting units between format and FormatCurrent.
func pendingUnits(format uint64) []string {
	var out []string
	for format < FormatCurrent {
		s, ok := stepFrom(format)
		if !ok {
			break
		}
		if !s.additive {
			out = append(out, s.unit)
		}
		format = s.to
	}
	return out
}

// RaiseFormat stamps the catalog with the highest format it reaches
// through additive steps only (steps that need no existing data rewritten;
// rewriting steps are migration units: see Migrate). It writes exactly one
// key, sys/format, and stamps no head: it changes no catalog state, so it
// never moves the head's batch counter (which a commit log derives its slot
// numbers from). The origin is preserved. With dryRun nothing is written.
// Commits on this handle wait while the stamp is written and maintain the
// new format's shapes from then on.
func (c *Catalog) RaiseFormat(ctx context.Context, dryRun bool) (FormatRaise, error) {
	if c.readOnly {
		return FormatRaise{}, errorf(InvalidArgument, "the catalog was opened read-only; raising its format needs a read-write open")
	}
	if err := c.checkOpen(); err != nil {
		return FormatRaise{}, err
	}
	if c.writerDB() == nil {
		return FormatRaise{}, errorf(InvalidArgument, "raising the format writes the store directly: on a commit log, take the store first (TakeStore)")
	}
	c.fmtMu.Lock()
	defer c.fmtMu.Unlock()
	f, ok, err := readFormat(ctx, c.db)
	if err != nil {
		return FormatRaise{}, err
	}
	if !ok {
		return FormatRaise{}, errorf(Corruption, "the catalog has no format record")
	}
	if err := checkKnownFormat(f); err != nil {
		return FormatRaise{}, err
	}
	to := additiveCeiling(f.Format)
	r := FormatRaise{From: f.Format, To: to, Pending: pendingUnits(to)}
	if to == f.Format || dryRun {
		return r, nil
	}
	nf := formatRecord{Format: to, WriterVersion: WriterVersion, Origin: f.Origin}
	if err := writeFormatRecord(ctx, c.db, &nf); err != nil {
		return FormatRaise{}, err
	}
	c.format = nf
	r.Written = true
	return r, nil
}

// writeFormatRecord writes sys/format alone, durably, with no head stamp.
func writeFormatRecord(ctx context.Context, db *slate.DB, f *formatRecord) error {
	b := slate.NewWriteBatch()
	b.Put(keys.Format(), encodeFormat(f))
	if _, err := db.Write(ctx, b, slate.WriteOptions{}); err != nil {
		return storeErr(err, "writing the format record (format %d)", f.Format)
	}
	return nil
}

// adoptionStamp is the format record that makes a native catalog
// log-resident, for the commit-log boundary to race as its log's first
// slot: a legacy format-9 catalog becomes format 10, formats 11 and 12 keep
// their number; either way the origin is set to the head batch counter the
// first slot stands on (the head the adoption is prepared against), so a
// batch prepared against counter b races slot b+1-origin. An already
// log-resident catalog is refused.
func adoptionStamp(f *formatRecord, head Head) (formatRecord, error) {
	if err := checkKnownFormat(f); err != nil {
		return formatRecord{}, err
	}
	if f.logResident() {
		return formatRecord{}, errorf(InvalidArgument, "the catalog is already log-resident (format %d, commit_log_batch_origin %s)", f.Format, f.originText())
	}
	origin := head.BatchSeq
	nf := formatRecord{Format: f.Format, WriterVersion: WriterVersion, Origin: &origin}
	if f.Format == FormatLegacy {
		nf.Format = FormatLegacyLog
	}
	return nf, nil
}

// demotionStamp is the format record that returns a log-resident catalog
// to the single-writer path: the origin is cleared and the directories
// stay (11 and 12 keep their number); a legacy format 10, which marks
// log residency by its number, goes back to 9.
func demotionStamp(f *formatRecord) (formatRecord, error) {
	if err := checkKnownFormat(f); err != nil {
		return formatRecord{}, err
	}
	if !f.logResident() {
		return formatRecord{}, errorf(InvalidArgument, "the catalog is not log-resident (format %d); there is nothing to demote", f.Format)
	}
	nf := formatRecord{Format: f.Format, WriterVersion: WriterVersion}
	if f.Format == FormatLegacyLog {
		nf.Format = FormatLegacy
	}
	return nf, nil
}

// adoptStore and demoteStore write the adoption or demotion stamp directly
// into a store held by db (sys/format only, no head stamp). The commit-log
// boundary races the adoption stamp as its log's first slot instead; these
// serve the folder's direct path and tests.
func adoptStore(ctx context.Context, db *slate.DB) (formatRecord, error) {
	f, ok, err := readFormat(ctx, db)
	if err == nil && !ok {
		err = errorf(Corruption, "the catalog has no format record")
	}
	if err != nil {
		return formatRecord{}, err
	}
	head, ok, err := readHead(ctx, db)
	if err == nil && !ok {
		err = errorf(Corruption, "the catalog has no head record")
	}
	if err != nil {
		return formatRecord{}, err
	}
	nf, err := adoptionStamp(f, head)
	if err != nil {
		return formatRecord{}, err
	}
	return nf, writeFormatRecord(ctx, db, &nf)
}

func demoteStore(ctx context.Context, db *slate.DB) (formatRecord, error) {
	f, ok, err := readFormat(ctx, db)
	if err == nil && !ok {
		err = errorf(Corruption, "the catalog has no format record")
	}
	if err != nil {
		return formatRecord{}, err
	}
	nf, err := demotionStamp(f)
	if err != nil {
		return formatRecord{}, err
	}
	return nf, writeFormatRecord(ctx, db, &nf)
}
