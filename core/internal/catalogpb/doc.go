// Package catalogpb is the generated Go code for moraine's stored values,
// proto/moraine/store/v1/store.proto (package moraine.store.v1). Only
// core/codec.go should use it: the rest of moraine works on the model in
// core/model.go.
//
// store.pb.go is generated and checked in; do not edit it. After changing
// the .proto run `make proto` (buf v1.75.0 + protoc-gen-go v1.36.12, both
// pinned in the Makefile and installed into build/tools from the Go module
// proxy); `make proto-check` regenerates into a temp dir and diffs. The
// test in this package also fails when the .proto declares a message or
// field the generated code lacks, without needing buf.
package catalogpb
