package fault

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/scsi"
)

// RuleDesc documents the rule grammar (shown by `vscsictl fault help`).
// Keep it in step with ParseRule.
const RuleDesc = `fault rule: semicolon-separated key=value pairs (no commas or colons), e.g.
  op=read;lba=0x1234+10;sense=medium_error/0x11/0x00;count=1
  op=write;every=100;busy
  op=read;block=500+20;sense=medium_error          (tape)
  early_warning_after=16MiB                        (tape)
filter (all given must hold; none = every command):
  op         commands, alternatives separated by '|': a class (read, write,
             verify, media = read|write|verify, any), a command name of the
             device (read_10, write_filemarks_6, read_capacity_16, ...) or
             an opcode (0x28; 0x9e: every service action of it)
  lba        disk: START[+COUNT] (COUNT default 1); matches READ, WRITE,
             WRITE AND VERIFY, COMPARE AND WRITE, VERIFY and WRITE SAME
             whose block range intersects it
  partition  tape: the current partition
  file       tape: FILE[+COUNT], the current file number (filemarks passed)
  block      tape: START[+COUNT], logical objects (what mt tell reports);
             matches when the blocks the command would move (fixed mode:
             the block count, else one) intersect it
gate (counted over the commands that pass the filter):
  every      N: act on every Nth (scsi_debug every_nth=N)
  after      N: let the first N pass (every_nth=-N is after=N-1)
  count      N: act N times, then the rule is spent
  prob       P in (0,1]: act with probability P, drawn from the device's
             seed: the same seed and commands give the same faults
action (exactly one):
  sense      KEY[/ASC/ASCQ]: CHECK CONDITION, the command does not run; KEY
             is a name (medium_error, recovered_error, aborted_command,
             hardware_error, unit_attention, not_ready, illegal_request,
             data_protect, blank_check, volume_overflow, ...) or 0..15; ASC
             and ASCQ are hex (0x11 or 11); defaults per key, e.g. medium
             error 11/00 (0c/00 on writes), blank check 00/05. Disk medium
             and hardware errors carry the first failing LBA; the blocks
             before it are transferred
  recovered  [=ASC/ASCQ]: run the command; if GOOD, answer RECOVERED ERROR
             (default 17/01)
  busy       status BUSY, the command does not run
  task_set_full  status TASK SET FULL, the command does not run
  timeout    [=DURATION]: do not answer; hold the command past
             cmd_time_out (default cmd_time_out + 2s) so the kernel fails
             it, then drop it (scsi_debug opts=4)
  delay      DURATION (500us, 2ms, 1.5s): wait, then go on with the next
             rules and run the command
  early_warning_after  SIZE (bytes, K/M/G/T, KiB.., KB..): tape; once
             WRITEs have written SIZE bytes, successful WRITE and WRITE
             FILEMARKS answer NO SENSE, EOM, 00/02 (early warning): st
             returns ENOSPC once, then allows trailer writes`

// ruleKeys are the keys of the grammar, in canonical order.
var ruleKeys = []string{
	"op", "lba", "partition", "file", "block", "every", "after", "count", "prob",
	"sense", "recovered", "busy", "task_set_full", "timeout", "delay", "early_warning_after",
}

// MustParseRule is ParseRule for rules known to be valid (tests, constant
// tables); it panics on error.
func MustParseRule(s string) Rule {
	r, err := ParseRule(s)
	if err != nil {
		panic(err)
	}
	return r
}

