package core_test

import (
	"testing"

	"github.com/moraine-go/moraine/core"
)

// The role names are what moraine_attach and the host functions report.
func TestRoleString(t *testing.T) {
	for r, want := range map[core.Role]string{
		core.RoleWriter:        "writer",
		core.RoleReader:        "reader",
		core.RoleTailingReader: "tailing reader",
		core.RoleCommitter:     "committer",
		core.RoleHolder:        "holder",
		0:                      "Role(0)",
		core.RoleHolder + 1:    "Role(6)",
	} {
		if got := r.String(); got != want {
			t.Errorf("Role(%d).String() = %q, want %q", int(r), got, want)
		}
	}
}
