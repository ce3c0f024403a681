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
// first change and then as changes say, into dir as a TZif file, where
// Go's time.LoadLocation finds it when ZONEINFO is dir.
func Write(dir, name string, first time.Duration, changes []Change) error {
	b, err := encode(first, changes)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Location is the zone name, whose offset from UTC is first before its
// first change and then as changes say, as Go reads it from its TZif file.
func Location(name string, first time.Duration, changes []Change) (*time.Location, error) {
	b, err := encode(first, changes)
	if err != nil {
		return nil, err
	}
	return time.LoadLocationFromTZData(name, b)
}

// Cycle is a zone whose clocks change every step from from on, for span,
// in cycles of four changes: an hour of the clock starts again at another
// offset (it is shown twice); the next hour's start is skipped, to half
// past; the clock jumps to the start of the hour after; it goes back two
// hours, to an hour's start. Each bucket of an hour is then one step
// long, and starts at a change: a test sees many changes of each kind in
// seconds. It returns the offset before the first change, and the
// changes.
func Cycle(from time.Time, step, span time.Duration) (first time.Duration, changes []Change) {
	from = from.Truncate(time.Second)
	hour := func(w time.Duration) time.Duration { return w.Truncate(time.Hour) }
	// The wall clock, as a duration since the UTC epoch, is at + offset.
	wall := func(at time.Time, off time.Duration) time.Duration { return time.Duration(at.Unix())*time.Second + off }
	off := 3*time.Hour - wall(from, 0)%(24*time.Hour) + step // the clock shows 03:00 plus a step at from
	first = off
	for i, c := 0, from; c.Before(from.Add(span)); i, c = i+1, c.Add(step) {
		w := wall(c, off)
		var next time.Duration
		switch i % 4 {
		case 0:
			next = hour(w) // back to this hour's start: shown twice
		case 1:
			next = hour(w) + time.Hour + 30*time.Minute // the next hour's start skipped
		case 2:
			next = hour(w) + time.Hour // the next hour's start
		case 3:
			next = hour(w) - 2*time.Hour // back two hours
		}
		off += next - w
		changes = append(changes, Change{At: c, Offset: off})
	}
	return first, changes
}

// encode is a TZif file (RFC 8536, version 1) of the zone whose offset is
// first before its first change and then as changes say (in order, each
// within 1901 to 2038, with at most 255 offsets).
func encode(first time.Duration, changes []Change) ([]byte, error) {
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
	var at, idx []byte
	for i, c := range changes {
		if i > 0 && !c.At.After(changes[i-1].At) {
			return nil, fmt.Errorf("tztest: change %d at %s is not after the one before", i, c.At)
		}
		at = binary.BigEndian.AppendUint32(at, uint32(int32(c.At.Unix())))
		idx = append(idx, index(c.Offset))
	}
	if len(types) > 255 {
		return nil, fmt.Errorf("tztest: %d offsets; a TZif file holds 255", len(types))
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
	return append(b, abbr...), nil
}
