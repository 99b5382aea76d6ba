// Command vscsid makes the Linux kernel see emulated SCSI tape drives and
// disks: a TCMU (target_core_user) backstore exported through tcm_loop.
// See README.md.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/cmd/internal/control"
	"github.com/vscsid/vscsid/cmd/internal/systemd"
	"github.com/vscsid/vscsid/internal/buildinfo"
	"github.com/vscsid/vscsid/internal/clidoc"
	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/metrics"
	"github.com/vscsid/vscsid/target"
)

// hangups receives SIGHUP from the start (main), so that the signal's
// default action, an exit without removing the devices, never runs;
// mainLoop answers it.
var hangups = make(chan os.Signal, 1)

func main() {
	signal.Notify(hangups, unix.SIGHUP)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, unix.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if code := exitCode(err); code != 0 {
		fmt.Fprintln(os.Stderr, errorLine(os.Stderr, err))
		os.Exit(code)
	}
}

// exitCode is main's exit status for run's error: 0 for none and for help
// that was asked for, 2 for a command line mistake (as vscsictl), else 1.
func exitCode(err error) int {
	var ue usageError
	var ce configError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue), errors.As(err, &ce):
		return 2
	}
	return 1
}

// usageError is a command line mistake; its usage went to stderr.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// configError is a config file that cannot be read or does not pass the
// check: exit status 2, as for a command line mistake, without the usage.
type configError struct{ error }

func (e configError) Unwrap() error { return e.error }

// The help's parts, which --help and the man page (--help-man) both print.
const (
	usageSynopsis = `vscsid [flags]
vscsid --check-config [FILE]
vscsid --print-default-config
vscsid --version`

	usageDescription = `vscsid serves emulated SCSI tape drives (vtape), disks (vdisk) and tape
libraries (vlibrary) to the local kernel through TCMU (target_core_user) and
tcm_loop, and to other hosts through LIO's iSCSI fabric for devices whose
export: lists iscsi. It creates the devices of its config file at start
(taking over in place those a restarted vscsid left), removes them on
SIGINT/SIGTERM, and exports per-command Prometheus metrics.
It also serves the user:vtape, user:vdisk and user:vlibrary backstores made
with targetcli (found at start and announced by the kernel over netlink), and
announces those subtypes to targetcli on the system D-Bus.
With no --config it serves a built-in default (--print-default-config): a
1 GiB fake_rw disk, an LTO-9 tape drive with a cartridge under
/var/lib/vscsid/media, and a library of two LTO-9 drives and 20 cartridges
under /var/lib/vscsid/library.

It needs root and the kernel modules configfs, target_core_user and tcm_loop
(plus st, sd_mod, sg and ch for the devices to appear):
  modprobe -a target_core_user tcm_loop st sd_mod sg ch`

	usageSignals = `SIGINT and SIGTERM stop it: the devices are removed, or, when systemd
restarts the unit (--on-stop), left in the kernel for the next vscsid,
which takes them over in place: a restart or a package upgrade is then a
pause to the initiator. SIGHUP (systemctl reload) re-reads the config file and
applies it: new devices made, removed ones removed, changed fault rules and
timing set; a change a running device cannot take is refused, naming it,
and nothing is applied.`

	usageExit = `0 after SIGINT or SIGTERM (the devices removed or handed over) or a check
that passed; 1 when it could not serve (no TCMU, a device that failed to
attach); 2 for a command line mistake or a config file that does not pass
--check-config (the message names the key).`
)

// usage is --help's text before the flags.
var usage = "Usage: " + strings.ReplaceAll(usageSynopsis, "\n", "\n       ") + "\n\n" +
	usageDescription + "\n\n" + usageSignals + "\n\nExit status: " + usageExit + "\n\nFlags:\n"

