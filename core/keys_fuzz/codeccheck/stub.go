package core

type chunkState struct{ rows []InlinedRow }
