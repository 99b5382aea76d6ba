# vscsid: see README.md. `make test` is the command CI runs (via .ci/run).
GO        ?= go
SUITE     ?= bookworm
# The newest Debian kernel (sid), on which make test runs the core
# scenarios too (smoke, disk, tape, attach, encryption) and the full
# guest's short pass (targetcli, a library with mtx and Bacula's
# mtx-changer, LTFS, the iSCSI login), so that a kernel change that breaks
# st, TCMU or a client shows the day it lands; NEWEST= (empty) skips it.
NEWEST    ?= sid
# Parts of the suite side by side (deploy/vm/suite -j; default: the
# machine's CPUs plus one).
JOBS      ?=
SUITE_ARGS = -suite $(SUITE) -newest "$(NEWEST)" $(if $(JOBS),-j $(JOBS))
FUZZTIME  ?= 10s
# Minimising each new interesting input for go test's default 60 s took
# most of a short run (FuzzImage: 10 execs in 30 s); 50 runs each is
# enough to keep the corpus small (FuzzImage then ~30k execs in 30 s).
FUZZMINIMIZE ?= 50x
BIN       := bin
# The version stamped into both binaries and vscsi_build_info
# (deploy/version: CHANGELOG.md's release and the commit).
LDFLAGS   := $(shell deploy/version --ldflags)

.PHONY: all deps build vet cross lint unit deploy-check deb rpm packages fuzz fuzz-long bench vm-test vm-newest-full vm-full vm-ltfs vm-two-hosts vm-kill9 vm-powercut vm-soak vm-btape perf perf-ab demo experiments test clean

all: build

# Host tools the tests use, installed with apt on a fresh Debian machine
# (root). The VM harness installs its own (qemu, cpio, ...) the same way.
DEPS_BIN := promtool:prometheus jq:jq curl:curl systemd-analyze:systemd dbus-daemon:dbus lintian:lintian rpmlint:rpmlint rpm2cpio:rpm2cpio cpio:cpio
DEPS_PY  := dbus:python3-dbus gi:python3-gi
deps:
	@missing=""; for p in $(DEPS_BIN); do command -v $${p%%:*} >/dev/null || missing="$$missing $${p#*:}"; done; \
	for p in $(DEPS_PY); do /usr/bin/python3 -c "import $${p%%:*}" 2>/dev/null || missing="$$missing $${p#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

# The libraries (scsi, disk, tape, metrics, fault) and vscsictl's
# media tools build anywhere; the kernel side builds too but fails at run
# time off Linux ("TCMU needs Linux"). This keeps that true: vet (which
# also type-checks the tests) for macOS, a build for FreeBSD and arm64.
cross:
	GOOS=darwin $(GO) vet ./...
	GOOS=freebsd $(GO) build ./...
	GOARCH=arm64 $(GO) build ./...

# golangci-lint v2, pinned in tools/go.mod (its own module, so that its
# dependencies stay out of go.mod); the rules are in .golangci.yml. `go tool`
# builds it through the module proxy into the Go build cache: nothing is
# installed outside the Go toolchain.
lint:
	$(GO) tool -modfile=tools/go.mod golangci-lint run ./...

# Unit tests with the race detector. Fuzz targets' seed corpora
# (testdata/fuzz/*) run as ordinary test cases here. The cartridge crash
# tests run 30 seeds under -race and their 300 without it.
unit: deps
	$(GO) test -race -count=1 ./...
	$(GO) test -count=1 -run Crash ./tape/cartridge/

# systemd-analyze verify of the unit, promtool on the Prometheus and
# Grafana files, the deb and rpm built and checked by lintian and rpmlint.
deploy-check: deps
	deploy/systemd/verify.sh
	deploy/prometheus/check.sh
	deploy/dbus/check.sh
	deploy/package/build --format deb >/dev/null
	deploy/package/build --format rpm >/dev/null

# The packages (nfpm; lintian- and rpmlint-clean) in deploy/package/out:
# ARCH=amd64 (default) or arm64; make packages builds all four.
ARCH ?= amd64
deb:
	deploy/package/build --format deb --arch $(ARCH)
rpm:
	deploy/package/build --format rpm --arch $(ARCH)
packages:
	for a in amd64 arm64; do for f in deb rpm; do deploy/package/build --format $$f --arch $$a || exit; done; done

# Short coverage-guided runs of every fuzz target (not part of `make test`).
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$pkg || exit 1; \
	  done; done

