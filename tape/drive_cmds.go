package tape

import "github.com/vscsid/vscsid/scsi"

// driveCommands is the drive's command table (named by scsi.SSC). The
// usage bitmaps are what REPORT SUPPORTED OPERATION CODES reports (SPC-5
// 6.35.3: a bit set for every CDB bit the drive looks at; in the CONTROL
// byte only NACA, which scsi.Table.Serve refuses). Medium commands are NOT
// READY without a ready cartridge (Drive.notReadySense).
var driveCommands = scsi.NewTable(scsi.SSC, scsi.Readiness[*Drive]{Closed: (*Drive).isClosed, NotReady: (*Drive).notReady}, []scsi.Op[*Drive]{
	{Respond: (*Drive).testUnitReady,
		Desc: scsi.Usage(byte(scsi.TestUnitReady), 0, 0, 0, 0, 0x04).WithMedium()},
	{Respond: (*Drive).rewind,
		Desc: scsi.Usage(byte(scsi.Rewind), 0x01, 0, 0, 0, 0x04).WithMedium().WithClass(scsi.ClassMech).WithImmed(1, 0x01).WithTimeout(600)},
	{Respond: (*Drive).requestSense,
		Desc: scsi.Usage(byte(scsi.RequestSense), 0x01, 0, 0, 0xff, 0x04)},
	{Respond: (*Drive).formatMedium,
		Desc: scsi.Usage(byte(scsi.FormatMedium), 0x03, 0x0f, 0xff, 0xff, 0x04).WithMedium().WithTimeout(3600)},
	{Respond: (*Drive).readBlockLimits,
		Desc: scsi.Usage(byte(scsi.ReadBlockLimits), 0x01, 0, 0, 0, 0x04)},
	{Respond: (*Drive).read6,
		Desc: scsi.Usage(byte(scsi.Read6), 0x03, 0xff, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassRead).WithTimeout(900).WithExtent(sscExtent)},
	{Respond: (*Drive).write6,
		Desc: scsi.Usage(byte(scsi.Write6), 0x01, 0xff, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassWrite).WithTimeout(900).WithExtent(sscExtent)},
	{Respond: (*Drive).setCapacity,
		Desc: scsi.Usage(byte(scsi.SetCapacity), 0x01, 0, 0xff, 0xff, 0x04).WithMedium().WithTimeout(780)},
	{Respond: (*Drive).writeFilemarks6,
		Desc: scsi.Usage(byte(scsi.WriteFilemarks6), 0x03, 0xff, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassFilemarks).WithImmed(1, 0x01).WithTimeout(900).WithExtent(sscExtent)},
	{Respond: (*Drive).space6,
		Desc: scsi.Usage(byte(scsi.Space6), 0x0f, 0xff, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassPosition).WithTimeout(3600).WithExtent(sscExtent)},
	{Respond: (*Drive).inquiry,
		Desc: scsi.Usage(byte(scsi.Inquiry), 0x03, 0xff, 0xff, 0xff, 0x04)},
	{Respond: (*Drive).modeSelect,
		Desc: scsi.Usage(byte(scsi.ModeSelect6), 0x11, 0, 0, 0xff, 0x04)},
	{Respond: (*Drive).erase6,
		Desc: scsi.Usage(byte(scsi.Erase6), 0x03, 0, 0, 0, 0x04).WithMedium().WithClass(scsi.ClassMech).WithImmed(1, 0x02).WithTimeout(14000)},
	{Respond: (*Drive).modeSense,
		Desc: scsi.Usage(byte(scsi.ModeSense6), 0x08, 0xff, 0xff, 0xff, 0x04)},
	{Respond: (*Drive).loadUnload,
		Desc: scsi.Usage(byte(scsi.LoadUnload), 0x01, 0, 0, 0x0f, 0x04).WithClass(scsi.ClassMech).WithImmed(1, 0x01).WithTimeout(900)},
	{Respond: (*Drive).sendDiagnostic,
		Desc: scsi.Usage(byte(scsi.SendDiagnostic), 0xf7, 0, 0xff, 0xff, 0x04).WithTimeout(600)},
	{Respond: (*Drive).preventAllow,
		Desc: scsi.Usage(byte(scsi.PreventAllowMedium), 0, 0, 0, 0x03, 0x04)},
	{Respond: (*Drive).locate10,
		Desc: scsi.Usage(byte(scsi.Locate10), 0x07, 0, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0x04).WithMedium().WithClass(scsi.ClassPosition).WithImmed(1, 0x01).WithTimeout(3600).WithExtent(sscExtent)},
	{Respond: (*Drive).readPosition,
		Desc: scsi.Usage(byte(scsi.ReadPosition), 0x1f, 0, 0, 0, 0, 0, 0xff, 0xff, 0x04).WithMedium()},
	{Respond: (*Drive).readBuffer,
		Desc: scsi.Usage(byte(scsi.ReadBuffer), 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x04)},
	{Respond: (*Drive).reportDensity,
		Desc: scsi.Usage(byte(scsi.ReportDensitySupport), 0x03, 0, 0, 0, 0, 0, 0xff, 0xff, 0x04)},
	{Respond: (*Drive).logSelect,
		Desc: scsi.Usage(byte(scsi.LogSelect), 0x03, 0xc0, 0, 0, 0, 0, 0xff, 0xff, 0x04)},
	{Respond: (*Drive).logSense,
		Desc: scsi.Usage(byte(scsi.LogSense), 0x03, 0xff, 0xff, 0, 0xff, 0xff, 0xff, 0xff, 0x04)},
	{Respond: (*Drive).modeSelect,
		Desc: scsi.Usage(byte(scsi.ModeSelect10), 0x11, 0, 0, 0, 0, 0, 0xff, 0xff, 0x04)},
	{Respond: (*Drive).modeSense,
		Desc: scsi.Usage(byte(scsi.ModeSense10), 0x18, 0xff, 0xff, 0, 0, 0, 0xff, 0xff, 0x04)},
	{Respond: (*Drive).readAttribute,
		Desc: scsi.Usage(byte(scsi.ReadAttribute), 0x1f, 0, 0, 0, 0xff, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x04).WithMedium()},
	{Respond: (*Drive).writeAttribute,
		Desc: scsi.Usage(byte(scsi.WriteAttribute), 0x01, 0, 0, 0, 0xff, 0, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0x04).WithMedium()},
	{Respond: (*Drive).writeFilemarks16,
		Desc: scsi.Usage(byte(scsi.WriteFilemarks16), 0x0d, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassFilemarks).WithImmed(1, 0x01).WithTimeout(900).WithExtent(sscExtent)},
	{Respond: (*Drive).read16,
		Desc: scsi.Usage(byte(scsi.Read16), 0x0f, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassRead).WithTimeout(900).WithExtent(sscExtent)},
	{Respond: (*Drive).write16,
		Desc: scsi.Usage(byte(scsi.Write16), 0x0d, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassWrite).WithTimeout(900).WithExtent(sscExtent)},
	{Respond: (*Drive).space16,
		Desc: scsi.Usage(byte(scsi.Space16), 0x0f, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04).WithMedium().WithClass(scsi.ClassPosition).WithTimeout(3600).WithExtent(sscExtent)},
	{Respond: (*Drive).locate16,
		Desc: scsi.Usage(byte(scsi.Locate16), 0x3b, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0x04).WithMedium().WithClass(scsi.ClassPosition).WithImmed(1, 0x01).WithTimeout(3600).WithExtent(sscExtent)},
	{Respond: (*Drive).securityProtocolIn,
		Desc: scsi.Usage(byte(scsi.SecurityProtocolIn), 0xff, 0xff, 0xff, 0x80, 0, 0xff, 0xff, 0xff, 0xff, 0, 0x04)},
	{Respond: (*Drive).securityProtocolOut,
		Desc: scsi.Usage(byte(scsi.SecurityProtocolOut), 0xff, 0xff, 0xff, 0x80, 0, 0xff, 0xff, 0xff, 0xff, 0, 0x04)},
	{Respond: (*Drive).reportSupportedOpCodes,
		Desc: scsi.Usage(byte(scsi.MaintenanceIn), scsi.SAReportSupportedOpCodes, 0x87, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04).WithSA(scsi.SAReportSupportedOpCodes)},
}...)

// plainDriveCommands is the table of a model without encryption: no
// SECURITY PROTOCOL IN/OUT (INVALID COMMAND OPERATION CODE, as on a DAT72).
var plainDriveCommands = driveCommands.Select(func(d *scsi.Desc) bool {
	return d.OpCode != scsi.SecurityProtocolIn && d.OpCode != scsi.SecurityProtocolOut
})

// testUnitReady is TEST UNIT READY: GOOD once the checks Serve makes
// (medium) have passed.
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
func (d *Drive) reportSupportedOpCodes(cmd *scsi.Command) scsi.Response {
	return d.spc.ReportSupportedOpCodes(cmd)
}
