package metrics

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/internal/stat"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/changer"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/tcmu"
)

// Collector is a prometheus.Collector that turns a Source's devices into
// const metrics at scrape time, node_exporter style: nothing is stored
// between scrapes, so a removed device disappears from the next scrape,
// and the command path only ever touches its producer's atomic counters.
//
// Collect never panics on what the Source returns: an inconsistent value
// (a duplicate device name, a histogram whose counts do not match its
// bounds, a label value that is not UTF-8) becomes an invalid metric, which
// the registry reports as a gathering error for that series only (with
// promhttp.ContinueOnError, as Serve uses, the rest is still served).
//
// Concurrency: Describe and Collect may be called concurrently; each
// Collect calls Source.Devices once.
type Collector struct {
	src  Source
	opts Options
}

// NewCollector returns a Collector reading src at every scrape.
func NewCollector(src Source, opts Options) *Collector {
	return &Collector{src: src, opts: opts}
}

// Describe sends the descriptors of every metric Collect may send.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect sends the metrics of every device of one snapshot.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	devs := c.src.Devices()
	byType := map[string]int{TypeDisk: 0, TypeTape: 0, TypeChanger: 0}
	seen := make(map[string]bool, len(devs))
	for i := range devs {
		d := &devs[i]
		name := d.Info.Name
		switch {
		case name == "":
			ch <- prometheus.NewInvalidMetric(descDeviceInfo, errors.New("device with an empty name dropped"))
			continue
		case !utf8.ValidString(name):
			ch <- prometheus.NewInvalidMetric(descDeviceInfo, fmt.Errorf("device name %q is not valid UTF-8: device dropped", name))
			continue
		case seen[name]:
			ch <- prometheus.NewInvalidMetric(descDeviceInfo, fmt.Errorf("duplicate device name %q: all but the first dropped", name))
			continue
		}
		seen[name] = true
		byType[c.collectDevice(ch, d)]++
	}
	for t, n := range byType {
		gauge(ch, descDevices, float64(n), t)
	}
}

// collectDevice sends one device's metrics and returns its type: that of
// the emulation found behind its handler ("" for none of ours).
func (c *Collector) collectDevice(ch chan<- prometheus.Metric, d *target.DeviceStatus) string {
	name, h := d.Info.Name, d.Handler
	var typ string
	switch {
	case is[diskSource](h):
		typ = TypeDisk
		dk, _ := scsi.As[diskSource](h)
		collectDisk(ch, name, dk.Stats())
	case is[tapeSource](h):
		typ = TypeTape
		tp, _ := scsi.As[tapeSource](h)
		collectTape(ch, name, tp.Stats())
	case is[changerSource](h):
		typ = TypeChanger
		cg, _ := scsi.As[changerSource](h)
		collectChanger(ch, name, cg.Stats())
	}
	var id scsi.Identity
	if u, ok := scsi.As[identified](h); ok {
		id = u.UnitIdentity()
	}
	info := &d.Info
	gauge(ch, descDeviceInfo, 1, name, typ, info.Subtype, strconv.Itoa(info.HBA), info.UIO, id.Vendor, id.Product, id.Revision)
	gauge(ch, descDeviceFailed, b2f(d.Stats.Failed), name)
	for _, e := range d.Exports {
		gauge(ch, descExportedLUNs, float64(e.LUNs), name, e.Fabric)
	}
	collectTransport(ch, name, &d.Stats)
	c.collectRing(ch, name, info)
	if f, ok := scsi.As[faultSource](h); ok {
		collectFault(ch, name, f.Stats(), f.Injected())
	}
	return typ
}

// is reports whether h, or a handler it wraps, is a T.
func is[T any](h scsi.Handler) bool {
	_, ok := scsi.As[T](h)
	return ok
}