# The long run before a release or a closing note: 10 minutes per target
# (14 targets, about 2 h 20 min on 2 cores); each target's last line gives
# its execs. A crasher lands in testdata/fuzz and fails the run.
fuzz-long:
	$(MAKE) fuzz FUZZTIME=10m

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The VM suite: real Debian kernels under qemu with vscsid inside. Its
# parts (deploy/vm/suite: the guest builds, a boot per scenario, the power
# cuts, the newest kernel's scenarios and full guest, the full guest in
# four boots, the two-host pair) run side by side, one guest per CPU and one more, and it
# ends with a table of the parts and their times.
vm-test:
	$(GO) run ./deploy/vm/suite -no-host $(SUITE_ARGS)

# The fuller guest's real clients (targetcli, tcmu-runner, mtx, Bacula,
# reservations, open-iscsi, LTFS on LTO-8) on the newest kernel, sid: make
# test runs their short pass there (16 min of CPU against 2, which would
# take it past 25 min on the 2-core machine).
vm-newest-full:
	$(GO) run ./deploy/vm/suite -newest $(NEWEST) -newest-full -only full-$(NEWEST)-clients

# The fuller guest alone: systemd as PID 1, dbus, targetcli, vscsid as a
# service (bookworm).
vm-full:
	deploy/vm/full/run --timeout 1500

# LTFS (mkltfs, ltfs, ltfsck; built from the source beside the checkout or
# $LTFS_SRC) on every LTO and IBM 3592 personality, in the full guest (16;
# about 12 min).
vm-ltfs:
	deploy/vm/full/run --suite ltfs --ltfs all --timeout 3600

# kill -9 at 100 random instants under dd and tar streams to two tape
# drives and dd to a disk (make test runs the same scenario with 10).
vm-kill9:
	deploy/vm/run kill9-100

# Power cuts: qemu SIGKILLed at CUTS random instants while a tape streams
# and a library's robot moves, its cartridges and inventory on ext4 on a
# virtio disk; each boot checks what the cut before it left (make test
# runs 3 cuts). About 35 s a cut.
CUTS ?= 20
vm-powercut:
	deploy/vm/powercut --suite $(SUITE) --cuts $(CUTS)

# One vscsid with 65 devices (48 disks, 16 drives, a library) under fio,
# dd, tar, mt and mtx for SOAK seconds, fault rules toggled, then restarts
# and kill -9 under fio: command counts, goroutines, fds, RSS, dmesg.
SOAK ?= 600
vm-soak:
	deploy/vm/full/run --suite soak --soak $(SOAK) --timeout $$(($(SOAK) + 900))

# Bacula's btape "test" (write and re-read 20,000 blocks, block positions,
# append, back up and re-read, forward space files) on a drive of each
# family besides LTO-5..9: LTO-10, TS1160, T10000C, SDLT600; then Amanda's
# amtapetype detecting compression on and off on a drive with a rate;
# about 10 min.
vm-btape:
	deploy/vm/full/run --suite btape --timeout 1500

# Two guests on a private qemu network: vscsid exporting a disk, a drive
# and a library over iSCSI on one, open-iscsi with sd, st, ch, dd, tar,
# mt and mtx on the other, restarts of vscsid under the initiator's I/O.
vm-two-hosts:
	deploy/vm/full/run --suite two-hosts --timeout 1500

# The perf suite: scsi_debug, the TCMU floor, vscsid's fake_rw and store
# disks, tcmu-runner and a tape drive through st, side by side in one boot
# of the full guest; report in deploy/vm/out/perf/report.md. About 15 min;
# not part of `make test`.
perf:
	deploy/vm/perf/run

# A/B in one boot: vscsid at the git revision BASE (default HEAD: the work
# tree's changes against the last commit) against the tree's, on
# one fake_rw disk, alternately (docs/performance.md).
BASE ?= HEAD
REPS ?= 10
ONLY ?= randread-4k-qd1,randread-4k-qd32x2
perf-ab:
	deploy/vm/perf/run --base $(BASE) --reps $(REPS) --only $(ONLY) --out deploy/vm/out/perf-ab

# The main job: boot the VM with vscsid's default config and show the devices.
demo:
	deploy/vm/demo --suite $(SUITE)

# The five experiments of deploy/vm/experiments as reports (deploy/vm/out/experiments/*/report.md);
# minutes each, so not part of `make test`.
experiments:
	deploy/vm/experiments/run-all --suite $(SUITE)

# The quick checks first, then the unit tests and the deploy checks as
# parts of the suite, beside the guest builds and boots.
test: vet lint cross deps
	$(GO) run ./deploy/vm/suite $(SUITE_ARGS)

clean:
	rm -rf $(BIN) deploy/vm/out
