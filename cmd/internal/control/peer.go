package control

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"

	"golang.org/x/sys/unix"
)

// The control socket is created 0600, so only its owner can connect. The
// server does not rely on that alone (a socket re-moded by hand, a
// directory shared by mistake): it asks the kernel who is on the other
// end of each connection (SO_PEERCRED) and answers anyone but root and
// the daemon's own user with 403 EPERM.

type peerKey struct{}

// peer is the credentials of a connection's other end; known is false
// where the platform cannot tell (not Linux) or the connection is not a
// unix socket.
type peer struct {
	uid   uint32
	pid   int32
	known bool
}

// withPeer is the http.Server ConnContext: it records the peer's
// credentials for allowPeers.
func withPeer(ctx context.Context, c net.Conn) context.Context {
	p := peer{}
	if uc, ok := c.(*net.UnixConn); ok {
		p.uid, p.pid, p.known = peerCred(uc)
	}
	return context.WithValue(ctx, peerKey{}, p)
}

// allowPeers refuses requests whose peer is neither root nor uid (the
// daemon's effective user). A peer the platform cannot identify is let
// through: the socket's mode still applies.
func allowPeers(h http.Handler, uid uint32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, _ := r.Context().Value(peerKey{}).(peer); p.known && p.uid != 0 && p.uid != uid {
			writeError(w, fmt.Errorf("%w: control socket: user %d (pid %d) is not allowed: root or the daemon's user only", unix.EPERM, p.uid, p.pid))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// daemonUID is the effective user the daemon runs as.
func daemonUID() uint32 { return uint32(os.Geteuid()) }
