package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/cmd/internal/control"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/target"
)

// Wire types: shared with vscsictl through cmd/internal/control.
type (
	deviceJSON  = control.Device
	commandJSON = control.Command
	statsJSON   = control.Stats
	errorJSON   = control.Error
)

// The control socket: HTTP/1.1 over a unix socket (root only, mode 0600),
// for vscsictl. Version 1 of the protocol:
//
//	GET  /v1/devices                  → [deviceJSON]
//	POST /v1/devices                  control.CreateDevice → 201 deviceJSON
//	DELETE /v1/devices/{name}         → 204 (devices vscsid created only)
//	GET  /v1/devices/{name}/stats     → statsJSON
//	POST /v1/devices/{name}/load      {"barcode": "..."} → 204
//	POST /v1/devices/{name}/unload    → 204
//	GET    /v1/devices/{name}/faults          → faultsJSON
//	POST   /v1/devices/{name}/faults          {"rule": "..."} → {"id": N}
//	DELETE /v1/devices/{name}/faults          → 204 (every rule)
//	DELETE /v1/devices/{name}/faults/{id}     → 204
//	PUT    /v1/devices/{name}/faults/timing   {"timing": "..."} → 204
//
// Errors are a JSON {"error": "...", "errno": "ENOENT"} with a 4xx/5xx
// status. The wire types live in cmd/internal/control, shared with
// vscsictl.

// controller is what the control socket serves; *daemon implements it, the
// tests fake it.
type controller interface {
	devices() []deviceJSON
	create(ctx context.Context, req control.CreateDevice) (deviceJSON, error)
	remove(name string) error
	stats(name string) (statsJSON, error)
	load(name, barcode string) error
	unload(name string) error
	faultList(name string) (faultsJSON, error)
	faultAdd(name, rule string) (uint64, error)
	faultRemove(name string, id uint64) error
	faultClear(name string) error
	faultTiming(name, timing string) error
}

// daemon is the running vscsid as the control socket sees it.
type daemon struct {
	cfg *Config // the config file: create uses its cmd_time_out and co.
	tgt *target.Target
	hs  *handlers
	fs  *faults
	tr  *tapeTracker
	log *zap.Logger
}

func (d *daemon) faultList(name string) (faultsJSON, error) { return d.fs.list(name) }

func (d *daemon) faultAdd(name, rule string) (uint64, error) {
	id, err := d.fs.add(name, rule)
	if err == nil {
		d.log.Info("fault rule added (vscsictl)", zap.String("device", name), zap.Uint64("id", id), zap.String("rule", rule))
	}
	return id, err
}

func (d *daemon) faultRemove(name string, id uint64) error {
	err := d.fs.remove(name, id)
	if err == nil {
		d.log.Info("fault rule removed (vscsictl)", zap.String("device", name), zap.Uint64("id", id))
	}
	return err
}

func (d *daemon) faultClear(name string) error {
	err := d.fs.clear(name)
	if err == nil {
		d.log.Info("fault rules cleared (vscsictl)", zap.String("device", name))
	}
	return err
}

func (d *daemon) faultTiming(name, timing string) error {
	err := d.fs.setTiming(name, timing)
	if err == nil {
		d.log.Info("fault timing set (vscsictl)", zap.String("device", name), zap.String("timing", timing))
	}
	return err
}

func (d *daemon) devices() []deviceJSON {
	var out []deviceJSON
	for _, ds := range d.tgt.Devices() {
		i := ds.Info
		dj := deviceJSON{
			Name: i.Name, Type: typeOf(i.Subtype), Subtype: i.Subtype, Origin: i.Origin.String(),
			HBA: i.HBA, UIO: i.UIO, Address: i.SCSI.Address, Generic: i.SCSI.Generic, Failed: ds.Stats.Failed,
		}
		if i.SCSI.Address != "" {
			dj.Node = i.SCSI.String()
		}
		if ds.Err != nil {
			dj.Error = ds.Err.Error()
		}
		if t, ok := d.hs.get(i.Name).(*tape.Drive); ok {
			dj.Barcode = t.Stats().Barcode
		}
		out = append(out, dj)
	}
	return out
}