// options are the daemon's flags.
type options struct {
	config      string
	checkConfig bool
	printConfig bool
	showVersion bool
	logLevel    zapcore.Level
	logFormat   string
	web         *metrics.Flags
	noMetrics   bool
	paths       target.Paths
	dbus        string
	control     string
	onStop      string
	// capEff is the process's effective capability set, when capEffOK
	// (run reads it; serve refuses CHAP without CAP_SYS_ADMIN).
	capEff   uint64
	capEffOK bool
}

// newFlagSet defines the daemon's flags on o: the one definition --help,
// the man page and parsing share.
func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("vscsid", flag.ContinueOnError)
	fs.StringVar(&o.config, "config", "", "YAML config `FILE` listing the devices (default: the built-in config, see --print-default-config)")
	fs.BoolVar(&o.checkConfig, "check-config", false, "validate the config file (--config, or the argument after the flags) and exit: 0 if it passes, 2 with what is wrong")
	fs.BoolVar(&o.printConfig, "print-default-config", false, "print the built-in config and exit")
	fs.BoolVar(&o.showVersion, "version", false, "print the version and exit")
	fs.Var(&o.logLevel, "log.level", "log `LEVEL`: debug, info (the default), warn, error (debug logs every SCSI command)")
	fs.StringVar(&o.logFormat, "log.format", logAuto, "log `FORMAT`: json, console, journal (text with each line's level as its syslog priority, for journalctl -p), or auto (journal under systemd, console on a terminal, JSON otherwise)")
	o.web = metrics.AddFlags(fs)
	fs.BoolVar(&o.noMetrics, "web.disable", false, "do not serve /metrics")
	fs.StringVar(&o.paths.ConfigFS, "path.configfs", "/sys/kernel/config", "configfs mount point (`DIR`)")
	fs.StringVar(&o.paths.SysFS, "path.sysfs", "/sys", "sysfs mount point (`DIR`)")
	fs.StringVar(&o.paths.Dev, "path.dev", "/dev", "device node directory (`DIR`)")
	fs.StringVar(&o.dbus, "dbus", "auto", "announce the handlers to targetcli on the system D-Bus (org.kernel.TCMUService1), `MODE`: auto (if the bus is reachable), on (fail without it), off")
	fs.StringVar(&o.control, "control.socket", control.DefaultSocket, "unix socket `PATH` (mode 0600, root only) for vscsictl devices, stats, load, unload and fault; empty disables it")
	fs.StringVar(&o.paths.Lock, "lock-file", "/run/vscsid/vscsid.lock", "lock `FILE` that keeps a second vscsid from starting; the hand-over record of --on-stop lies beside it")
	fs.StringVar(&o.onStop, "on-stop", onStopAuto, "what SIGINT and SIGTERM do to the devices, `MODE`: remove them; keep them in the kernel (LUNs, /dev nodes, open tapes) for the next vscsid to take over in place; or auto: keep when systemd is restarting the unit (systemctl restart, a package upgrade), remove otherwise")
	return fs
}

// kindsByName are the device kinds in subtype order, as --help and the
// man page list them.
func kindsByName() []device.Kind {
	var ks []device.Kind
	for _, n := range config.TypeNames() {
		k, _ := config.KindOf(n)
		ks = append(ks, k)
	}
	return ks
}

