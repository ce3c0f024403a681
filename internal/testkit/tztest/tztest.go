// Package tztest writes time zones of a test's own into a zone database
// directory, so that a program reads them by name, with ZONEINFO set to
// the directory and TALLY_TIME_ZONE to the name, as it reads a real zone.
// A test of the calendar across a change of the clocks cannot wait for a
// real zone's next change; it can make a zone whose clocks change in the
// next seconds.
package tztest

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Change is a change of a zone's clocks: from At on, they are Offset
// from UTC.
type Change struct {
	At     time.Time
	Offset time.Duration
}

// Write writes the zone name, whose offset from UTC is first before its
// first change and then as changes say (in order, each within 1901 to
// 2038), into dir as a TZif file (RFC 8536, version 1), where Go's
// time.LoadLocation finds it when ZONEINFO is dir.
func Write(dir, name string, first time.Duration, changes []Change) error {
	types := []time.Duration{first}
	index := func(off time.Duration) byte {
		for i, t := range types {
			if t == off {
				return byte(i)
			}
		}
		types = append(types, off)
		return byte(len(types) - 1)
	}
	var at []byte
	var idx []byte
	for i, c := range changes {
		if i > 0 && !c.At.After(changes[i-1].At) {
			return fmt.Errorf("tztest: change %d at %s is not after the one before", i, c.At)
		}
		at = binary.BigEndian.AppendUint32(at, uint32(int32(c.At.Unix())))
		idx = append(idx, index(c.Offset))
	}
	if len(types) > 255 {
		return fmt.Errorf("tztest: %d offsets; a TZif file holds 255", len(types))
	}
	abbr := []byte("TST\x00")
	b := []byte("TZif")
	b = append(b, make([]byte, 16)...) // version 1, reserved
	for _, n := range []int{0, 0, 0, len(changes), len(types), len(abbr)} {
		b = binary.BigEndian.AppendUint32(b, uint32(n))
	}
	b = append(b, at...)
	b = append(b, idx...)
	for _, off := range types {
		b = binary.BigEndian.AppendUint32(b, uint32(int32(off/time.Second)))
		b = append(b, 0, 0) // not DST, abbreviation 0
	}
	b = append(b, abbr...)
	path := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