func collectTransport(ch chan<- prometheus.Metric, name string, t *tcmu.DeviceStats) {
	for _, c := range mergeCommands(t.Commands) {
		counter(ch, descCommands, float64(c.Count), name, c.Name)
		counter(ch, descCommandCheckConditions, float64(c.CheckConditions), name, c.Name)
		histogram(ch, descCommandDuration, c.Duration, name, c.Name)
	}
	for k, n := range t.CheckConditions {
		counter(ch, descCheckConditions, float64(n), name, senseKeyNames[k])
	}
	byName := make(map[string]uint64)
	for _, sc := range t.SenseCodes {
		byName[ascName(uint16(sc.ASC))] += sc.Count
	}
	for asc, n := range byName {
		counter(ch, descSenseCodes, float64(n), name, asc)
	}
	counter(ch, descUnitAttentions, float64(t.UnitAttentions), name)
	read, write := t.Transfer(tcmu.DirRead), t.Transfer(tcmu.DirWrite)
	histogram(ch, descTransferSize, read.Size, name, dirRead)
	histogram(ch, descTransferSize, write.Size, name, dirWrite)
	counter(ch, descReadBytes, float64(read.Bytes), name)
	counter(ch, descWrittenBytes, float64(write.Bytes), name)
	histogram(ch, descSegments, t.Segments, name)

	gauge(ch, descInFlight, float64(t.InFlight), name)
	histogram(ch, descBatch, t.Batch, name)
	counter(ch, descWakeups, float64(t.Wakeups), name)
	counter(ch, descPolls, float64(t.PollFound), name, "found")
	counter(ch, descPolls, float64(t.PollExpired), name, "expired")
	counter(ch, descPollSeconds, t.PollTime.Seconds(), name)
	counter(ch, descKicks, float64(t.Kicks), name)
	gauge(ch, descHighWater, float64(t.RingHighWater), name)
	tmrs := make(map[string]uint64, len(tmrTypes)+len(t.TMRs))
	for _, typ := range tmrTypes {
		tmrs[typ] = 0
	}
	for _, tmr := range t.TMRs {
		tmrs[tmr.Type.String()] += tmr.Count
	}
	for typ, n := range tmrs {
		counter(ch, descTMRs, float64(n), name, typ)
	}
	counter(ch, descAborted, float64(t.Aborted), name)
	counter(ch, descAbortedRunning, float64(t.AbortedRunning), name)
	counter(ch, descUnknownEntries, float64(t.UnknownEntries), name)
	counter(ch, descPads, float64(t.Pads), name)
	counter(ch, descZeroFilled, float64(t.ZeroFilledBytes), name)
	counter(ch, descZeroFill, float64(t.ZeroFillWrittenBytes), name, "written")
	counter(ch, descZeroFill, float64(t.ZeroFillSkippedBytes), name, "skipped")
	counter(ch, descBadSense, float64(t.BadSense), name)
	counter(ch, descBidi, float64(t.BidiRejected), name)
	counter(ch, descTraceLost, float64(t.TraceLost), name)
}

func (c *Collector) collectRing(ch chan<- prometheus.Metric, name string, info *target.DeviceInfo) {
	r := &info.Ring
	if r.CmdrSize > 0 {
		gauge(ch, descCommandArea, float64(r.CmdrSize), name)
	}
	if r.DataSize > 0 {
		gauge(ch, descDataArea, float64(r.DataSize), name)
	}
	gauge(ch, descCapability, b2f(r.Has(tcmu.FlagOOOC)), name, CapOOOC)
	gauge(ch, descCapability, b2f(r.Has(tcmu.FlagReadLen)), name, CapReadLen)
	gauge(ch, descCapability, b2f(r.Has(tcmu.FlagTMR)), name, CapTMR)
	gauge(ch, descCapability, b2f(r.Has(tcmu.FlagKeepBuf)), name, CapKeepBuf)
	gauge(ch, descWorkers, float64(max(r.Workers, 1)), name)
	if info.BlockSize > 0 {
		gauge(ch, descBlockSize, float64(info.BlockSize), name)
	}
	if c.opts.CmdTimeOut != nil {
		gauge(ch, descCmdTimeOut, c.opts.CmdTimeOut.Seconds(), name)
	}
}

func collectDisk(ch chan<- prometheus.Metric, name string, d disk.Stats) {
	gauge(ch, descDiskInfo, 1, name, d.Mode.String())
	gauge(ch, descDiskCapacity, float64(d.Blocks)*float64(d.LogicalBlockSize), name)
	gauge(ch, descLogicalBlock, float64(d.LogicalBlockSize), name)
	gauge(ch, descPhysicalBlock, float64(d.PhysicalBlockSize), name)
	counter(ch, descMisaligned, float64(d.MisalignedReads), name, dirRead)
	counter(ch, descMisaligned, float64(d.MisalignedWrites), name, dirWrite)
	gauge(ch, descStoreSize, float64(d.StoreSize), name)
	gauge(ch, descStoreAllocated, float64(d.StoreAllocated), name)
	gauge(ch, descWriteProtected, b2f(d.WriteProtect), name)
	gauge(ch, descWriteCache, b2f(d.WriteCache), name)
	gauge(ch, descStopped, b2f(d.Stopped), name)
}

