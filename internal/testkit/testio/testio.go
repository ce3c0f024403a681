// Package testio holds what tests read and write: a buffer that a child
// process or a handler writes while the test reads it, and the text of a
// file the test reads (a page of the docs).
package testio

import (
	"bytes"
	"os"
	"sync"
	"testing"
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

// Text is the file at path, or fails the test.
func Text(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
