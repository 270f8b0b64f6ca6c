package slate

import (
	"errors"
	"fmt"

	"github.com/moraine-go/moraine/core/slate/internal/sst"
)

// wrapCorrupt maps a table-decoding failure to ErrCorrupt.
func wrapCorrupt(err error) error {
	if err == nil || errors.Is(err, ErrCorrupt) {
		return err
	}
	if errors.Is(err, sst.ErrCorrupt) {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return err
}