// create makes a device as if the config file had it; it lasts until
// remove or the daemon stops (add it to the config file to keep it).
func (d *daemon) create(ctx context.Context, req control.CreateDevice) (deviceJSON, error) {
	dc := DeviceConfig{Name: req.Name, Type: req.Type, Config: req.Config, HWMaxSectors: req.HWMaxSectors}
	p, err := dc.check()
	if err != nil {
		return deviceJSON{}, fmt.Errorf("%w: %w", unix.EINVAL, err)
	}
	d.fs.declare(dc.Name)
	info, err := d.tgt.Create(ctx, deviceSpec(d.cfg, dc, p))
	if err != nil {
		if errors.Is(err, target.ErrClosed) {
			return deviceJSON{}, fmt.Errorf("%w: %w", unix.ESHUTDOWN, err)
		}
		if d.hasDevice(req.Name) {
			return deviceJSON{}, fmt.Errorf("%w: %w", unix.EEXIST, err)
		}
		return deviceJSON{}, err
	}
	d.log.Info("device created (vscsictl)", zap.String("device", info.Name), zap.String("subtype", info.Subtype),
		zap.String("config", info.Config), zap.String("scsi", info.SCSI.Address), zap.String("node", info.SCSI.String()))
	for _, dj := range d.devices() {
		if dj.Name == info.Name {
			return dj, nil
		}
	}
	return deviceJSON{}, fmt.Errorf("%w: device %s was removed while being created", unix.ENODEV, info.Name)
}

func (d *daemon) hasDevice(name string) bool {
	return slices.ContainsFunc(d.tgt.Devices(), func(s target.DeviceStatus) bool { return s.Info.Name == name })
}

// remove removes a device vscsid created (config file or vscsictl). A
// tape drive's position is kept as at a clean stop.
func (d *daemon) remove(name string) error {
	if err := d.tgt.Remove(name); err != nil {
		switch {
		case errors.Is(err, target.ErrNoDevice):
			return fmt.Errorf("%w: %w", unix.ENODEV, err)
		case errors.Is(err, target.ErrNotOwned):
			return fmt.Errorf("%w: %w", unix.EPERM, err)
		case errors.Is(err, target.ErrClosed):
			return fmt.Errorf("%w: %w", unix.ESHUTDOWN, err)
		}
		return err
	}
	if t, ok := d.hs.forget(name); ok && d.tr != nil {
		d.tr.stopped(t, d.log)
	}
	d.log.Info("device removed (vscsictl)", zap.String("device", name))
	return nil
}

func (d *daemon) stats(name string) (statsJSON, error) {
	for _, ds := range d.tgt.Devices() {
		if ds.Info.Name == name {
			return statsOf(name, &ds.Stats), nil
		}
	}
	return statsJSON{}, fmt.Errorf("%w: no device %q", unix.ENODEV, name)
}

func (d *daemon) load(name, barcode string) error {
	if barcode == "" {
		return fmt.Errorf("%w: no barcode", unix.EINVAL)
	}
	if err := d.hs.loadMedium(d.tr, name, barcode, d.log); err != nil {
		return err
	}
	d.log.Info("medium loaded (vscsictl)", zap.String("device", name), zap.String("medium", barcode))
	return nil
}

func (d *daemon) unload(name string) error {
	if err := d.hs.unloadMedium(d.tr, name, d.log); err != nil {
		return err
	}
	d.log.Info("medium unloaded (vscsictl)", zap.String("device", name))
	return nil
}

// statsOf summarises a device's counters for people.
func statsOf(name string, s *target.DeviceStats) statsJSON {
	out := statsJSON{
		Name:            name,
		Commands:        []commandJSON{},
		ReadBytes:       s.Transfer(target.DirRead).Bytes,
		WriteBytes:      s.Transfer(target.DirWrite).Bytes,
		CheckConditions: map[string]uint64{},
		InFlight:        s.InFlight,
		Aborted:         s.Aborted,
		Failed:          s.Failed,
	}
	for _, c := range s.Commands {
		cj := commandJSON{OpCode: uint8(c.OpCode), Name: c.Name, Count: c.Count, CheckConditions: c.CheckConditions,
			P50Seconds: quantile(c.Duration, 0.5), P99Seconds: quantile(c.Duration, 0.99)}
		if c.Duration.Count > 0 {
			cj.MeanSeconds = c.Duration.Sum / float64(c.Duration.Count)
		}
		out.Commands = append(out.Commands, cj)
	}
	for k, n := range s.CheckConditions {
		if n > 0 {
			out.CheckConditions[scsi.SenseKey(k).String()] = n
		}
	}
	return out
}

