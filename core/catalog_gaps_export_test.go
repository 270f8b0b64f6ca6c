package core

// Test hooks for the group-commit tests (package core_test).

// QueuedCommitsForTest returns how many Commit callers wait in the group
// committer's queue: callers whose batch has not been taken yet (a batch
// the leader is running is not counted). A test that holds the leader
// inside a closure waits for this to reach n before releasing it, and so
// knows the next batch takes all n (up to maxGroupMembers) at once.
func (c *Catalog) QueuedCommitsForTest() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// MaxGroupMembersForTest is the most callers one batch takes.
const MaxGroupMembersForTest = maxGroupMembers
