package config

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/internal/record"
	"github.com/vscsid/vscsid/scsi"
)

// ReplayBuilder builds recorded devices as the daemon would (their kind,
// their fault injection with its seed, on a clock whose delays pass at
// once), each media directory replaced by a new one under tmp.
func ReplayBuilder(tmp string) record.Builder {
	dirs := map[string]string{}
	return func(d record.Device, env device.Env) (scsi.Handler, error) {
		k, ok := KindOf(d.Subtype)
		if !ok {
			return nil, fmt.Errorf("subtype %q: this vscsictl knows %s", d.Subtype, strings.Join(TypeNames(), ", "))
		}
		cfg, err := freshMedia(d.Config, tmp, dirs)
		if err != nil {
			return nil, err
		}
		h, err := k.New(device.Config{Name: d.Name, Config: cfg, Size: d.Size}, env, zap.NewNop())
		if err != nil || d.Fault == nil {
			return h, err
		}
		fc := Fault{Seed: d.Fault.Seed, Timing: d.Fault.Timing, Rules: d.Fault.Rules}
		opts, err := fc.Options(k.Commands, KernelCmdTimeOut)
		if err != nil {
			return nil, errors.Join(err, closeIfCloser(h))
		}
		opts.Clock = &instantClock{}
		fd, err := fault.New(h, opts)
		if err != nil {
			return nil, errors.Join(err, closeIfCloser(h))
		}
		return fd, nil
	}
}

func closeIfCloser(h scsi.Handler) error {
	if c, ok := scsi.As[io.Closer](h); ok {
		return c.Close()
	}
	return nil
}

// freshMedia rewrites the media= of cfg to a new directory under tmp (the
// same one for every device that named the same directory). The devices
// create the cartridges their configurations name, as they did when
// recorded.
func freshMedia(cfg, tmp string, dirs map[string]string) (string, error) {
	pairs, err := cfgstring.Split(cfg)
	if err != nil {
		return "", err
	}
	var b cfgstring.Builder
	for _, p := range pairs {
		switch {
		case p.Key == "media":
			dir, ok := dirs[p.Value]
			if !ok {
				dir = filepath.Join(tmp, fmt.Sprintf("media%d", len(dirs)))
				if err := os.Mkdir(dir, 0o755); err != nil {
					return "", err
				}
				dirs[p.Value] = dir
			}
			b.Add(p.Key, dir)
		case p.HasValue:
			b.Add(p.Key, p.Value)
		default:
			b.Key(p.Key)
		}
	}
	return b.String(), nil
}

// instantClock is the replay's fault.Clock: delays pass at once.
type instantClock struct{ now time.Duration }

func (c *instantClock) Now() time.Duration { return c.now }

func (c *instantClock) Sleep(ctx context.Context, d time.Duration) error {
	c.now += d
	return ctx.Err()
}
