package emulatortest

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy stands between a client and the emulator, on loopback, and can
// lose what the emulator answers: so a test can make a commit that the
// emulator applies and whose answer never comes, as a network does.
type Proxy struct {
	Addr string // host:port, for FIRESTORE_EMULATOR_HOST

	l     net.Listener
	hold  atomic.Bool // answers wait until Release
	cut   atomic.Bool // the next answer closes its connection instead
	mu    sync.Mutex
	conns []net.Conn
}

// NewProxy starts a proxy to the emulator in FIRESTORE_EMULATOR_HOST,
// stopped when the test ends.
func NewProxy(t testing.TB) *Proxy {
	t.Helper()
	target := os.Getenv("FIRESTORE_EMULATOR_HOST")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: l.Addr().String(), l: l}
	go p.serve(target)
	t.Cleanup(p.close)
	return p
}

// Hold keeps every answer from the emulator back until Release.
func (p *Proxy) Hold() { p.hold.Store(true) }

// Release lets the held answers through.
func (p *Proxy) Release() { p.hold.Store(false) }

// CutNext makes the next answer the emulator sends (to a request it has
// processed) close the connection it comes on, unsent, as a reset
// connection would; later connections work.
func (p *Proxy) CutNext() { p.cut.Store(true) }

func (p *Proxy) serve(target string) {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { io.Copy(up, c); up.Close() }()
		go p.answers(c, up)
	}
}

// answers copies what the emulator sends back to the client, frame by
// HTTP/2 frame, holding or cutting it as told. A cut falls on the first
// frame of an answer (HEADERS of a stream), so the request was processed.
func (p *Proxy) answers(c, up net.Conn) {
	defer c.Close()
	defer up.Close()
	head := make([]byte, 9)
	for {
		if _, err := io.ReadFull(up, head); err != nil {
			return
		}
		size := int(head[0])<<16 | int(head[1])<<8 | int(head[2])
		frame := make([]byte, 9+size)
		copy(frame, head)
		if _, err := io.ReadFull(up, frame[9:]); err != nil {
			return
		}
		for p.hold.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		stream := binary.BigEndian.Uint32(head[5:9]) & 0x7fffffff
		if head[3] == 0x1 && stream != 0 && p.cut.CompareAndSwap(true, false) {
			return
		}
		if _, err := c.Write(frame); err != nil {
			return
		}
	}
}

func (p *Proxy) close() {
	p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}
