package core

// Test hooks for the RFC 0024 obligation tests (commitlog_obligations_test.go,
// package core_test).

// CommitLogRegisteredForTest reports whether a commit-log provider is
// registered in this process (RegisterCommitLog). The unit-test binary
// must never register one: every other test's open would inherit it.
func CommitLogRegisteredForTest() bool { return registeredCommitLog() != nil }

// StagedWritesForTest returns every write tx staged, in staging order, as
// a slot carries them. After the transaction committed (Catalog.Commit's
// closure or Transaction.Commit) this is exactly what the batch handed its
// session to land: the verbs' entity rows and index entries plus what
// finish staged (the snapshot record, schema versions, the name
// directory). The head stamp is not among them: the session adds it.
func StagedWritesForTest(tx *Transaction) []LogWrite {
	out := make([]LogWrite, 0, len(tx.order))
	for _, k := range tx.order {
		w := tx.writes[k]
		out = append(out, LogWrite{Key: w.key, Value: w.value, Delete: w.value == nil})
	}
	return out
}

// DecodeHeadForTest decodes a sys/head stamp.
func DecodeHeadForTest(v []byte) (Head, error) {
	h, err := decodeHead(v)
	if err != nil {
		return Head{}, err
	}
	return Head{SnapshotID: h.SnapshotID, BatchSeq: h.BatchSeq}, nil
}
