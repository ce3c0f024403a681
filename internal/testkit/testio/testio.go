// Package testio holds what tests write to and read from at once: a
// buffer that a child process or a handler writes while the test reads it.
package testio

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that writers and a reader may use at once.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
