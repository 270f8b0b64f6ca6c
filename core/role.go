package core

import "fmt"

// Role is what a catalog handle does in the lake (Catalog.Role). The zero
// value is no role: String gives "Role(0)", and a switch over the roles
// should refuse it and any other unknown value rather than pick one.
type Role int

// The roles. Their numeric values are not a wire format; the extension maps
// them to its own pinned codes.
const (
	// RoleWriter: a read-write open on the single-writer path.
	RoleWriter Role = iota + 1
	// RoleReader: a read-only open.
	RoleReader
	// RoleTailingReader: a read-only open of a log-resident lake that tails
	// the commit log (CatalogOptions.CommitLogTail).
	RoleTailingReader
	// RoleCommitter: a read-write open of a log-resident lake, committing
	// through the commit-log provider.
	RoleCommitter
	// RoleHolder: a committer holding the store after TakeStore.
	RoleHolder
)

// String gives the role's name: "writer", "reader", "tailing reader",
// "committer" or "holder"; "Role(n)" for a value that is none of them.
func (r Role) String() string {
	switch r {
	case RoleWriter:
		return "writer"
	case RoleReader:
		return "reader"
	case RoleTailingReader:
		return "tailing reader"
	case RoleCommitter:
		return "committer"
	case RoleHolder:
		return "holder"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// commitsThroughLog reports whether the role commits through a commit log
// (a committer or a holder).
func (r Role) commitsThroughLog() bool { return r == RoleCommitter || r == RoleHolder }
