//go:build linux

package netlink_test

import (
	"errors"
	"fmt"
	"iter"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	nl "github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nlenc"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/target/netlink"
)

// The fake kernel speaks the genetlink numbers x/sys/unix has for Linux
// only, so these tests (and conn_test.go) are built on Linux only.
//
// The family as a kernel registers it; IDs are dynamic in a real kernel,
// so they are deliberately unusual here.
const (
	tcmuFamilyID = 0x1d
	tcmuGroupID  = 7
	ctrlNotifyID = 0x10
)

var (
	tcmuFamily = genetlink.Family{
		ID:      tcmuFamilyID,
		Version: 2,
		Name:    "TCM-USER",
		Groups:  []genetlink.MulticastGroup{{ID: tcmuGroupID, Name: "config"}},
	}
	ctrlFamily = genetlink.Family{
		ID:      unix.GENL_ID_CTRL,
		Version: 2,
		Name:    "nlctrl",
		Groups:  []genetlink.MulticastGroup{{ID: ctrlNotifyID, Name: "notify"}},
	}
)

// request is one message the daemon sent to the fake kernel.
type request struct {
	Type    nl.HeaderType
	Flags   nl.HeaderFlags
	Command uint8
	Version uint8
	Data    []byte // attributes
}

// fakeKernel plays target_core_user: it answers family lookups (through
// genltest.ServeFamily), records requests on the command socket and
// answers them with an acknowledgement or the errno set by failNext, and
// multicasts events on the event socket, which is an in-memory socket that
// supports group membership and read deadlines (genltest's does not).
type fakeKernel struct {
	t *testing.T

	mu       sync.Mutex
	requests []request
	errnos   []unix.Errno // answers for the next requests; 0 acknowledges

	events *mcastSocket
}

func newFakeKernel(t *testing.T) *fakeKernel {
	return &fakeKernel{t: t, events: newMcastSocket()}
}

// dial returns a Conn wired to k, closed at the end of the test.
func (k *fakeKernel) dial(t *testing.T) *netlink.Conn {
	t.Helper()
	c, err := netlink.NewConn(k.eventConn(), k.commandConn(tcmuFamily))
	if err != nil {
		t.Fatalf("NewConn: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func (k *fakeKernel) eventConn() *nl.Conn { return nl.NewConn(k.events, 0) }

// commandConn serves family lookups for tcmu (the TCM-USER family as this
// kernel has it) and nlctrl, and hands everything else to k.handle.
func (k *fakeKernel) commandConn(tcmu genetlink.Family) *genetlink.Conn {
	serveTCMU := genltest.ServeFamily(tcmu, k.handle)
	serveCtrl := genltest.ServeFamily(ctrlFamily, k.handle)
	return genltest.Dial(func(greq genetlink.Message, nreq nl.Message) ([]genetlink.Message, error) {
		if nreq.Header.Type == unix.GENL_ID_CTRL && greq.Header.Command == unix.CTRL_CMD_GETFAMILY {
			switch name := familyNameOf(greq); name {
			case ctrlFamily.Name:
				return serveCtrl(greq, nreq)
			case tcmu.Name:
				return serveTCMU(greq, nreq)
			default:
				return nil, genltest.Error(int(unix.ENOENT))
			}
		}
		return serveTCMU(greq, nreq)
	})
}

func familyNameOf(m genetlink.Message) string {
	ad, err := nl.NewAttributeDecoder(m.Data)
	if err != nil {
		return ""
	}
	for ad.Next() {
		if ad.Type() == unix.CTRL_ATTR_FAMILY_NAME {
			return ad.String()
		}
	}
	return ""
}

func (k *fakeKernel) handle(greq genetlink.Message, nreq nl.Message) ([]genetlink.Message, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.requests = append(k.requests, request{
		Type:    nreq.Header.Type,
		Flags:   nreq.Header.Flags,
		Command: greq.Header.Command,
		Version: greq.Header.Version,
		Data:    append([]byte(nil), greq.Data...),
	})
	var errno unix.Errno
	if len(k.errnos) > 0 {
		errno, k.errnos = k.errnos[0], k.errnos[1:]
	}
	if errno != 0 {
		return nil, genltest.Error(int(errno))
	}
	// An acknowledgement: one message echoing the sequence number.
	return []genetlink.Message{{}}, nil
}

// failNext makes the next requests fail with errno (0: acknowledge).
func (k *fakeKernel) failNext(errnos ...unix.Errno) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.errnos = append(k.errnos, errnos...)
}

func (k *fakeKernel) sent() []request {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]request(nil), k.requests...)
}

// multicast sends a TCM-USER message to the "config" group, as
// genlmsg_multicast_allns does: only sockets that joined receive it.
func (k *fakeKernel) multicast(cmd, version uint8, attrs ...nl.Attribute) {
	k.t.Helper()
	k.deliver(tcmuGroupID, tcmuFamilyID, cmd, version, attrs...)
}

