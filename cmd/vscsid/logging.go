package main

import (
	"io"
	"os"
	"strconv"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/buffer"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sys/unix"
)

// Log formats (--log.format). auto picks journal when stderr is the
// systemd journal's stream (JOURNAL_STREAM), console on a terminal, json
// otherwise.
const (
	logAuto    = "auto"
	logJSON    = "json"
	logConsole = "console"
	logJournal = "journal"
)

var logFormats = []string{logAuto, logJSON, logConsole, logJournal}

// newLogger builds the daemon's logger writing to w in o's format and
// level.
func newLogger(o *options, w io.Writer) *zap.Logger {
	var enc zapcore.Encoder
	switch resolveLogFormat(o.logFormat, w) {
	case logConsole:
		ec := zap.NewDevelopmentEncoderConfig()
		ec.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
		enc = zapcore.NewConsoleEncoder(ec)
	case logJournal:
		// The journal stamps the time and the unit; the level is the
		// line's syslog priority prefix, which journalctl -p filters.
		ec := zap.NewDevelopmentEncoderConfig()
		ec.TimeKey, ec.LevelKey, ec.CallerKey = "", "", ""
		enc = journalEncoder{zapcore.NewConsoleEncoder(ec)}
	default:
		enc = zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	}
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), o.logLevel)
	return zap.New(core, zap.ErrorOutput(zapcore.AddSync(w)))
}

// resolveLogFormat is the format auto stands for on w.
func resolveLogFormat(format string, w io.Writer) string {
	if format != logAuto {
		return format
	}
	f, ok := w.(*os.File)
	switch {
	case ok && isJournalStream(f):
		return logJournal
	case ok && isTerminal(f):
		return logConsole
	}
	return logJSON
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// isJournalStream reports whether f is the stream systemd connected to the
// journal: JOURNAL_STREAM holds its device and inode (systemd.exec(5)), so
// a redirection of stderr elsewhere is not mistaken for it.
func isJournalStream(f *os.File) bool {
	dev, ino, ok := strings.Cut(os.Getenv("JOURNAL_STREAM"), ":")
	if !ok {
		return false
	}
	d, err1 := strconv.ParseUint(dev, 10, 64)
	i, err2 := strconv.ParseUint(ino, 10, 64)
	var st unix.Stat_t
	if err1 != nil || err2 != nil || unix.Fstat(int(f.Fd()), &st) != nil {
		return false
	}
	return uint64(st.Dev) == d && st.Ino == i //nolint:unconvert // Dev is not uint64 on every platform
}

// Syslog priorities (sd-daemon(3) prefixes).
const (
	prioCrit    = 2
	prioErr     = 3
	prioWarning = 4
	prioInfo    = 6
	prioDebug   = 7
)

// priority is a zap level's syslog priority.
func priority(l zapcore.Level) int {
	switch {
	case l >= zapcore.DPanicLevel:
		return prioCrit
	case l == zapcore.ErrorLevel:
		return prioErr
	case l == zapcore.WarnLevel:
		return prioWarning
	case l == zapcore.InfoLevel:
		return prioInfo
	}
	return prioDebug
}

// journalPrefix is the "<N>" that makes the journal file a line at
// priority N (SyslogLevelPrefix=, on by default).
func journalPrefix(prio int) string { return "<" + strconv.Itoa(prio) + ">" }

// journalEncoder prefixes each entry with its level's priority.
type journalEncoder struct{ zapcore.Encoder }

var journalPool = buffer.NewPool()

func (e journalEncoder) Clone() zapcore.Encoder { return journalEncoder{e.Encoder.Clone()} }

func (e journalEncoder) EncodeEntry(ent zapcore.Entry, fields []zapcore.Field) (*buffer.Buffer, error) {
	line, err := e.Encoder.EncodeEntry(ent, fields)
	if err != nil {
		return nil, err
	}
	b := journalPool.Get()
	b.AppendString(journalPrefix(priority(ent.Level)))
	_, _ = b.Write(line.Bytes())
	line.Free()
	return b, nil
}

// errorLine is how main reports the error it exits with on w: an error
// priority prefix when w is the journal's stream.
func errorLine(w *os.File, err error) string {
	msg := "vscsid: " + err.Error()
	if isJournalStream(w) {
		msg = journalPrefix(prioErr) + strings.ReplaceAll(msg, "\n", "\n"+journalPrefix(prioErr))
	}
	return msg
}
