package netlink

import (
	"fmt"

	"github.com/mdlayher/genetlink"
	nl "github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Dial opens a Conn: it resolves the generic netlink family "TCM-USER"
// (os.ErrNotExist if target_core_user is not loaded) and joins its
// "config" multicast group. Joining needs no privilege; SetFeatures and
// Reply need CAP_NET_ADMIN (GENL_ADMIN_PERM).
func Dial() (*Conn, error) {
	events, err := nl.Dial(unix.NETLINK_GENERIC, nil)
	if err != nil {
		return nil, fmt.Errorf("open generic netlink socket: %w", err)
	}
	cmds, err := genetlink.Dial(nil)
	if err != nil {
		_ = events.Close()
		return nil, fmt.Errorf("open generic netlink socket: %w", err)
	}
	c, err := NewConn(events, cmds)
	if err != nil {
		_ = events.Close()
		_ = cmds.Close()
		return nil, err
	}
	return c, nil
}
