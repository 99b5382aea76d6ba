package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/internal/record"
	"github.com/vscsid/vscsid/internal/trace"
)

// Service is what the control socket serves; the daemon implements it.
// Errors wrap a unix.Errno where one says what went wrong (ENODEV: no such
// device, EINVAL: a bad argument, ...): it becomes the answer's status and
// errno.
type Service interface {
	Devices() []Device
	Create(ctx context.Context, req CreateDevice) (Device, error)
	Remove(name string) error
	Stats(name string) (Stats, error)
	Load(name, barcode string) error
	Unload(name string) error
	Faults(name string) (Faults, error)
	AddFault(name, rule string) (uint64, error)
	RemoveFault(name string, id uint64) error
	ClearFaults(name string) error
	SetTiming(name, timing string) error
	Library(name string) (Library, error)
	Move(name string, m Move) error
	Import(name, barcode string) (Element, error)
	Export(name string, index int) (Element, error)
	// Trace streams the commands of the devices named (none: every
	// device) that f selects. It calls emit first with the start event
	// once the devices are traced (the stream begins), then with each
	// batch;
	// it returns when ctx is done or emit fails (the reader went away),
	// and an error only before the stream began.
	// The lines are trace.Event JSON objects, or their text
	// (trace.Event.AppendText) when text.
	Trace(ctx context.Context, devices []string, f trace.Filter, text bool, emit func(lines []byte) error) error
	// Record streams a recording of the devices named (none: every
	// device): emit gets the header first (the stream begins), then the
	// commands batch by batch; the rest is as Trace.
	Record(ctx context.Context, devices []string, payloads bool, emit func(*record.Header, []record.Command) error) error
}

// statusOf maps the errno an error wraps to the HTTP status of the answer
// (500 for any other).
var statusOf = map[string]int{
	"ENODEV": http.StatusNotFound, "ENOENT": http.StatusNotFound,
	"EBUSY": http.StatusConflict, "ENOMEDIUM": http.StatusConflict, "EEXIST": http.StatusConflict,
	"EPERM":     http.StatusForbidden,
	"ESHUTDOWN": http.StatusServiceUnavailable,
	"EINVAL":    http.StatusBadRequest, "ENOTSUP": http.StatusBadRequest,
}

// Handler serves s over HTTP.
func Handler(s Service) http.Handler { return handler(context.Background(), s) }

// handler serves s; streams (trace) also end when stop is done, as
// http.Server.Shutdown does not end handlers itself.
func handler(stop context.Context, s Service) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/trace", func(w http.ResponseWriter, r *http.Request) {
		serveTrace(stop, w, r, s)
	})
	mux.HandleFunc("GET /v1/record", func(w http.ResponseWriter, r *http.Request) {
		serveRecord(stop, w, r, s)
	})
	mux.HandleFunc("GET /v1/devices", func(w http.ResponseWriter, _ *http.Request) {
		devs := s.Devices()
		if devs == nil {
			devs = []Device{}
		}
		writeJSON(w, http.StatusOK, devs)
	})
	mux.HandleFunc("POST /v1/devices", func(w http.ResponseWriter, r *http.Request) {
		var req CreateDevice
		if readJSON(w, r, &req) {
			dev, err := s.Create(r.Context(), req)
			answer(w, http.StatusCreated, dev, err)
		}
	})
	mux.HandleFunc("DELETE /v1/devices/{name}", func(w http.ResponseWriter, r *http.Request) {
		answer(w, http.StatusNoContent, nil, s.Remove(r.PathValue("name")))
	})
	mux.HandleFunc("GET /v1/devices/{name}/stats", func(w http.ResponseWriter, r *http.Request) {
		st, err := s.Stats(r.PathValue("name"))
		answer(w, http.StatusOK, st, err)
	})
	mux.HandleFunc("POST /v1/devices/{name}/load", func(w http.ResponseWriter, r *http.Request) {
		var req Load
		if readJSON(w, r, &req) {
			answer(w, http.StatusNoContent, nil, s.Load(r.PathValue("name"), req.Barcode))
		}
	})
	mux.HandleFunc("POST /v1/devices/{name}/unload", func(w http.ResponseWriter, r *http.Request) {
		answer(w, http.StatusNoContent, nil, s.Unload(r.PathValue("name")))
	})
	mux.HandleFunc("GET /v1/devices/{name}/faults", func(w http.ResponseWriter, r *http.Request) {
		f, err := s.Faults(r.PathValue("name"))
		answer(w, http.StatusOK, f, err)
	})
	mux.HandleFunc("POST /v1/devices/{name}/faults", func(w http.ResponseWriter, r *http.Request) {
		var req AddFault
		if readJSON(w, r, &req) {
			id, err := s.AddFault(r.PathValue("name"), req.Rule)
			answer(w, http.StatusOK, FaultAdded{ID: id}, err)
		}
	})
	mux.HandleFunc("DELETE /v1/devices/{name}/faults", func(w http.ResponseWriter, r *http.Request) {
		answer(w, http.StatusNoContent, nil, s.ClearFaults(r.PathValue("name")))
	})
	mux.HandleFunc("DELETE /v1/devices/{name}/faults/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
		if err != nil {
			writeError(w, fmt.Errorf("%w: rule id %q: want a number", unix.EINVAL, r.PathValue("id")))
			return
		}
		answer(w, http.StatusNoContent, nil, s.RemoveFault(r.PathValue("name"), id))
	})
	mux.HandleFunc("PUT /v1/devices/{name}/faults/timing", func(w http.ResponseWriter, r *http.Request) {
		var req SetTiming
		if readJSON(w, r, &req) {
			answer(w, http.StatusNoContent, nil, s.SetTiming(r.PathValue("name"), req.Timing))
		}
	})
	mux.HandleFunc("GET /v1/libraries/{name}", func(w http.ResponseWriter, r *http.Request) {
		l, err := s.Library(r.PathValue("name"))
		answer(w, http.StatusOK, l, err)
	})
	mux.HandleFunc("POST /v1/libraries/{name}/move", func(w http.ResponseWriter, r *http.Request) {
		var req Move
		if readJSON(w, r, &req) {
			answer(w, http.StatusNoContent, nil, s.Move(r.PathValue("name"), req))
		}
	})
	mux.HandleFunc("POST /v1/libraries/{name}/import", func(w http.ResponseWriter, r *http.Request) {
		var req Import
		if readJSON(w, r, &req) {
			e, err := s.Import(r.PathValue("name"), req.Barcode)
			answer(w, http.StatusOK, e, err)
		}
	})
	mux.HandleFunc("POST /v1/libraries/{name}/export", func(w http.ResponseWriter, r *http.Request) {
		var req Export
		if readJSON(w, r, &req) {
			e, err := s.Export(r.PathValue("name"), req.Index)
			answer(w, http.StatusOK, e, err)
		}
	})
	return mux
}