// parseFlags parses the command line. Help that was asked for goes to
// stdout (and the error is flag.ErrHelp), usage after a mistake to stderr
// (and the error is a usageError).
func parseFlags(args []string, stdout, stderr io.Writer) (*options, error) {
	o := &options{logLevel: zapcore.InfoLevel}
	fs := newFlagSet(o)
	var out bytes.Buffer // the flag package's message and usage
	fs.SetOutput(&out)
	fs.Usage = func() {
		fmt.Fprint(&out, usage)
		clidoc.PrintFlags(&out, fs)
		fmt.Fprintf(&out, "\nDevice types and their cfgstring keys:\n\n")
		for _, k := range kindsByName() {
			fmt.Fprintf(&out, "%s\n\n", k.Desc)
		}
	}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		_, _ = stdout.Write(out.Bytes())
		return nil, err
	}
	defer func() { _, _ = stderr.Write(out.Bytes()) }()
	if err != nil {
		return nil, usageError{err}
	}
	if o.checkConfig && fs.NArg() == 1 && o.config == "" {
		o.config = fs.Arg(0) // vscsid --check-config FILE
	} else if fs.NArg() > 0 {
		fs.Usage()
		return nil, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if !slices.Contains(logFormats, o.logFormat) {
		return nil, usageError{fmt.Errorf("--log.format %q: want one of %s", o.logFormat, strings.Join(logFormats, ", "))}
	}
	switch o.dbus {
	case "auto", "on", "off":
	default:
		return nil, usageError{fmt.Errorf("--dbus %q: want auto, on or off", o.dbus)}
	}
	if !slices.Contains(onStopModes, o.onStop) {
		return nil, usageError{fmt.Errorf("--on-stop %q: want one of %s", o.onStop, strings.Join(onStopModes, ", "))}
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 1 {
		switch args[0] { // hidden: the package's man page and completion
		case "--help-man":
			return writeManPage(stdout)
		case "--completion-bash", "--completion-zsh":
			script, err := clidoc.FlatCompletion(strings.TrimPrefix(args[0], "--completion-"), "vscsid", newFlagSet(&options{}))
			if err == nil {
				_, err = io.WriteString(stdout, script)
			}
			return err
		}
	}
	o, err := parseFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	switch {
	case o.showVersion:
		_, err := fmt.Fprintln(stdout, buildinfo.Print("vscsid"))
		return err
	case o.printConfig:
		_, err := stdout.Write(config.Default)
		return err
	}
	cfg, err := config.Load(ctx, o.config)
	if err != nil {
		return configError{err}
	}
	if !o.noMetrics {
		if err := o.web.Check(); err != nil {
			return configError{err}
		}
	}
	if o.checkConfig {
		for _, w := range cfg.Warnings {
			_, _ = fmt.Fprintln(stderr, "warning:", w)
		}
		_, err := fmt.Fprintf(stdout, "config ok: %d devices\n", len(cfg.Devices))
		return err
	}
	o.capEff, o.capEffOK = effectiveCaps()
	log := newLogger(o, stderr)
	defer log.Sync() //nolint:errcheck // stderr sync errors are meaningless
	return serve(ctx, o, cfg, log)
}

// serve runs the daemon on cfg until ctx is done: the devices, the
// metrics, the control socket, D-Bus.
func serve(ctx context.Context, o *options, cfg *config.Config, log *zap.Logger) error {
	if err := config.CHAPNeedsCapability(cfg, o.capEff, o.capEffOK); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.paths.Lock), 0o755); err != nil {
		return fmt.Errorf("lock file: %w", err)
	}
	// Devices other tools create (targetcli) get no fault rules of the
	// config file and the kernel's cmd_time_out; the config file's own
	// get theirs through their DeviceSpec (deviceSpec).
	env := &handlerEnv{}
	factories := map[string]target.Factory{}
	for _, k := range config.Kinds {
		factories[k.Subtype] = withFaults(k, env, config.Fault{}, config.KernelCmdTimeOut)
	}
	// What the previous daemon kept in systemd's file-descriptor store
	// for a planned restart (a RAM store disk's data); the handed-over
	// devices take it as they are taken over.
	fds, err := systemd.OpenFDStore()
	if err != nil {
		log.Warn("systemd's file-descriptor store", zap.Error(err))
	}
	tgt, err := target.New(target.Options{
		Factories: factories,
		Log:       log.Named("target"),
		Paths:     o.paths,
		Errno:     errnoOf,
		Keeper:    fds,
		RingPoll:  cfg.PollOf,
	})
	if err != nil {
		return err
	}
	env.setDevices(tgt)
	log.Info("starting", zap.String("version", buildinfo.Version()), zap.Int("devices", len(cfg.Devices)))
	for _, w := range cfg.Warnings {
		log.Warn("config: " + w)
	}

	// Create the devices; any failure removes what was created and fails.
	for _, d := range cfg.Devices {
		k, _ := config.KindOf(d.Type)
		p, _ := k.Check(d.Config) // validated by loadConfig
		info, err := tgt.Create(ctx, deviceSpec(cfg, env, d, p))
		if err != nil {
			return errors.Join(fmt.Errorf("device %s: %w", d.Name, err), tgt.Close())
		}
		log.Info("device ready", zap.String("device", d.Name), zap.String("subtype", d.Type),
			zap.String("scsi", info.SCSI.Address), zap.String("node", info.SCSI.String()),
			zap.String("sg", info.SCSI.Generic), zap.String("uio", info.UIO), zap.Int("hba", info.HBA))
	}

	// Devices a planned restart handed over that the config no longer
	// lists go, rather than being served as another tool's.
	if err := tgt.RemoveStale(); err != nil {
		log.Warn("removing devices the config no longer lists", zap.Error(err))
	}

	g, gctx := errgroup.WithContext(ctx)
	if !o.noMetrics {
		reg, err := metrics.NewRegistry(metrics.NewCollector(tgt, metricsOptions(cfg)))
		if err != nil {
			return errors.Join(err, tgt.Close())
		}
		slog := slog.New(zapslog.NewHandler(log.Named("web").Core()))
		g.Go(func() error { return metrics.Serve(gctx, reg, o.web, slog) })
	}

	d := &daemon{cfg: cfg, tgt: tgt, env: env, log: log.Named("control")}
	stopDBus, err := startDBus(ctx, o.dbus, d, log.Named("dbus"))
	if err != nil {
		return errors.Join(err, tgt.Close())
	}
	defer stopDBus()

	if o.control != "" {
		l, err := control.Listen(o.control)
		if err != nil {
			return errors.Join(err, tgt.Close())
		}
		d.log.Info("control socket listening", zap.String("path", o.control))
		g.Go(func() error { return control.Serve(gctx, l, d) })
	}

	// READY only now: every configured device is attached and vscsictl
	// can reach the daemon.
	if err := systemd.Ready(); err != nil {
		log.Warn("sd_notify READY failed", zap.Error(err))
	}
	systemd.Status(fmt.Sprintf("serving %d devices", len(cfg.Devices))) //nolint:errcheck // best effort
	reload := func() { reloadConfig(gctx, o.config, d, log) }
	g.Go(func() error { return mainLoop(gctx, tgt, reload, log) })
	// The target serves devices other tools create until the daemon
	// stops; its Close closes the drives, which save where they were for
	// the next start.
	runCtx, stopRun := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tgt.Run(runCtx) }()

	err = g.Wait()
	systemd.Stopping() //nolint:errcheck // best effort
	// A stop by signal removes the devices, or hands them over in place
	// to the next daemon (--on-stop); a failure removes them.
	handOver, why := false, "the daemon failed"
	if err == nil || errors.Is(err, context.Canceled) {
		handOver, why = handOverOnStop(o.onStop)
	}
	log.Info("stopping", zap.Bool("hand_over", handOver), zap.String("why", why))
	stopDBus() // no changemedium while the drives close
	if handOver {
		if herr := tgt.HandOver(); herr != nil {
			err = errors.Join(err, herr)
		}
	}
	stopRun()
	if rerr := <-runDone; rerr != nil {
		err = errors.Join(err, rerr)
	}
	if cerr := tgt.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	log.Info("stopped")
	return nil
}