// ParseRule parses one rule (grammar: RuleDesc). It is strict: an unknown
// or repeated key, a bad value or a missing action is an error naming the
// key and what is wrong. The split rule is internal/cfgstring's: spaces
// around pairs, keys and values and empty pairs are ignored. Whether the rule fits the device (disk or tape, command names)
// is checked when it is installed.
func ParseRule(s string) (Rule, error) {
	var r Rule
	pairs, err := cfgstring.Split(s)
	if err != nil {
		return Rule{}, err
	}
	if len(pairs) == 0 {
		return r, errors.New("empty rule")
	}
	var seen uint32
	var actKey string
	for _, p := range pairs {
		k, v, hasEq := p.Key, p.Value, p.HasValue
		idx := -1
		for i, key := range ruleKeys {
			if key == k {
				idx = i
			}
		}
		if idx < 0 {
			return Rule{}, fmt.Errorf("unknown key %q (want one of %s)", k, strings.Join(ruleKeys, ", "))
		}
		seen |= 1 << idx
		switch k {
		case "busy", "task_set_full":
			if hasEq {
				return Rule{}, fmt.Errorf("%s: takes no value (write just %s)", k, k)
			}
		case "timeout", "recovered":
			if hasEq && v == "" {
				return Rule{}, fmt.Errorf("%s=: empty value (write just %s for the default)", k, k)
			}
		default:
			if !hasEq || v == "" {
				return Rule{}, fmt.Errorf("%s: needs a value (%s=...)", k, k)
			}
		}
		if err := r.set(k, v, hasEq); err != nil {
			return Rule{}, fmt.Errorf("%s=%s: %w", k, v, err)
		}
		if r.act.kind != actNone && actKey == "" {
			actKey = k
		} else if isActionKey(k) {
			return Rule{}, fmt.Errorf("%s and %s: a rule has one action", actKey, k)
		}
	}
	switch {
	case r.act.kind == actNone:
		return Rule{}, errors.New("no action (want one of sense=, recovered, busy, task_set_full, timeout, delay=, early_warning_after=)")
	case r.lba.set() && (r.block.set() || r.file.set() || r.hasPart):
		return Rule{}, errors.New("lba= is for disks, block=, file= and partition= for tapes: not both")
	case r.lba.set() && r.act.kind == actEarlyWarning:
		return Rule{}, errors.New("early_warning_after= is a tape action: lba= does not apply")
	}
	return r, nil
}

func isActionKey(k string) bool {
	switch k {
	case "sense", "recovered", "busy", "task_set_full", "timeout", "delay", "early_warning_after":
		return true
	}
	return false
}

// set applies one key=value to r.
func (r *Rule) set(k, v string, hasEq bool) error {
	var err error
	switch k {
	case "op":
		r.ops, err = parseOps(v)
	case "lba":
		r.lba, err = parseSpan(v)
	case "block":
		r.block, err = parseSpan(v)
	case "file":
		r.file, err = parseSpan(v)
	case "partition":
		var n uint64
		if n, err = parseUint(v); err == nil && n > 255 {
			err = errors.New("want 0..255")
		}
		r.part, r.hasPart = int(n), true
	case "every":
		r.every, err = parseCount(v)
	case "count":
		r.count, err = parseCount(v)
	case "after":
		r.after, err = parseUint(v)
	case "prob":
		r.prob, err = parseProb(v)
	case "sense":
		r.act.kind = actSense
		err = r.act.parseSense(v)
	case "recovered":
		r.act.kind, r.act.key = actRecovered, scsi.RecoveredError
		if hasEq {
			r.act.asc, err = parseASC(v)
			r.act.ascSet = true
		}
	case "busy":
		r.act.kind = actBusy
	case "task_set_full":
		r.act.kind = actTaskSetFull
	case "timeout":
		r.act.kind = actTimeout
		if hasEq {
			r.act.dur, err = parsePositiveDuration(v)
		}
	case "delay":
		r.act.kind = actDelay
		r.act.dur, err = parsePositiveDuration(v)
	case "early_warning_after":
		r.act.kind = actEarlyWarning
		if r.act.bytes, err = cfgstring.Size(v); err == nil && r.act.bytes == 0 {
			err = errors.New("must be at least 1 byte")
		}
	}
	return err
}

func parsePositiveDuration(v string) (time.Duration, error) {
	dd, err := cfgstring.Duration(v)
	if err == nil && dd == 0 {
		err = errors.New("must be more than 0")
	}
	return dd, err
}

