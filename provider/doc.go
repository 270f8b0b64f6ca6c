// Package provider will hold moraine's in-tree commit log: the slot
// protocol (one create-if-absent object per commit under <path>/log/, the
// base record written at adoption, framed envelopes, the race, hole
// detection, truncation through the engine's WAL collector) implementing
// the commit-log provider interface that package core defines (RFC 0024,
// ARCHITECTURE.md §6–7).
//
// It depends on core and core/slate through their public interfaces only;
// core never imports this package ("link, do not fork"): a provider is
// plugged in per open (CatalogOptions) or registered once per process.
//
// Nothing is implemented yet: without a provider moraine is complete on the
// single-writer path, and stores stamped as log-resident are refused with
// a Migration error naming what they need.
package provider
