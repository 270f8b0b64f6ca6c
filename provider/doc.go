// Package provider is moraine's in-tree commit log: the slot protocol
// behind core.CommitLogProvider (RFC 0024, ARCHITECTURE.md §6–7). Every
// commit is one slot object written create-if-absent; the bucket picks one
// winner per slot; the catalog's store (the engine, core/slate) is a fold of
// the log. This comment is the protocol's specification: its names,
// numbers and bytes are wire format.
//
// The package depends on core and core/slate through their public
// interfaces only, and core never imports it: a provider is plugged in per
// open (core.CatalogOptions.CommitLog) or registered once per process
// (core.RegisterCommitLog).
//
// # Objects
//
// A log lives in the log store (the catalog's WAL store, else its store)
// under the catalog's path:
//
//	<path>/log/<20-digit slot>   one per slot, written create-if-absent, never changed
//	<path>/log/base              the base copy: slot 0's base, derived from slot 0
//	<path>/log/floor             the truncation floor, moved forward by compare-and-swap
//
// (path "" puts them under log/.) Slot keys sort before base and floor, so
// a LIST of the directory from a slot's key returns later slots first.
//
// # Framing
//
// All three objects share one frame:
//
//	+--------+---------+-----------------+-------------------------------+
//	| magic  | version | CRC32C          | payload                       |
//	| 4 B    | 1 B     | u32 big-endian  | protobuf wire format          |
//	+--------+---------+-----------------+-------------------------------+
//
// The magic names the kind: "MRNL" a slot envelope, "MRNB" the base copy,
// "MRNF" the floor. The version is 1 (EnvelopeVersion); a reader refuses a
// newer one. The CRC32C (Castagnoli) covers the payload. Payload fields
// (numbers are wire format, never reused; decoders skip numbers and wire
// types they do not know, so fields can be added without a version bump):
//
//	Slot:   1 txn_id (16 bytes, required)  2 slot  3 head (Head)
//	        4 changes_made (string)  5 deleted_data_files (packed varints;
//	        an unpacked varint is accepted too)  6 writes (Write, repeated,
//	        in order)  7 base (Base; slot 0 only, required there)
//	        8 committer (16 bytes: the offering catalog open's id, which
//	        the catalog's contention policy takes turns by; optional)
//	Head:   1 snapshot_id  2 batch_seq
//	Write:  1 key (required)  2 value (required for a put, even empty)
//	        3 delete (varint 1; a delete carries no value)
//	Base:   1 wal_base (>= 1)  2 seq_base (>= 1)  3 origin_batch_seq
//	        4 stamp txn_id (16 bytes; the base copy only)
//	Floor:  1 floor (slot)
//
// Zero integers are omitted. Decoders never panic: every refusal (bad
// magic, version, checksum, truncation, a malformed or contradictory field)
// wraps ErrCorrupt. A slot object whose envelope names another slot, a
// slot 0 without a base, or another slot with one, is corrupt too.
//
// # Slots and the engine
//
// The base (core.LogBase) fixes the mapping once, at adoption: slot k is
// the engine's WAL id WalBase+k, and its rows carry seq SeqBase+k (one slot,
// one batch, one seq; a delete write is a tombstone row; a later write of a
// key in one slot replaces an earlier one). WalBase lies past every WAL id
// the store's own WAL used and SeqBase past every seq it held, because the
// engine's WAL ids and seqs may never move backwards.
//
// # Adoption: the base and slot 0
//
// Adopt races slot 0 carrying the adoption stamp and the base in one
// envelope, so the base and slot 0 land in one PUT: whoever holds slot 0
// defines the base, and no reader can ever see one without the other. The
// winner and every loser then write the base copy at log/base
// create-if-absent from slot 0's content (or check the copy there agrees:
// a disagreement is corruption). The copy exists so the base survives the
// truncation of slot 0, and the collector never deletes slot 0 before it
// exists. Finding the base costs one GET of the copy; when the copy is
// missing (a crash between the two writes) it is derived from slot 0 and
// written, and when both are missing the log is not adopted.
//
// # The race
//
// A committer offers a batch for slot k (the catalog derives k from the head
// the batch was prepared against, core.LogBase.SlotFor). The linearization
// point of a commit is its slot's create-if-absent PUT: it either creates
// the object (won) or finds it taken (lost, ErrExists). Nothing else is
// written; there is no lock, lease or server.
//
// A committer only races slot k while it knows slot k-1 is the log's tail,
// so a slot never lands above a missing one. It knows that from its own
// last win, from a LIST that reached the end of the log, or from its
// session's reader, each recorded with the moment it was true. When that
// knowledge is stale or missing it first LISTs from the highest slot it
// knows (one page); k at or below the tail is then lost without a write,
// and k above tail+1 is refused (InvalidArgument), since racing it would
// leave a hole. An uncontended commit after the committer's own therefore
// costs one PUT and nothing else.
//
// On a loss, Landed holds every slot from k to the tail, read directly one
// after another until one is absent (that miss is the tail observation; no
// LIST), the rest by one LIST and parallel GETs past eight, for the catalog
// to fold or wait for before it re-prepares. Probe (core.SlotProber) reads
// the slots from a given one on the same way (none when it has not
// landed): the catalog's contention policy looks before it offers a slot a
// peer's turn is likely to have taken.
//
// # One retry policy
//
// A committer writes a slot once per Offer (and slot 0 once per Adopt).
// Retrying a transient failure is the transport's alone: core puts
// objstore.WithRetry in front of every store it hands a provider (at most
// RetryOptions.MaxAttempts tries, 8 by default, with full-jitter backoff
// from 10 ms up to 1 s; a try that failed transiently and a later ErrExists
// are resolved there by reading the object back). What reaches the
// committer is then one of three:
//
//   - ErrExists: the race is lost.
//   - A definite failure (access denied, an invalid request, a missing
//     bucket): nothing was written; the error is core.Store.
//   - An ambiguous one (the transport's ErrOutcomeUnknown after its tries, a
//     transient error from a store without the transport, a lost
//     acknowledgement, an error that is not the store's own): slot k is read
//     back once. Our txn id means won, another's means lost; absent, or a
//     failed read, is core.OutcomeUnknown (the write may still land late),
//     never a second write.
//
// A create-if-absent on a slot that was taken, folded and truncated would
// succeed again, below the floor (a "zombie"). That cannot happen while the
// committer's tail knowledge is younger than half the retention (a slot
// taken after it is younger than the retention, which the collector keeps).
// When the knowledge is older by the time the PUT returns, the committer
// reads the floor after winning: at or below k the win stands; above k, the
// slot is a zombie, deleted, and the race reported lost with Landed from
// the floor (the folded store holds everything below it). Adoption checks
// the same way, through the base copy: a won slot 0 whose copy names
// another stamp is a zombie once the floor is above 0.
//
// # Reading, holes and truncation
//
// Slots from the floor to the tail are all present. A missing slot at or
// above the floor with a present slot after it (or one the reader already
// saw) is a hole: corruption, never an end of log. A missing slot below the
// floor was truncated: slate.ErrWalTruncated (core.SnapshotExpired from the
// Committer): the folded store holds it. The floor is re-read before a
// missing slot is judged, because the collector moves it before deleting.
//
// The Reader (slate.WalReader) maps WAL ids to slots; ids below WalBase are
// the store's own WAL, which adoption flushed into the tree, and are
// skipped. An open-ended iterator returns (nil, nil) at the current tail and
// continues on the next call; each call that reaches the tail costs one
// LIST page, each slot one GET (up to ReadConcurrency in flight).
// LastWalID is the tail's WAL id. The Committer's Tail is one LIST page from
// the highest slot known: an idle committer makes no requests at all.
//
// # Opening a folder
//
// WriterInit (slate.WriterInit) opens an engine writer over the log. Its
// FenceAndInit requires an adopted log and checks that the store and the
// log agree, refusing (corruption) what would make the engine skip slots:
//   - the replay point (the manifest's ReplayAfterWalID) at or past WalBase
//     names the last folded slot j: slot j or a later one must exist (the
//     collector keeps j), and the tree must hold slot j's seq (unless the
//     slots in between carried no writes);
//   - the manifest's NextWalID may not exceed the tail's WAL id + 1;
//   - a replay point below WalBase (nothing folded yet) with seqs at or past
//     SeqBase in the tree is refused.
//
// While nothing is folded, it also runs the store's own WAL fence (the
// native FenceAndInit, under the engine epoch just claimed), so a
// provider-less writer still running on that WAL can make nothing durable
// any more, and refuses the open if that WAL holds rows above the replay
// point the tree lacks (a crashed writer's: open the store on its own WAL
// and flush it first) or any rows at ids past WalBase. After the first fold
// the native WAL is fenced and the catalog's format stamp keeps
// provider-less writers out.
//
// It then returns a replay iterator over the slots whose WAL ids are in
// (ReplayAfterWalID, tail at open] (slot 0's stamp included), and a writer:
//   - Append takes one batch at seq s, which is slot k = s-SeqBase, and
//     returns at once without I/O. Seqs below SeqBase, a slot the store
//     already holds, or mixed seqs are refused (slate.ErrInvalid: the folder
//     writes only slots, in order).
//   - The status (LastFlushedWalID = WalBase+k, LastFlushedSeq = SeqBase+k)
//     moves to slot k at once when the session knows k landed, which is the
//     folder's normal case (it applies what its committer won or read).
//     Otherwise the writer's goroutine confirms it with one LIST first; a
//     slot the log lacks closes the writer with ErrNotLanded, so a store can
//     never get ahead of its log (the engine flushes nothing that is not
//     durable). Skipped slots are allowed only if they carry no writes,
//     which the goroutine checks before the status passes them. A WalFlushed
//     event follows on that goroutine.
//   - Flush waits for the confirmations, then checks the engine epoch (one
//     manifest refresh): a writer another one fenced closes with
//     slate.ErrFenced, as a native WAL does at its next upload.
//   - ShouldFlushMemtable is true once FlushSlots slots are past the replay
//     point, so a cold open replays at most about that many slots.
//
// The writer keeps the WriterManifest FenceAndInit was handed, for that
// epoch check.
//
// # What a stale folder can and cannot do
//
// The engine epoch is the folder's fence. A folder fenced by a newer one
// can still apply, to its own memory, slots that landed in the log (their
// durability is the log's, not its own), and it can still race slots as a
// committer: the log has no owner. It cannot publish anything to the store:
// every manifest update is a compare-and-swap the newer epoch fails (its
// L0 flush and its Flush report ErrFenced, its engine closes at its next
// manifest poll), and it never writes the log as a folder. It cannot make
// the newer folder skip a slot: the replay point only moves through the
// newer folder's own manifest updates.
//
// # Truncation
//
// Collect (slate.WalGC, reached through the engine's RunGC) receives the
// WAL ranges still read: the latest manifest's (ReplayAfterWalID, ∞) and
// (ReplayAfterWalID, NextWalID) of every manifest a reader's checkpoint
// pins. The replay-point slot R is the slot just below the lowest
// referenced start. Collect deletes a prefix of the log: the slots below R
// older than max(minAge, Retention), in order, stopping at the first one
// too young. It raises the floor past them first (PutIfMatch, or
// PutIfAbsent for the first floor: it never moves backwards), then deletes
// them. R itself is kept, so the tail is never empty and the next committer
// always finds the slot its race follows; a slot inside a checkpoint's range
// is never below R. Slot 0 goes only once the base copy exists. Leftovers
// below the floor (a run interrupted between the floor and its deletes) go
// at the next run. Its listing stops at the first slot too young (slots
// only grow younger upward), so while the retention keeps the slots a
// collection lists one page, however many slots that is.
//
// Every process sharing a log should use the same Retention, and clocks
// within half of it: the collector compares object ages (the store's clock)
// against its own clock, and a committer trusts tail knowledge for half the
// retention by its own.
//
// # Providers and sessions
//
// A Provider caches monotone facts about each log it is handed (the base,
// the floor, the highest slot known and when it was the tail), shared by
// the writer, reader, collector and committer it returns for the same store
// handle and path, so one open's reader and committer never ask the bucket
// what the other already learned. The committer also hands the slots it
// wins or reads (the newest 64) to the session's reader, which serves them
// without a request: after an uncontended win the reader is served the slot
// and finds the tail after it with no LIST and no GET. Session returns a
// fresh Provider per catalog open, so that cache lives as long as the open.
//
// # Costs
//
//	uncontended commit (tail known fresh)   1 PUT
//	commit with stale or no tail knowledge  1 LIST page + 1 PUT (+1 GET of the floor
//	                                        if the PUT returns after the fresh window)
//	lost race                               1 PUT + 1 GET per landed slot + 1 GET (the miss)
//	probe                                   1 GET per landed slot + 1 GET (the miss)
//	tail lookup, reader poll at the tail    1 LIST page
//	cold folder open                        1 GET (base) + 1 LIST + 1 GET per unfolded slot
//	                                        (+ the native fence before the first fold)
//	cadence fold in a committing session    as a cold open, minus the GETs of the
//	                                        slots the session won or read (its copy)
//	idle committer                          nothing
package provider
