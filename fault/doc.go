// Package fault injects SCSI faults and models device timing in front of a
// disk or tape Handler, for experiments on the kernel's error handling: the
// scsi_debug vocabulary (every_nth, opts, medium_error_start/count, delay,
// ndelay, random) for vdisk and vtape devices, configured in YAML and
// changed at runtime.
//
// A Device wraps a Handler:
//
//	fd, err := fault.New(drive, fault.Options{Commands: tape.Commands(), CmdTimeout: 30 * time.Second, Seed: 42})
//	err = fd.SetRules([]fault.Rule{fault.MustParseRule("op=read;block=100+5;sense=medium_error")})
//	err = fd.SetTiming(fault.MustParseTiming("model=dds"))
//
// and is itself the Handler the transport serves. With no rules and no
// timing the wrapper costs one atomic load per command.
//
// # Rules
//
// A Rule (ParseRule; grammar in RuleDesc) is a filter, a gate and one
// action. The filter selects commands by operation (a class, a command name
// of the handler, or an opcode), by LBA range for disks (the blocks of
// READ, WRITE, VERIFY, WRITE SAME, COMPARE AND WRITE, WRITE ATOMIC and
// PRE-FETCH, the first block of the zone an OPEN, CLOSE or FINISH ZONE or
// RESET WRITE POINTER names: as the kind's command table decodes the CDB,
// scsi.Desc.Extent), and by tape
// position (partition, file number, logical object range, asked of the
// handler through Positioner). The gate counts matching commands: every=N
// (every Nth, as scsi_debug's every_nth), after=N (let the first N pass),
// prob=P (a deterministic pseudo-random draw per matching command, from
// the device's seed and the rule's text: the same seed, rules and command
// sequence give the same faults) and count=N (then the rule is spent).
//
// Rules are tried in order. delay= rules add to the command's delay and
// evaluation goes on; the first rule with a terminal action (sense=, busy,
// task_set_full, timeout) takes the command and later rules do not see it
// (their counters do not move). recovered and early_warning_after are
// decided before the command runs and applied after it, to a GOOD response
// only.
//
// Whether the command reaches the wrapped handler is fixed per action:
//
//	sense=       no: CHECK CONDITION with the sense; no data moves. Except on
//	             a disk READ or WRITE(6/10/12/16) hit by MEDIUM ERROR or
//	             HARDWARE ERROR at an LBA past its first block: the blocks
//	             before the first failing LBA are transferred (the command
//	             runs with its length cut to them), because sd counts them
//	             as done (sd_completed_bytes: (INFORMATION − start LBA) ×
//	             sector size; for a WRITE TCMU cannot report a residual, and
//	             for a READ the transport returns them through READ_LEN).
//	busy         no: status BUSY.
//	task_set_full no: status TASK SET FULL.
//	timeout      no: the command is held, then completed with ABORTED COMMAND
//	             08/01 that nobody reads (see Timeouts).
//	delay=       yes, after the delay.
//	recovered    yes; a GOOD response becomes CHECK CONDITION RECOVERED
//	             ERROR (the data, if any, is returned with it via READ_LEN).
//	early_warning_after= yes; once the bytes the drive took from tape
//	             WRITEs reach the threshold, successful WRITE and WRITE
//	             FILEMARKS answer CHECK CONDITION NO SENSE, EOM, 00/02,
//	             VALID=0 (scsi.EarlyWarning, as the drive reports it): st
//	             treats that as "all written at early warning" and returns
//	             ENOSPC once on the next write.
//
// The INFORMATION field: on a disk, MEDIUM ERROR and HARDWARE ERROR carry
// the first failing LBA (the command's LBA or the start of the rule's
// range, whichever is larger), as real disks and scsi_debug report it. On a
// tape, READ, WRITE and VERIFY carry the residue (the whole transfer length:
// blocks in fixed mode, bytes in variable mode), WRITE FILEMARKS the count
// not written, SPACE the count not spaced,
// and VOLUME OVERFLOW sets EOM. The sense format (fixed or descriptor)
// follows the handler's current D_SENSE when the handler reports it
// (SenseFormatReporter), else the format of the handler's last CHECK
// CONDITION, starting from Options.SenseFormat.
//
// # Timeouts
//
// The timeout action reproduces scsi_debug's opts=4: the device does not
// answer. TCMU serves a device's ring in order, so the wrapper sleeps: for
// the rule's own hold time, or for the device's cmd_time_out
// (Options.CmdTimeout) plus HoldMargin. Meanwhile the kernel fails the
// command: TCMU's cmd_time_out timer completes it with NOT READY 08/00
// (LOGICAL UNIT COMMUNICATION FAILURE), or the initiator's own timeout (sd
// 30 s, st 900 s; set it below cmd_time_out to see this path) runs SCSI
// error handling, whose ABORT TASK reaches the ring as a TMR entry, which
// the transport counts (vscsi_ring_task_management_requests_total). With
// Options.Aborts (vscsid passes the transport's tcmu.Aborted) the held
// command polls for that abort every 10 ms and ends when it comes, as a
// real device drops an aborted task: the abort then completes at once and
// sd retries, instead of both waiting for cmd_time_out (seen on 6.1 and
// 6.12: the read is retried and succeeds 3 s after it started, with sd's
// timeout at 2 s; vscsi_ring_aborted_running_commands_total counts it).
// Otherwise the late completion only frees the ring slot. Because the ring is in order, every command queued
// behind the held one waits too and usually expires with it: unlike
// scsi_debug, a timeout on a disk with a deep queue stalls the whole queue
// (on a tape, st sends one command at a time, so nothing else is queued).
// With cmd_time_out 0 (the kernel never expires commands) a timeout rule
// needs an explicit hold time. A timeout is not capped (below) and is
// interrupted only when the device stops (ctx), which answers BUSY.
//
// # Timing
//
// A Timing (ParseTiming; grammar in TimingDesc) adds per-command latency
// (fixed plus a uniform or exponential random part, drawn from the seed),
// a throughput cap (a token bucket on data bytes), and for tapes a drive
// model: native rate, buffer, per-command overhead, reposition (backhitch)
// time when streaming breaks, and mechanical times for load, unload,
// rewind, locate and space. Small synchronous blocks pay the per-command
// overhead each and do not keep the tape streaming; large blocks stream at
// the native rate (a DAT72 reading 1 KiB fixed blocks versus 32 KiB).
//
// The latency applies to every command, also to those a rule answers;
// the rate and the tape model apply to the commands the handler runs, on
// the bytes they moved (for a drive that compresses, a MediumCounter, the
// bytes that reached or left the medium: compressible data streams
// faster, as on a real drive), and are slept after the handler returns. The tape
// model's LOCATE and SPACE distances need a Positioner (without one they
// cost the fixed locate time).
//
// Every delay a command gets (its delay= rules plus its timing) is capped
// at Options.CmdTimeout minus a headroom of min(1 s, CmdTimeout/2), so the
// wrapper never makes the kernel time a command out by itself (TCMU arms
// its timer when the command enters the ring and rounds it up to whole
// seconds: round_jiffies_up in target_core_user.c). A delay that would
// exceed the cap is cut to it and counted as clamped (Stats.Clamped). The
// cap is per command: commands queued behind a slow one age while they
// wait, which is what a real slow device does to them too. With
// CmdTimeout 0 nothing is capped.
//
// Delays sleep on one reused time.Timer per device, or below 1 ms in
// clock_nanosleep on Linux (the runtime's timers wait in whole
// milliseconds; elsewhere, where x/sys/unix has no clock_nanosleep, in
// time.Sleep, so short delays come out coarser there), with
// no busy loop and no allocation. The clock learns how late the host
// wakes it (an exponentially weighted mean) and asks for that much less,
// so the mean delay is the configured one: a latency of 2 ms was recorded
// as 2.27 ms by the transport before this correction and 2.03 to 2.05 ms
// after it on a loaded 2-CPU VM (BenchmarkLatency2ms in cmd/vscsid). A
// delay shorter than the host's wake-up latency (about 100 µs there)
// comes out late by that latency. Timer sleeps end early when ctx is
// done: a command not yet run then answers BUSY, one already run returns
// its response.
//
// # Concurrency
//
// HandleCommand is called by the device's loop, one command at a time,
// unless Options.Depth is above 1 (disks only): then the Device is a
// tcmu.ConcurrentHandler and up to Depth commands are in service at
// once, on the transport's workers, with out-of-order completion. Their
// delays (latency, jitter, delay= rules, the rate) overlap, as in a real
// disk's queue and in scsi_debug's per-command delay, while the rules,
// the timing state and the wrapped handler are used under one mutex, one
// command at a time (not in ring order: SIMPLE tasks have none). With
// Depth 1 a latency of 1 ms caps a disk at 1,000 commands per second at
// any queue depth; with Depth 32 it serves up to 32,000.
// SetRules, AddRule, RemoveRule, Clear, SetTiming and every getter may be
// called from any goroutine while commands run: the rules and timing are
// an immutable set swapped with an atomic pointer, and the per-command
// path does not allocate.
package fault
