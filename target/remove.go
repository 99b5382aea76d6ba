package target

import (
	"errors"
	"fmt"
	"slices"

	"go.uber.org/zap"
)

func removingKey(hba int, name string) string { return fmt.Sprintf("%d/%s", hba, name) }

// ErrNoDevice means no device of that name is served.
var ErrNoDevice = errors.New("no such device")

// ErrNotOwned means the device was created by another tool (targetcli); vscsid
// serves it but removing it is that tool's business.
var ErrNotOwned = errors.New("device created by another tool")

// Remove removes one device that Create made, as Close removes them all:
// the LUN is unlinked and the loopback target removed while the device is
// still served (sd or st may send commands while detaching), then it stops
// serving, closes the uio device and removes the storage object and its
// HBA. A device another tool created fails with ErrNotOwned and is left
// alone; an unknown name fails with ErrNoDevice.
func (t *Target) Remove(name string) error {
	t.createMu.Lock()
	defer t.createMu.Unlock()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	i := slices.IndexFunc(t.devs, func(m *managed) bool { return m.info.Name == name })
	if i < 0 {
		t.mu.Unlock()
		return fmt.Errorf("device %s: %w", name, ErrNoDevice)
	}
	m := t.devs[i]
	if m.info.Origin == OriginAttached {
		t.mu.Unlock()
		return fmt.Errorf("device %s: %w: remove it with that tool (targetcli)", name, ErrNotOwned)
	}
	t.devs = slices.Delete(t.devs, i, i+1)
	key := removingKey(m.info.HBA, name)
	if m.noReply {
		if t.removing == nil {
			t.removing = map[string]bool{}
		}
		t.removing[key] = true
	}
	t.mu.Unlock()
	// The key stays until the REMOVED event is handled (it may be read
	// after the rmdir returned) or a new device of that hba/name appears.
	err := m.undo.run()
	if err != nil {
		return fmt.Errorf("remove device %s: %w", name, err)
	}
	t.log.Info("device removed", zap.String("device", name))
	return nil
}
