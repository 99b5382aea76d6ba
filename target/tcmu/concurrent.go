package tcmu

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
)

// runConcurrent serves the ring with d.info.Workers goroutines. The loop
// goroutine stays the only one touching the ring: it hands loaded commands
// to the workers and writes their completions (out of order, stealing
// slots) as they come back.
func (d *Device) runConcurrent(ctx context.Context) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guard(&err)

	nw := d.info.Workers
	ctxs := 2 * nw // one being served and one queued per worker
	free := make([]*cmdCtx, 0, ctxs)
	for range ctxs {
		free = append(free, newCmdCtx())
	}
	work := make(chan *cmdCtx, ctxs)
	done := make(chan *cmdCtx, ctxs)
	events := make(chan struct{}, 1)
	waitErr := make(chan error, 1)

	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range nw {
		wg.Go(func() { d.worker(wctx, work, done) })
	}
	wg.Go(func() {
		for {
			if err := d.n.Wait(wctx); err != nil {
				if wctx.Err() == nil {
					waitErr <- err
				}
				return
			}
			select {
			case events <- struct{}{}:
			default:
			}
		}
	})
	defer func() {
		cancel()
		close(work)
		wg.Wait()
	}()

	complete := func(c *cmdCtx) error {
		if p := c.panic; p != nil {
			c.panic = nil
			if pe, ok := p.(*PanicError); ok {
				return pe
			}
			return &PanicError{Value: p}
		}
		err := d.finish(c)
		free = append(free, c)
		return err
	}
	stopping := false
	ctxDone := ctx.Done()
	for {
		for !stopping && len(free) > 0 {
			c := free[len(free)-1]
			loaded, empty, err := d.step(c)
			if err != nil {
				return err
			}
			if empty {
				d.endBatch()
				break
			}
			if !loaded {
				continue
			}
			free = free[:len(free)-1]
			if c.aborted || c.bidi {
				d.execute(ctx, c)
				if err := complete(c); err != nil {
					return err
				}
				continue
			}
			work <- c // never blocks: at most ctxs commands exist
		}
	reap:
		for {
			select {
			case c := <-done:
				if err := complete(c); err != nil {
					return err
				}
			default:
				break reap
			}
		}
		if err := d.kick(); err != nil {
			return err
		}
		if stopping && d.inflight == 0 {
			return nil
		}
		select {
		case <-ctxDone:
			// Let the handlers finish (they see ctx cancelled) and
			// complete what they return, so the kernel need not time
			// the commands out.
			stopping, ctxDone = true, nil
		case <-events:
			d.st.wakeups.Add(1)
		case c := <-done:
			if err := complete(c); err != nil {
				return err
			}
		case err := <-waitErr:
			return fmt.Errorf("wait for ring events: %w", err)
		}
		if stopping && d.inflight == 0 {
			return d.kick()
		}
	}
}

func (d *Device) worker(ctx context.Context, work <-chan *cmdCtx, done chan<- *cmdCtx) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	for c := range work {
		d.serveGuarded(ctx, c)
		done <- c
	}
}

func (d *Device) serveGuarded(ctx context.Context, c *cmdCtx) {
	defer func() {
		if p := recover(); p != nil {
			c.panic = &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	d.execute(ctx, c)
}