// quantile returns the upper bound of the bucket holding quantile q of h,
// -1 when it is above the last bound, 0 for an empty histogram.
func quantile(h target.Histogram, q float64) float64 {
	if h.Count == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.Count)))
	var acc uint64
	for i, n := range h.Counts {
		acc += n
		if acc >= rank {
			if i < len(h.Bounds) {
				return h.Bounds[i]
			}
			return -1
		}
	}
	return -1
}

// controlHandler is the HTTP side of the control socket.
func controlHandler(c controller) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/devices", func(w http.ResponseWriter, _ *http.Request) {
		devs := c.devices()
		if devs == nil {
			devs = []deviceJSON{}
		}
		writeJSON(w, http.StatusOK, devs)
	})
	mux.HandleFunc("POST /v1/devices", func(w http.ResponseWriter, r *http.Request) {
		var req control.CreateDevice
		if !readJSON(w, r, &req) {
			return
		}
		dev, err := c.create(r.Context(), req)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusCreated, dev)
	})
	mux.HandleFunc("DELETE /v1/devices/{name}", func(w http.ResponseWriter, r *http.Request) {
		if err := c.remove(r.PathValue("name")); err != nil {
			writeError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /v1/devices/{name}/stats", func(w http.ResponseWriter, r *http.Request) {
		s, err := c.stats(r.PathValue("name"))
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, s)
	})
	mux.HandleFunc("POST /v1/devices/{name}/load", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Barcode string `json:"barcode"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		if err := c.load(r.PathValue("name"), req.Barcode); err != nil {
			writeError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /v1/devices/{name}/unload", func(w http.ResponseWriter, r *http.Request) {
		if err := c.unload(r.PathValue("name")); err != nil {
			writeError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /v1/devices/{name}/faults", func(w http.ResponseWriter, r *http.Request) {
		f, err := c.faultList(r.PathValue("name"))
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, f)
	})
	mux.HandleFunc("POST /v1/devices/{name}/faults", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Rule string `json:"rule"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		id, err := c.faultAdd(r.PathValue("name"), req.Rule)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]uint64{"id": id})
	})
	mux.HandleFunc("DELETE /v1/devices/{name}/faults", func(w http.ResponseWriter, r *http.Request) {
		if err := c.faultClear(r.PathValue("name")); err != nil {
			writeError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("DELETE /v1/devices/{name}/faults/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
		if err != nil {
			writeError(w, fmt.Errorf("%w: rule id %q: want a number", unix.EINVAL, r.PathValue("id")))
			return
		}
		if err := c.faultRemove(r.PathValue("name"), id); err != nil {
			writeError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("PUT /v1/devices/{name}/faults/timing", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Timing string `json:"timing"`
		}
		if !readJSON(w, r, &req) {
			return
		}
		if err := c.faultTiming(r.PathValue("name"), req.Timing); err != nil {
			writeError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

// readJSON decodes a small request body strictly; it answers 400 itself.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, fmt.Errorf("%w: request: %w", unix.EINVAL, err))
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError maps the errno an error wraps to an HTTP status.
func writeError(w http.ResponseWriter, err error) {
	status, name := http.StatusInternalServerError, ""
	var en unix.Errno
	if errors.As(err, &en) {
		name = unix.ErrnoName(en)
		switch en {
		case unix.ENODEV, unix.ENOENT:
			status = http.StatusNotFound
		case unix.EBUSY, enomedium, unix.EEXIST:
			status = http.StatusConflict
		case unix.EPERM:
			status = http.StatusForbidden
		case unix.ESHUTDOWN:
			status = http.StatusServiceUnavailable
		case unix.EINVAL, unix.ENOTSUP:
			status = http.StatusBadRequest
		}
	}
	writeJSON(w, status, errorJSON{Error: err.Error(), Errno: name})
}

// serveControl listens on path (a stale socket of an earlier daemon is
// replaced: we hold the lock file) and serves c until ctx is done.
func serveControl(ctx context.Context, path string, c controller, log *zap.Logger) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	if st, err := os.Lstat(path); err == nil {
		if st.Mode()&fs.ModeSocket == 0 {
			return fmt.Errorf("control socket %s: exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("control socket: remove stale %s: %w", path, err)
		}
	}
	old := unix.Umask(0o177) // the socket is created 0600: root only
	l, err := net.Listen("unix", path)
	unix.Umask(old)
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	srv := &http.Server{Handler: controlHandler(c), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("control socket listening", zap.String("path", path))
	err = srv.Serve(l)
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("control socket: %w", err)
}