// parseCount parses a count that must be at least 1.
func parseCount(v string) (uint64, error) {
	n, err := parseUint(v)
	if err != nil {
		return 0, errors.New("not a number")
	}
	if n == 0 {
		return 0, errors.New("must be at least 1")
	}
	return n, nil
}

// parseSpan parses START[+COUNT].
func parseSpan(v string) (span, error) {
	a, b, hasCount := strings.Cut(v, "+")
	start, err := parseUint(a)
	if err != nil {
		return span{}, errors.New("want START or START+COUNT, e.g. 0x1234+10")
	}
	n := uint64(1)
	if hasCount {
		if n, err = parseUint(b); err != nil {
			return span{}, errors.New("want START or START+COUNT, e.g. 0x1234+10")
		}
		if n == 0 {
			return span{}, errors.New("COUNT must be at least 1")
		}
	}
	if n-1 > math.MaxUint64-start {
		return span{}, errors.New("range goes past 2^64")
	}
	return span{start, n}, nil
}

// parseOps parses op=: alternatives separated by '|'.
func parseOps(v string) ([]opToken, error) {
	var ops []opToken
	for t := range strings.SplitSeq(v, "|") {
		t = strings.TrimSpace(t)
		switch {
		case t == "":
			return nil, errors.New("empty alternative")
		case t == "any":
			if strings.Contains(v, "|") {
				return nil, errors.New("any matches every command: it cannot be combined")
			}
			ops = append(ops, opToken{})
			continue
		case t[0] >= '0' && t[0] <= '9':
			n, err := parseUint(t)
			if err != nil || n > 0xff {
				return nil, fmt.Errorf("%s: not an opcode 0x00..0xff", t)
			}
			ops = append(ops, opToken{op: uint8(n), isOp: true})
			continue
		}
		class := uint8(0)
		for _, c := range classNames {
			if c.name == t {
				class = c.class
			}
		}
		if class != 0 {
			ops = append(ops, opToken{class: class})
			continue
		}
		for i := 0; i < len(t); i++ {
			if c := t[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
				return nil, fmt.Errorf("%s: not a class (read, write, verify, media, any), an opcode or a command name", t)
			}
		}
		ops = append(ops, opToken{name: t})
	}
	return ops, nil
}

// parseSense parses KEY[/ASC/ASCQ].
func (a *action) parseSense(v string) error {
	parts := strings.Split(v, "/")
	if len(parts) != 1 && len(parts) != 3 {
		return errors.New("want KEY or KEY/ASC/ASCQ, e.g. medium_error/0x11/0x00")
	}
	key, ok := senseKeyByName(parts[0])
	if !ok {
		n, err := parseUint(parts[0])
		if err != nil || n > 15 {
			return fmt.Errorf("%s: not a sense key name (medium_error, hardware_error, ...) or 0..15", parts[0])
		}
		key = scsi.SenseKey(n)
	}
	a.key = key
	if len(parts) == 3 {
		asc, err := parseASC(parts[1] + "/" + parts[2])
		if err != nil {
			return err
		}
		a.asc, a.ascSet = asc, true
	}
	return nil
}

// parseASC parses ASC/ASCQ, both hexadecimal.
func parseASC(v string) (scsi.ASC, error) {
	a, q, ok := strings.Cut(v, "/")
	if !ok {
		return 0, errors.New("want ASC/ASCQ in hex, e.g. 0x11/0x00")
	}
	hi, err := parseHexByte(a)
	if err != nil {
		return 0, fmt.Errorf("ASC %s: %w", a, err)
	}
	lo, err := parseHexByte(q)
	if err != nil {
		return 0, fmt.Errorf("ASCQ %s: %w", q, err)
	}
	return scsi.ASC(hi)<<8 | scsi.ASC(lo), nil
}

func senseKeyByName(s string) (scsi.SenseKey, bool) {
	for k := range 16 {
		if scsi.SenseKey(k).String() == s {
			return scsi.SenseKey(k), true
		}
	}
	return 0, false
}
