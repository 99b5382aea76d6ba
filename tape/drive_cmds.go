package tape

import "github.com/vscsid/vscsid/scsi"

// commandList is the drive's command set (named by scsi.SSC): CDB length,
// whether a ready cartridge is needed, the handler, and the CDB usage
// bitmap REPORT SUPPORTED OPERATION CODES reports (SPC-5 6.35.3: a
// bit set for every CDB bit the drive looks at; byte 0 is the opcode,
// the CONTROL byte is 07h).
func commandList() []command {
	const ctl = 0x07
	return []command{
		{cdbLen: 6, medium: true, run: (*Drive).testUnitReady,
			usage: []byte{byte(scsi.TestUnitReady), 0, 0, 0, 0, ctl}},
		{cdbLen: 6, medium: true, run: (*Drive).rewind, timeout: 600,
			usage: []byte{byte(scsi.Rewind), 0x01, 0, 0, 0, ctl}},
		{cdbLen: 6, run: (*Drive).requestSense,
			usage: []byte{byte(scsi.RequestSense), 0x01, 0, 0, 0xff, ctl}},
		{cdbLen: 6, medium: true, run: (*Drive).formatMedium, timeout: 3600,
			usage: []byte{byte(scsi.FormatMedium), 0x03, 0x0f, 0xff, 0xff, ctl}},
		{cdbLen: 6, run: (*Drive).readBlockLimits,
			usage: []byte{byte(scsi.ReadBlockLimits), 0x01, 0, 0, 0, ctl}},
		{cdbLen: 6, medium: true, run: (*Drive).read6, timeout: 900,
			usage: []byte{byte(scsi.Read6), 0x03, 0xff, 0xff, 0xff, ctl}},
		{cdbLen: 6, medium: true, run: (*Drive).write6, timeout: 900,
			usage: []byte{byte(scsi.Write6), 0x01, 0xff, 0xff, 0xff, ctl}},
		{cdbLen: 6, medium: true, run: (*Drive).setCapacity, timeout: 780,
			usage: []byte{byte(scsi.SetCapacity), 0x01, 0, 0xff, 0xff, ctl}},
		{cdbLen: 6, medium: true, run: (*Drive).writeFilemarks6, timeout: 900,
			usage: []byte{byte(scsi.WriteFilemarks6), 0x03, 0xff, 0xff, 0xff, ctl}},
		{cdbLen: 6, medium: true, run: (*Drive).space6, timeout: 3600,
			usage: []byte{byte(scsi.Space6), 0x0f, 0xff, 0xff, 0xff, ctl}},
		{cdbLen: 6, run: (*Drive).inquiry,
			usage: []byte{byte(scsi.Inquiry), 0x03, 0xff, 0xff, 0xff, ctl}},
		{cdbLen: 6, run: (*Drive).modeSelect,
			usage: []byte{byte(scsi.ModeSelect6), 0x11, 0, 0, 0xff, ctl}},
		{cdbLen: 6, medium: true, run: (*Drive).erase6, timeout: 14000,
			usage: []byte{byte(scsi.Erase6), 0x03, 0, 0, 0, ctl}},
		{cdbLen: 6, run: (*Drive).modeSense,
			usage: []byte{byte(scsi.ModeSense6), 0x08, 0xff, 0xff, 0xff, ctl}},
		{cdbLen: 6, run: (*Drive).loadUnload, timeout: 900,
			usage: []byte{byte(scsi.LoadUnload), 0x01, 0, 0, 0x0f, ctl}},
		{cdbLen: 6, run: (*Drive).sendDiagnostic, timeout: 600,
			usage: []byte{byte(scsi.SendDiagnostic), 0xf7, 0, 0xff, 0xff, ctl}},
		{cdbLen: 6, run: (*Drive).preventAllow,
			usage: []byte{byte(scsi.PreventAllowMedium), 0, 0, 0, 0x03, ctl}},
		{cdbLen: 10, medium: true, run: (*Drive).locate10, timeout: 3600,
			usage: []byte{byte(scsi.Locate10), 0x07, 0, 0xff, 0xff, 0xff, 0xff, 0, 0xff, ctl}},
		{cdbLen: 10, medium: true, run: (*Drive).readPosition,
			usage: []byte{byte(scsi.ReadPosition), 0x1f, 0, 0, 0, 0, 0, 0xff, 0xff, ctl}},
		{cdbLen: 10, run: (*Drive).readBuffer,
			usage: []byte{byte(scsi.ReadBuffer), 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, ctl}},
		{cdbLen: 10, run: (*Drive).reportDensity,
			usage: []byte{byte(scsi.ReportDensitySupport), 0x03, 0, 0, 0, 0, 0, 0xff, 0xff, ctl}},
		{cdbLen: 10, run: (*Drive).logSelect,
			usage: []byte{byte(scsi.LogSelect), 0x03, 0xc0, 0, 0, 0, 0, 0xff, 0xff, ctl}},
		{cdbLen: 10, run: (*Drive).logSense,
			usage: []byte{byte(scsi.LogSense), 0x03, 0xff, 0xff, 0, 0xff, 0xff, 0xff, 0xff, ctl}},
		{cdbLen: 10, run: (*Drive).modeSelect,
			usage: []byte{byte(scsi.ModeSelect10), 0x11, 0, 0, 0, 0, 0, 0xff, 0xff, ctl}},
		{cdbLen: 10, run: (*Drive).modeSense,
			usage: []byte{byte(scsi.ModeSense10), 0x18, 0xff, 0xff, 0, 0, 0, 0xff, 0xff, ctl}},
		{cdbLen: 16, medium: true, run: (*Drive).readAttribute,
			usage: []byte{byte(scsi.ReadAttribute), 0x1f, 0, 0, 0, 0xff, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, ctl}},
		{cdbLen: 16, medium: true, run: (*Drive).writeAttribute,
			usage: []byte{byte(scsi.WriteAttribute), 0x01, 0, 0, 0, 0xff, 0, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, ctl}},
		{cdbLen: 16, medium: true, run: (*Drive).writeFilemarks16, timeout: 900,
			usage: []byte{byte(scsi.WriteFilemarks16), 0x0d, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, ctl}},
		{cdbLen: 16, medium: true, run: (*Drive).read16, timeout: 900,
			usage: []byte{byte(scsi.Read16), 0x0f, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, ctl}},
		{cdbLen: 16, medium: true, run: (*Drive).write16, timeout: 900,
			usage: []byte{byte(scsi.Write16), 0x0d, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, ctl}},
		{cdbLen: 16, medium: true, run: (*Drive).space16, timeout: 3600,
			usage: []byte{byte(scsi.Space16), 0x0f, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, ctl}},
		{cdbLen: 16, medium: true, run: (*Drive).locate16, timeout: 3600,
			usage: []byte{byte(scsi.Locate16), 0x3b, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, ctl}},
		{cdbLen: 12, run: (*Drive).maintenanceIn, hasSA: true, sa: scsi.SAReportSupportedOpCodes,
			usage: []byte{byte(scsi.MaintenanceIn), scsi.SAReportSupportedOpCodes, 0x87, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, ctl}},
	}
}

// are applied by the dispatcher (medium flag).
func (d *Drive) testUnitReady(*scsi.Command) scsi.Response { return scsi.Good }

// requestSense is REQUEST SENSE (SPC-5 6.39): the current condition (NOT
// READY when there is no usable cartridge), else a pending unit attention,
// else NO SENSE.
func (d *Drive) requestSense(cmd *scsi.Command) scsi.Response {
	return d.spc.RequestSense(cmd, d.notReadySense())
}

func (d *Drive) inquiry(cmd *scsi.Command) scsi.Response        { return d.spc.Inquiry(cmd) }
func (d *Drive) sendDiagnostic(cmd *scsi.Command) scsi.Response { return d.spc.SendDiagnostic(cmd) }
func (d *Drive) modeSense(cmd *scsi.Command) scsi.Response      { return d.spc.ModeSense(cmd) }
func (d *Drive) maintenanceIn(cmd *scsi.Command) scsi.Response {
	if cmd.CDB.ServiceAction() != scsi.SAReportSupportedOpCodes {
		return check(scsi.InvalidFieldSense(1, 4))
	}
	return d.spc.ReportSupportedOpCodes(cmd)
}
