// Package metrics exports vscsid's measurements to Prometheus: every SCSI
// command counted, sized and timed per device, the TCMU ring's behaviour
// and limits, disk geometry and tape drive state.
//
// The package knows nothing of TCMU or SCSI emulation. Producers (target,
// disk, tape) keep atomic counters and hand out plain snapshot structs; a
// small adapter in cmd/vscsid copies them into this package's Device
// values and satisfies Source. Collector reads a Source at scrape time and
// emits const metrics (node_exporter's pattern), so the command path has no
// label lookups and removed devices vanish from the next scrape.
//
// Wiring, in cmd/vscsid:
//
//	webFlags := metrics.AddFlags(fs)
//	...
//	reg, err := metrics.NewRegistry(metrics.NewCollector(metrics.SourceFunc(snapshot)))
//	g.Go(func() error { return metrics.Serve(ctx, reg, webFlags, slogLogger) })
//
// README.md in this directory lists every metric.
package metrics
