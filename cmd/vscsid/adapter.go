package main

import (
	"time"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/metrics"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/changer"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/fault"
)

// snapshotDevices adapts the producers' statistics (target's transport
// counters, the disk's and the tape drive's own, each device's fault
// injection) to the metrics package's plain types. It runs at scrape time
// only; each device's handler comes with its status, so nothing is looked
// up by name.
func snapshotDevices(devs []target.DeviceStatus, cfg *Config) []metrics.Device {
	out := make([]metrics.Device, 0, len(devs))
	var timeout *time.Duration
	if cfg.CmdTimeOut > 0 {
		d := time.Duration(cfg.CmdTimeOut) * time.Second
		timeout = &d
	}
	for _, ds := range devs {
		info, st := ds.Info, ds.Stats
		md := metrics.Device{
			Name:      info.Name,
			Type:      typeOf(info.Subtype),
			Subtype:   info.Subtype,
			HBA:       info.HBA,
			UIO:       info.UIO,
			Failed:    st.Failed,
			Exports:   exports(ds.Exports),
			Transport: transport(&st),
			Ring: metrics.Ring{
				CommandRingBytes: uint64(info.Ring.CmdrSize),
				DataAreaBytes:    info.Ring.DataSize,
				OOOC:             info.Ring.Has(target.FlagOOOC),
				ReadLen:          info.Ring.Has(target.FlagReadLen),
				TMR:              info.Ring.Has(target.FlagTMR),
				KeepBuf:          info.Ring.Has(target.FlagKeepBuf),
				Workers:          max(info.Ring.Workers, 1),
				BlockSize:        info.BlockSize,
				CmdTimeOut:       timeout,
			},
		}
		if h, ok := scsi.As[*disk.Disk](ds.Handler); ok {
			id := h.Identity
			md.Vendor, md.Product, md.Revision = id.Vendor, id.Product, id.Revision
			s := h.Stats()
			md.Disk = &metrics.Disk{
				Mode:              s.Mode.String(),
				Blocks:            s.Blocks,
				LogicalBlockSize:  s.LogicalBlockSize,
				PhysicalBlockSize: s.PhysicalBlockSize,
				StoreSize:         s.StoreSize,
				StoreAllocated:    s.StoreAllocated,
				WriteProtect:      s.WriteProtect,
				WriteCache:        s.WriteCache,
				Stopped:           s.Stopped,
				MisalignedReads:   s.MisalignedReads,
				MisalignedWrites:  s.MisalignedWrites,
			}
		}
		if h, ok := scsi.As[*changer.Changer](ds.Handler); ok {
			p := h.Personality()
			md.Vendor, md.Product, md.Revision = p.Vendor, p.Product, p.Revision
			md.Changer = changerMetrics(h.Stats())
		}
		if h, ok := scsi.As[*tape.Drive](ds.Handler); ok {
			p := h.Personality()
			md.Vendor, md.Product, md.Revision = p.Vendor, p.Product, p.Revision
			s := h.Stats()
			md.Tape = &metrics.Tape{
				Loaded:           s.Loaded,
				Barcode:          s.Barcode,
				LoadTime:         s.LoadTime,
				Partition:        s.Partition,
				Object:           s.Object,
				File:             s.File,
				UsedBytes:        s.UsedBytes,
				CapacityBytes:    s.CapacityBytes,
				FilemarksWritten: s.FilemarksWritten,
				EarlyWarnings:    s.EarlyWarnings,
				Cleanings:        s.Cleanings,
				CleanNow:         s.CleanNow,
				ILIEvents:        s.ILIEvents,
				FilemarkEvents:   s.FilemarkEvents,
				EODEvents:        s.EODEvents,
				BOPEvents:        s.BOPEvents,
			}
		}
		if fd, ok := scsi.As[*fault.Device](ds.Handler); ok {
			md.Fault = faultSection(fd)
		}
		out = append(out, md)
	}
	return out
}

// faultSection copies a fault wrapper's rule counters and delay statistics.
func faultSection(fd *fault.Device) *metrics.Fault {
	st := fd.Stats()
	f := &metrics.Fault{
		Delays:      st.Delays,
		Clamped:     st.Clamped,
		Held:        st.Held,
		Interrupted: st.Interrupted,
	}
	for _, r := range fd.Injected() {
		f.Rules = append(f.Rules, metrics.FaultRule{
			ID: r.ID, Action: r.Action, Matched: r.Matched, Injected: r.Injected, Spent: r.Spent,
		})
	}
	return f
}

func transport(st *target.DeviceStats) metrics.Transport {
	t := metrics.Transport{
		CheckConditions: st.CheckConditions,
		UnitAttentions:  st.UnitAttentions,
		Segments:        st.Segments,
		Batch:           st.Batch,
		Wakeups:         st.Wakeups,
		Kicks:           st.Kicks,
		InFlight:        st.InFlight,
		RingHighWater:   st.RingHighWater,
		Aborted:         st.Aborted,
		AbortedRunning:  st.AbortedRunning,
		UnknownEntries:  st.UnknownEntries,
		Pads:            st.Pads,
		ZeroFilledBytes: st.ZeroFilledBytes,
		ZeroFillWritten: st.ZeroFillWrittenBytes,
		ZeroFillSkipped: st.ZeroFillSkippedBytes,
		BadSense:        st.BadSense,
		BidiRejected:    st.BidiRejected,
	}
	for _, d := range []struct {
		dir target.Direction
		to  *metrics.Transfer
	}{{target.DirRead, &t.Read}, {target.DirWrite, &t.Write}} {
		x := st.Transfer(d.dir)
		*d.to = metrics.Transfer{Commands: x.Commands, Bytes: x.Bytes, Size: x.Size}
	}
	for _, c := range st.Commands {
		t.Commands = append(t.Commands, metrics.Command{
			Name: c.Name, Count: c.Count, CheckConditions: c.CheckConditions,
			Duration: c.Duration,
		})
	}
	// target counts by ASC only (ASCQ 0 in its codes): the collector then
	// names the ASC, whatever the qualifier was. Never nil: target always
	// counts them.
	t.SenseCodes = make([]metrics.SenseCode, 0, len(st.SenseCodes))
	for _, sc := range st.SenseCodes {
		t.SenseCodes = append(t.SenseCodes, metrics.SenseCode{Code: uint16(sc.ASC), Count: sc.Count})
	}
	for _, x := range st.TMRs {
		t.TMRs = append(t.TMRs, metrics.TMR{Type: x.Type.String(), Count: x.Count})
	}
	return t
}

func changerMetrics(s changer.Stats) *metrics.Changer {
	m := &metrics.Changer{Imports: s.Imports, Exports: s.Exports}
	for _, mv := range s.Moves {
		m.Moves = append(m.Moves, metrics.ChangerMove{From: mv.From.String(), To: mv.To.String(), Outcome: mv.Outcome,
			Count: mv.Count, Seconds: mv.Seconds})
	}
	for _, t := range [...]changer.ElementType{changer.Transport, changer.Storage, changer.ImportExport, changer.DataTransfer} {
		m.Elements = append(m.Elements, metrics.ChangerElements{Type: t.String(), Count: s.Elements[t], Full: s.Full[t]})
	}
	return m
}

// exports converts the LUN counts of a device, by fabric.
func exports(e []target.FabricLUNs) []metrics.Export {
	out := make([]metrics.Export, len(e))
	for i := range e {
		out[i] = metrics.Export{Fabric: e[i].Fabric, LUNs: e[i].LUNs}
	}
	return out
}
