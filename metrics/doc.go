// Package metrics exports vscsid's measurements to Prometheus: every SCSI
// command counted, sized and timed per device, the TCMU ring's behaviour
// and limits, disk geometry and tape drive state.
//
// Producers (the transport, the disk, the drive, the changer, the fault
// injector) keep atomic counters and hand out snapshots of their own
// types; the Collector reads them at scrape time, the transport's
// target.DeviceStatus of every device and the emulation's and fault
// injector's snapshots found behind its handler (scsi.As), and emits const
// metrics (node_exporter's pattern): the command path has no label
// lookups, removed devices vanish from the next scrape, and no type
// mirrors a producer's.
//
// Wiring, in cmd/vscsid:
//
//	webFlags := metrics.AddFlags(fs)
//	...
//	reg, err := metrics.NewRegistry(metrics.NewCollector(tgt, metrics.Options{CmdTimeOut: &timeout}))
//	g.Go(func() error { return metrics.Serve(ctx, reg, webFlags, slogLogger) })
//
// README.md in this directory lists every metric.
package metrics