func (k *fakeKernel) deliver(group uint32, typ nl.HeaderType, cmd, version uint8, attrs ...nl.Attribute) {
	k.t.Helper()
	b, err := nl.MarshalAttributes(attrs)
	if err != nil {
		k.t.Fatalf("marshal attributes: %v", err)
	}
	data, err := genetlink.Message{Header: genetlink.Header{Command: cmd, Version: version}, Data: b}.MarshalBinary()
	if err != nil {
		k.t.Fatal(err)
	}
	k.events.deliver(group, nl.Message{Header: nl.Header{Type: typ}, Data: data})
}

// Attribute constructors, in the kernel's encoding (nla_put_*).
func aString(typ uint16, s string) nl.Attribute { return nl.Attribute{Type: typ, Data: nlenc.Bytes(s)} }
func aU32(typ uint16, v uint32) nl.Attribute {
	return nl.Attribute{Type: typ, Data: nlenc.Uint32Bytes(v)}
}
func aU64(typ uint16, v uint64) nl.Attribute {
	return nl.Attribute{Type: typ, Data: nlenc.Uint64Bytes(v)}
}
func aU8(typ uint16, v uint8) nl.Attribute { return nl.Attribute{Type: typ, Data: []byte{v}} }

// mcastSocket is an in-memory netlink socket for the event side: group
// membership, blocking receive, read deadlines, Close that unblocks.
type mcastSocket struct {
	mu       sync.Mutex
	groups   map[uint32]bool
	deadline time.Time
	wake     chan struct{} // closed when the deadline changes
	recvErr  error         // returned once by the next Receive

	queue  chan nl.Message
	closed chan struct{}
	once   sync.Once
}

func newMcastSocket() *mcastSocket {
	return &mcastSocket{
		groups: map[uint32]bool{},
		wake:   make(chan struct{}),
		queue:  make(chan nl.Message, 64),
		closed: make(chan struct{}),
	}
}

func (s *mcastSocket) deliver(group uint32, m nl.Message) {
	s.mu.Lock()
	joined := s.groups[group]
	s.mu.Unlock()
	if joined {
		s.queue <- m
	}
}

func (s *mcastSocket) joined() map[uint32]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[uint32]bool{}
	for g, ok := range s.groups {
		m[g] = ok
	}
	return m
}

// failReceive makes the next Receive fail with err (as recvmsg would).
func (s *mcastSocket) failReceive(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recvErr = err
	close(s.wake)
	s.wake = make(chan struct{})
}

func (s *mcastSocket) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

func (s *mcastSocket) Send(nl.Message) error { return errors.New("event socket: unexpected send") }
func (s *mcastSocket) SendMessages([]nl.Message) error {
	return errors.New("event socket: unexpected send")
}

func (s *mcastSocket) Receive() ([]nl.Message, error) {
	for {
		select {
		case <-s.closed:
			return nil, os.NewSyscallError("recvmsg", net.ErrClosed)
		default:
		}
		s.mu.Lock()
		dl, wake, rerr := s.deadline, s.wake, s.recvErr
		s.recvErr = nil
		s.mu.Unlock()
		if rerr != nil {
			return nil, rerr
		}
		var timeout <-chan time.Time
		if !dl.IsZero() {
			d := time.Until(dl)
			if d <= 0 {
				return nil, os.ErrDeadlineExceeded
			}
			tm := time.NewTimer(d)
			timeout = tm.C
			defer tm.Stop() // at most once per deadline change
		}
		select {
		case m := <-s.queue:
			return []nl.Message{m}, nil
		case <-s.closed:
			return nil, os.NewSyscallError("recvmsg", net.ErrClosed)
		case <-timeout:
			return nil, os.ErrDeadlineExceeded
		case <-wake:
		}
	}
}

func (s *mcastSocket) ReceiveIter() iter.Seq2[nl.Message, error] {
	return func(yield func(nl.Message, error) bool) {
		msgs, err := s.Receive()
		if err != nil {
			yield(nl.Message{}, err)
			return
		}
		for _, m := range msgs {
			if !yield(m, nil) {
				return
			}
		}
	}
}

func (s *mcastSocket) JoinGroup(g uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[g] = true
	return nil
}

func (s *mcastSocket) LeaveGroup(g uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.groups, g)
	return nil
}

func (s *mcastSocket) SetDeadline(t time.Time) error { return s.SetReadDeadline(t) }

func (s *mcastSocket) SetReadDeadline(t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deadline = t
	close(s.wake)
	s.wake = make(chan struct{})
	return nil
}

func (s *mcastSocket) SetWriteDeadline(time.Time) error { return nil }

func (r request) String() string {
	return fmt.Sprintf("type=%#x flags=%s cmd=%d version=%d data=% x", r.Type, r.Flags, r.Command, r.Version, r.Data)
}
