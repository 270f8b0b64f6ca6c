// Package registrytest holds the commit-log registry's test in a binary of
// its own: the registry is process-wide, and a registration in the main
// unit-test binary would be inherited by every other test's open (RFC 0024
// test obligations). It contains no code.
package registrytest
