package metrics

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
)

// DefaultListenAddress is where /metrics is served unless
// --web.listen-address says otherwise: loopback only, so that nothing is
// exposed beyond the host until the operator decides to (and then, with
// --web.config.file, with TLS and basic auth).
const DefaultListenAddress = "127.0.0.1:9544"

// NewRegistry returns a dedicated registry (never the global one) with the
// Go runtime, process and vscsi_build_info collectors and then cs. The
// build info comes from github.com/prometheus/common/version, whose
// Version, Revision, Branch, BuildUser and BuildDate are set at link time
// with -ldflags -X (the revision falls back to the VCS stamp of the
// binary).
func NewRegistry(cs ...prometheus.Collector) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	all := append([]prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		versioncollector.NewCollector(Namespace),
	}, cs...)
	for _, c := range all {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register metrics collector: %w", err)
		}
	}
	return reg, nil
}

// Flags are the web flags Serve takes: exporter-toolkit's, and whether
// Go's runtime profiles are served too.
type Flags struct {
	*web.FlagConfig
	// Pprof serves net/http/pprof under /debug/pprof/, behind the same
	// listener, TLS and basic auth as /metrics. Off by default: a profile
	// shows where the daemon's CPU goes (the perf suite takes one), and
	// costs nothing until it is asked for.
	Pprof *bool
}

// Check validates the web configuration file, if one is given, as
// exporter-toolkit reads it when serving (users, TLS certificates and
// keys), so that --check-config and the start refuse the same files.
func (f *Flags) Check() error {
	if f.WebConfigFile == nil || *f.WebConfigFile == "" {
		return nil
	}
	if err := web.Validate(*f.WebConfigFile); err != nil {
		return fmt.Errorf("--web.config.file %s: %w", *f.WebConfigFile, err)
	}
	return nil
}

// AddFlags defines the exporter-toolkit web flags on fs, with their usual
// names and meaning, and returns the configuration Serve takes:
//
//	--web.listen-address   address to listen on; repeat for several (default 127.0.0.1:9544)
//	--web.config.file      exporter-toolkit web config (TLS, basic auth); "" = plain HTTP
//	--web.systemd-socket   use the sockets systemd passes (socket activation) instead
//	--web.pprof            also serve Go's runtime profiles under /debug/pprof/
func AddFlags(fs *flag.FlagSet) *Flags {
	addrs := &listFlag{list: []string{DefaultListenAddress}}
	fs.Var(addrs, "web.listen-address",
		"`ADDRESS` to serve /metrics on; repeat the flag to listen on several (e.g. [::1]:9544, or vsock://:9544)")
	return &Flags{
		FlagConfig: &web.FlagConfig{
			WebListenAddresses: &addrs.list,
			WebSystemdSocket: fs.Bool("web.systemd-socket", false,
				"serve /metrics on the sockets systemd passes (socket activation) instead of --web.listen-address"),
			WebConfigFile: fs.String("web.config.file", "",
				"path to an exporter-toolkit web configuration `FILE` enabling TLS and/or basic authentication (see https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md)"),
		},
		Pprof: fs.Bool("web.pprof", false,
			"also serve Go's runtime profiles (net/http/pprof) under /debug/pprof/, e.g. a CPU profile of the command path with go tool pprof"),
	}
}

// listFlag is a repeatable string flag whose first use replaces the
// default.
type listFlag struct {
	list []string
	set  bool
}

func (f *listFlag) String() string { return strings.Join(f.list, ",") }

func (f *listFlag) Set(s string) error {
	if s == "" {
		return errors.New("empty address")
	}
	if !f.set {
		f.list, f.set = nil, true
	}
	f.list = append(f.list, s)
	return nil
}

// shutdownTimeout bounds how long Serve waits for scrapes in progress when
// ctx is done.
const shutdownTimeout = 5 * time.Second

// Serve serves reg on /metrics (and a landing page on /, and with
// flags.Pprof the runtime profiles on /debug/pprof/) with
// exporter-toolkit's web.ListenAndServe, so --web.config.file gives TLS and
// bcrypt basic auth, until ctx is done; it then shuts the server down and
// returns nil. It returns an error if it cannot start (a bad address, a
// port in use, a bad web config file) or the server fails.
//
// Scrape errors (an invalid metric from a collector) are logged at Error
// level and counted in promhttp_metric_handler_errors_total; the metrics
// that could be gathered are still served.
func Serve(ctx context.Context, reg *prometheus.Registry, flags *Flags, log *slog.Logger) error {
	if reg == nil || flags == nil || flags.FlagConfig == nil || log == nil {
		return errors.New("metrics: Serve needs a registry, flags and a logger")
	}
	mux := http.NewServeMux()
	metricsHandler := promhttp.InstrumentMetricHandler(reg, promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:            slogPrintln{log},
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
		Timeout:             30 * time.Second,
	}))
	mux.Handle("/metrics", metricsHandler)
	profiling := "false" // the landing page links the profiles unless told not to
	if flags.Pprof != nil && *flags.Pprof {
		profiling = "true"
		// On this mux, not http.DefaultServeMux, where the package's init
		// also registers them: nothing serves that one.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        "vscsid",
		Description: "Emulated SCSI tape drives and disks over TCMU",
		Links:       []web.LandingLinks{{Address: "/metrics", Text: "Metrics"}},
		Profiling:   profiling,
	})
	if err != nil {
		return fmt.Errorf("metrics landing page: %w", err)
	}
	mux.Handle("/", landing)

	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	done := make(chan error, 1)
	go func() { done <- web.ListenAndServe(srv, flags.FlagConfig, log) }()
	select {
	case err := <-done:
		if err == nil || errors.Is(err, http.ErrServerClosed) {
			err = errors.New("stopped unexpectedly")
		}
		return fmt.Errorf("metrics server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close() // scrapes still running after the timeout
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics server: %w", err)
	}
	return nil
}

// slogPrintln adapts an *slog.Logger to promhttp.Logger.
type slogPrintln struct{ log *slog.Logger }

func (l slogPrintln) Println(v ...any) {
	l.log.Error("serving metrics", "error", fmt.Sprint(v...))
}
