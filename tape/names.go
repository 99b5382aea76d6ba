package tape

import "github.com/vscsid/vscsid/scsi"

// CommandName is the snake_case SSC name of op, "" for an opcode the drive
// does not support: what every Drive's CommandName says, for checking
// fault rules (op=) before a drive exists.
func CommandName(op scsi.OpCode) string { return commands[op].name }