// deviceSpec is what Target.Create needs for d, a device of the config
// file (or one vscsictl creates) whose cfgstring check gave p.
func deviceSpec(cfg *config.Config, env *handlerEnv, d config.Device, p device.Params) target.DeviceSpec {
	var fc config.Fault
	if d.Fault != nil {
		fc = *d.Fault
	}
	cmdTimeOut := config.KernelCmdTimeOut
	if cfg.CmdTimeOut > 0 {
		cmdTimeOut = time.Duration(cfg.CmdTimeOut) * time.Second
	}
	kind, _ := config.KindOf(d.Type) // checked by DeviceConfig.check
	// Cannot fail: parseConfig checked the exports of the config's
	// devices, and those vscsictl makes have none (tcm_loop only).
	loopback, iscsi, err := d.Exports(cfg)
	if err != nil {
		loopback, iscsi = true, nil
	}
	return target.DeviceSpec{
		ISCSI:             iscsi,
		NoLoopback:        !loopback,
		Name:              d.Name,
		Subtype:           d.Type,
		Config:            d.Config,
		Size:              p.Size,
		BlockSize:         p.BlockSize,
		MaxSectors:        uint32(d.HWMaxSectors),
		CmdTimeOut:        time.Duration(cfg.CmdTimeOut) * time.Second,
		MaxDataAreaMB:     d.DataAreaMB(cfg),
		NoTMRNotification: cfg.TMRNotify != nil && !*cfg.TMRNotify,
		Factory:           withFaults(kind, env, fc, cmdTimeOut),
	}
}

