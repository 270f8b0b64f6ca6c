package objstore

import (
	"context"
	"errors"
)

// ProbeKey is the object CheckConditionalPut creates, and leaves in a store
// that passed (a later check of that store costs one refused PUT).
const ProbeKey = "moraine-conditional-put-probe"

// CheckConditionalPut checks that s honours create-if-absent, which every
// commit (the engine's fencing, the commit log's slots) relies on: S3's
// If-None-Match: * on PUT, which some S3-compatible servers and proxies
// ignore, writing over the existing object instead. It creates ProbeKey
// and creates it again: the second create must be refused with ErrExists.
// A store that accepts it is reported with ErrNoConditionalWrites (and the
// probe object removed, so nothing of the check stays behind); a store
// already holding ProbeKey passed before.
func CheckConditionalPut(ctx context.Context, s Store) error {
	_, err := s.PutIfAbsent(ctx, ProbeKey, []byte("moraine: create-if-absent holds (first create)"))
	if errors.Is(err, ErrExists) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = s.PutIfAbsent(ctx, ProbeKey, []byte("moraine: create-if-absent does not hold (second create)"))
	if errors.Is(err, ErrExists) {
		return nil
	}
	if err != nil {
		return err
	}
	_ = s.Delete(ctx, ProbeKey) // best effort: the error below is what matters
	return newErrorf("put-if-absent", ProbeKey, ErrNoConditionalWrites,
		"%s accepted a second create-if-absent (PUT with If-None-Match: *) of one key; moraine needs a store that refuses it, or its commits could overwrite each other", s)
}