func collectTape(ch chan<- prometheus.Metric, name string, t tape.Stats) {
	gauge(ch, descLoaded, b2f(t.Loaded), name)
	if t.Loaded {
		gauge(ch, descMediumInfo, 1, name, t.Barcode)
		if !t.LoadTime.IsZero() {
			gauge(ch, descLoadTime, float64(t.LoadTime.UnixNano())/1e9, name)
		}
		gauge(ch, descUsed, float64(t.UsedBytes), name)
		gauge(ch, descCapacity, float64(t.CapacityBytes), name)
		gauge(ch, descPartition, float64(t.Partition), name)
		gauge(ch, descFile, float64(t.File), name)
		gauge(ch, descObject, float64(t.Object), name)
	}
	counter(ch, descFilemarksWritten, float64(t.FilemarksWritten), name)
	counter(ch, descEarlyWarnings, float64(t.EarlyWarnings), name)
	counter(ch, descTapeData, float64(t.ReadBytes), name, dirRead)
	counter(ch, descTapeData, float64(t.WrittenBytes), name, dirWrite)
	counter(ch, descTapeMedium, float64(t.MediumReadBytes), name, dirRead)
	counter(ch, descTapeMedium, float64(t.MediumWrittenBytes), name, dirWrite)
	counter(ch, descTapeEncrypted, float64(t.DecryptedBytes), name, dirRead)
	counter(ch, descTapeEncrypted, float64(t.EncryptedBytes), name, dirWrite)
	counter(ch, descCleanings, float64(t.Cleanings), name)
	gauge(ch, descCleanNow, b2f(t.CleanNow), name)
	counter(ch, descTapeEvents, float64(t.ILIEvents), name, eventILI)
	counter(ch, descTapeEvents, float64(t.FilemarkEvents), name, eventFilemark)
	counter(ch, descTapeEvents, float64(t.EODEvents), name, eventEOD)
	counter(ch, descTapeEvents, float64(t.BOPEvents), name, eventBOP)
}

func collectChanger(ch chan<- prometheus.Metric, name string, c changer.Stats) {
	for _, m := range c.Moves {
		from, to := m.From.String(), m.To.String()
		counter(ch, descChangerMoves, float64(m.Count), name, from, to, m.Outcome)
		counter(ch, descChangerMoveSeconds, m.Seconds, name, from, to, m.Outcome)
	}
	for _, t := range [...]changer.ElementType{changer.Transport, changer.Storage, changer.ImportExport, changer.DataTransfer} {
		gauge(ch, descChangerElements, float64(c.Elements[t]), name, t.String())
		gauge(ch, descChangerFull, float64(c.Full[t]), name, t.String())
	}
	counter(ch, descChangerImports, float64(c.Imports), name)
	counter(ch, descChangerExports, float64(c.Exports), name)
}

func collectFault(ch chan<- prometheus.Metric, name string, f fault.Stats, rules []fault.RuleStats) {
	seen := make(map[uint64]bool, len(rules))
	for _, r := range rules {
		if seen[r.ID] {
			err := fmt.Errorf("device %q: duplicate fault rule %d", name, r.ID)
			ch <- prometheus.NewInvalidMetric(descFaultMatched, err)
			continue
		}
		seen[r.ID] = true
		id := strconv.FormatUint(r.ID, 10)
		counter(ch, descFaultMatched, float64(r.Matched), name, id, r.Action)
		counter(ch, descFaultInjected, float64(r.Injected), name, id, r.Action)
	}
	histogram(ch, descFaultDelay, f.Delays, name)
	counter(ch, descFaultClamped, float64(f.Clamped), name)
	counter(ch, descFaultHeld, float64(f.Held), name)
	counter(ch, descFaultInterrupted, float64(f.Interrupted), name)
}

// mergeCommands returns cmds with unnamed commands renamed "other" and
// entries of the same name added up, so that every command label value
// occurs once. Histograms of merged entries must have the same bounds;
// the merged Counts are a fresh slice (the input is not modified).
func mergeCommands(cmds []tcmu.CommandStats) []tcmu.CommandStats {
	out := make([]tcmu.CommandStats, 0, len(cmds))
	idx := make(map[string]int, len(cmds))
	for _, c := range cmds {
		if c.Name == "" {
			c.Name = otherCommand
		}
		i, ok := idx[c.Name]
		if !ok {
			idx[c.Name] = len(out)
			out = append(out, c)
			continue
		}
		m := &out[i]
		m.Count += c.Count
		m.CheckConditions += c.CheckConditions
		m.Duration = m.Duration.Add(c.Duration)
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, lv ...string) {
	constMetric(ch, d, prometheus.GaugeValue, v, lv)
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, lv ...string) {
	constMetric(ch, d, prometheus.CounterValue, v, lv)
}

func constMetric(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v float64, lv []string) {
	m, err := prometheus.NewConstMetric(d, t, v, lv...)
	if err != nil {
		m = prometheus.NewInvalidMetric(d, err)
	}
	ch <- m
}

// histogram sends h as a const histogram with cumulative buckets. A zero
// Histogram (no bounds, no counts) means the producer has none: nothing is
// sent.
func histogram(ch chan<- prometheus.Metric, d *prometheus.Desc, h stat.Histogram, lv ...string) {
	if h.Bounds == nil && h.Counts == nil {
		return
	}
	buckets, count, ok := h.Cumulative()
	if !ok {
		ch <- prometheus.NewInvalidMetric(d, fmt.Errorf("histogram %v: %d counts for %d bounds (want bounds+1)", lv, len(h.Counts), len(h.Bounds)))
		return
	}
	m, err := prometheus.NewConstHistogram(d, count, h.Sum, buckets, lv...)
	if err != nil {
		m = prometheus.NewInvalidMetric(d, err)
	}
	ch <- m
}