// serveTrace answers GET /v1/trace: newline-delimited JSON events, or
// their text lines with format=text.
func serveTrace(stop context.Context, w http.ResponseWriter, r *http.Request, s Service) {
	q := r.URL.Query()
	f, err := trace.FilterFromQuery(q)
	if err != nil {
		writeError(w, fmt.Errorf("%w: %w", unix.EINVAL, err))
		return
	}
	var text bool
	switch q.Get("format") {
	case "", "json":
	case "text":
		text = true
	default:
		writeError(w, fmt.Errorf("%w: format=%q: want json or text", unix.EINVAL, q.Get("format")))
		return
	}
	stream(stop, w, r, func(ctx context.Context, _ func(any) error, write func([]byte) error, flush func() error) error {
		return s.Trace(ctx, q["device"], f, text, func(lines []byte) error {
			if err := write(lines); err != nil {
				return err
			}
			return flush()
		})
	})
}

// serveRecord answers GET /v1/record: the recording's header, then its
// commands, as newline-delimited JSON.
func serveRecord(stop context.Context, w http.ResponseWriter, r *http.Request, s Service) {
	q := r.URL.Query()
	payloads := true
	if v := q.Get("payloads"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, fmt.Errorf("%w: payloads=%q: want true or false", unix.EINVAL, v))
			return
		}
		payloads = b
	}
	stream(stop, w, r, func(ctx context.Context, put func(any) error, _ func([]byte) error, flush func() error) error {
		return s.Record(ctx, q["device"], payloads, func(h *record.Header, cmds []record.Command) error {
			if h != nil {
				if err := put(h); err != nil {
					return err
				}
			}
			for i := range cmds {
				if err := put(&cmds[i]); err != nil {
					return err
				}
			}
			return flush()
		})
	})
}

// stream runs a streaming answer: run puts JSON lines (or writes lines
// it encoded) and flushes them;
// the status line goes out with the first flush, so an error run returns
// before it is an ordinary error answer. It ends when the client goes
// away or stop is done (http.Server.Shutdown does not end handlers).
func stream(stop context.Context, w http.ResponseWriter, r *http.Request,
	run func(ctx context.Context, put func(any) error, write func([]byte) error, flush func() error) error) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(stop, cancel)() // unregistered when the stream ends
	rc := http.NewResponseController(w)
	enc := json.NewEncoder(w)
	started := false
	begin := func() {
		if !started {
			started = true
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.WriteHeader(http.StatusOK)
		}
	}
	err := run(ctx, func(v any) error { begin(); return enc.Encode(v) },
		func(b []byte) error { begin(); _, err := w.Write(b); return err },
		func() error { begin(); return rc.Flush() })
	if err != nil && !started {
		writeError(w, err)
	}
}

// answer writes v with status, or the error.
func answer(w http.ResponseWriter, status int, v any, err error) {
	switch {
	case err != nil:
		writeError(w, err)
	case status == http.StatusNoContent:
		w.WriteHeader(status)
	default:
		writeJSON(w, status, v)
	}
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

// writeError answers err with the status and errno of the errno it wraps.
func writeError(w http.ResponseWriter, err error) {
	e := Error{Message: err.Error()}
	status := http.StatusInternalServerError
	if en, ok := errors.AsType[unix.Errno](err); ok {
		e.Errno = unix.ErrnoName(en)
		if s, ok := statusOf[e.Errno]; ok {
			status = s
		}
	}
	writeJSON(w, status, e)
}

// Listen listens on the unix socket path, mode 0600 (root only),
// creating its directory. A stale socket of an earlier daemon is replaced
// (the caller holds the daemon's lock file); any other file there is an
// error.
func Listen(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if st, err := os.Lstat(path); err == nil {
		if st.Mode()&fs.ModeSocket == 0 {
			return nil, fmt.Errorf("control socket %s: exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("control socket: remove stale %s: %w", path, err)
		}
	}
	old := unix.Umask(0o177) // the socket is created 0600
	l, err := net.Listen("unix", path)
	unix.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return l, nil
}

// Serve serves s on l until ctx is done, then shuts down gracefully. Only
// root and the daemon's own user are answered (allowPeers).
func Serve(ctx context.Context, l net.Listener, s Service) error {
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv := &http.Server{Handler: allowPeers(handler(streams, s), daemonUID()), ReadHeaderTimeout: 5 * time.Second, ConnContext: withPeer}
	srv.RegisterOnShutdown(endStreams)
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(l)
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("control socket: %w", err)
}