// reloadConfig re-reads the config file at path and applies it
// (daemon.Reload), saying in the log and in systemd's status what it did
// or why it refused.
func reloadConfig(ctx context.Context, path string, d *daemon, log *zap.Logger) {
	systemd.Notify("RELOADING=1") //nolint:errcheck // best effort
	defer systemd.Ready()         //nolint:errcheck // best effort
	next, err := config.Load(ctx, path)
	if err != nil {
		log.Error("reload refused: the config file does not pass the checks; the running devices stay as they are", zap.Error(err))
		systemd.Status("reload refused: " + err.Error()) //nolint:errcheck // best effort
		return
	}
	plan, err := d.Reload(ctx, next)
	if plan.IsZero() && err == nil {
		log.Info("reloaded: nothing changed")
		return
	}
	fields := []zap.Field{zap.Strings("removed", plan.Remove), zap.Int("added", len(plan.Add)), zap.Int("fault_changes", len(plan.Faults))}
	if err != nil {
		log.Error("reload", append(fields, zap.Error(err))...)
		systemd.Status("reload: " + err.Error()) //nolint:errcheck // best effort
		return
	}
	log.Info("reloaded", fields...)
	systemd.Status(fmt.Sprintf("serving %d devices", len(next.Devices))) //nolint:errcheck // best effort
}

// mainLoop watches the devices and feeds systemd's watchdog: it beats only
// while the loop itself runs, so a hung daemon stops the pings and systemd
// restarts it. SIGHUP calls reload.
func mainLoop(ctx context.Context, tgt *target.Target, reload func(), log *zap.Logger) error {
	interval, err := systemd.WatchdogInterval()
	if err != nil {
		log.Warn("watchdog settings ignored", zap.Error(err))
	}
	wd := systemd.NewWatchdog(interval, func(err error) { log.Warn("watchdog ping failed", zap.Error(err)) })
	wdCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- wd.Run(wdCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil { // Run returns only nil, today
			log.Warn("watchdog", zap.Error(err))
		}
	}()

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	failed := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-hangups:
			reload()
			continue
		case <-tick.C:
		}
		wd.Beat()
		for _, name := range tgt.Failed() {
			if !failed[name] {
				failed[name] = true
				systemd.Status("device " + name + " failed") //nolint:errcheck // best effort
			}
		}
	}
}

// metricsOptions is what the collector needs of the config: the
// cmd_time_out set on every device.
func metricsOptions(cfg *config.Config) metrics.Options {
	var o metrics.Options
	if cfg.CmdTimeOut > 0 {
		d := time.Duration(cfg.CmdTimeOut) * time.Second
		o.CmdTimeOut = &d
	}
	return o
}

// typeOf is the type of a device of subtype (device.Kind.Type): the
// metrics `type` label and vscsictl's TYPE column.
func typeOf(subtype string) string {
	k, _ := config.KindOf(subtype)
	return k.Type
}
