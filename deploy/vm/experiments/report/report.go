package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/vscsid/vscsid/deploy/vm/internal/chart"
)

// Report renders one experiment.
type Report struct {
	Res *Results
	In  string // artefacts/exp-NAME
	Out string
	// Transports is sg-chaining's table of the same runs over iSCSI and
	// tcm_loop from another boot (the full guest), Markdown.
	Transports string
}

// about explains what each experiment asks; the numbers come from the run.
var about = map[string]string{
	"merging":      "The mailing-list thread \"Merging fails reading /dev/uba1\" (2005): reading a partition whose size is not a multiple of 4 KiB was 5x slower than reading the whole disk, because the block device's soft block size fell to 512 and the kernel issued 512-byte requests. Here: a 512e disk (512-byte logical, 4 KiB physical blocks) with p1 of an odd number of sectors and p2 of a multiple of 8 sectors, buffered `dd bs=10k` through the whole disk, p1, p2, and p1 after `blockdev --setbsz 4096`; then the same on a disk whose Block Limits VPD caps a command at 8 blocks (`max_blks=8`). The transfer-size histogram is what vscsid saw per SCSI command.",
	"sg-chaining":  "The mailing-list thread \"scsi_sgtable and Large IO sg-chaining\" (2007): sg_dd direct I/O through /dev/sgN with 32, 128, 256, 512 and 2048 pages per command on a 32 GiB fake_rw disk. More than 128 scatterlist entries needs chained scatterlists; beyond tcm_loop's sg_tablesize (256 entries; with direct I/O each user page is its own entry, so 256 x 4 KiB = 1 MiB) the kernel refuses the command with EINVAL before it reaches vscsid. The segments histogram is what vscsid sees: the TCMU data area, into which the kernel copies the scatterlist, not the scatterlist itself.",
	"direct-io":    "The mailing-list thread \"direct-to-BIO for O_DIRECT\" (2002): throughput and CPU cost of buffered dd, O_DIRECT dd and sg_dd on one fake_rw disk, reads and writes, at 4 KiB, 64 KiB and 1 MiB blocks.",
	"st-direct-io": "The mailing-list thread \"st try_direct_io\" (2006): tape read speed with st's direct I/O on and off, fixed 1 KiB blocks vs variable 32 KiB blocks, on a DAT72-personality vtape.",
	"alignment":    "The mailing-list thread \"IO buffer alignment for block devices\" (2004): O_DIRECT transfers with user buffers at various alignments through st, sd and sg.",
}

// Markdown builds report.md (and writes the SVG charts next to it).
func (rep *Report) Markdown() (string, error) {
	res := rep.Res
	var b strings.Builder
	exp := res.Info["experiment"]
	fmt.Fprintf(&b, "# Experiment %s\n\n", exp)
	if a := about[exp]; a != "" {
		fmt.Fprintf(&b, "%s\n\n", a)
	}
	env := readEnv(filepath.Join(filepath.Dir(rep.In), "guest.env"))
	fmt.Fprintf(&b, "- Guest kernel (`uname -r` in the guest): **%s**", res.Info["kernel"])
	if env["suite"] != "" {
		fmt.Fprintf(&b, " (Debian %s, %s)", env["suite"], env["kernel_pkg"])
	}
	b.WriteString("\n")
	if env["repo_rev"] != "" {
		fmt.Fprintf(&b, "- vscsid built from revision %s\n", env["repo_rev"])
	}
	fmt.Fprintf(&b, "- Artefacts: `%s`\n", rep.In)
	b.WriteString("- Emulated x86-64 under qemu TCG (no KVM): absolute MB/s and CPU figures measure the emulator as much as the kernel; compare runs within this report, not with hardware.\n\n")

	if len(res.InfoKeys) > 0 {
		b.WriteString("## Facts recorded in the guest\n\n| key | value |\n|---|---|\n")
		for _, k := range res.InfoKeys {
			if k == "kernel" || k == "experiment" {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s |\n", k, cell(res.Info[k]))
		}
		b.WriteString("\n")
	}
	if cfg, err := os.ReadFile(filepath.Join(rep.In, "vscsid.yaml")); err == nil {
		fmt.Fprintf(&b, "## vscsid config\n\n```yaml\n%s```\n\n", cfg)
	}

	rep.pivotTables(&b, exp)
	rep.transports(&b, exp)
	rep.runsTable(&b)
	rep.commandsTable(&b)
	for _, h := range []struct{ title, name, dir, unit, file string }{
		{"Read transfer size per command (`vscsi_scsi_transfer_bytes_bucket{direction=\"read\"}` delta)", "vscsi_scsi_transfer_bytes", "read", "bytes", "transfer-read.svg"},
		{"Write transfer size per command (`vscsi_scsi_transfer_bytes_bucket{direction=\"write\"}` delta)", "vscsi_scsi_transfer_bytes", "write", "bytes", "transfer-write.svg"},
		{"Data segments per command (`vscsi_scsi_data_segments` delta)", "vscsi_scsi_data_segments", "", "segments", "segments.svg"},
	} {
		if err := rep.histTable(&b, h.title, h.name, h.dir, h.unit, h.file); err != nil {
			return "", err
		}
	}
	if err := rep.traces(&b); err != nil {
		return "", err
	}
	rep.outputs(&b)
	return b.String(), nil
}

// transports is sg-chaining's section on the two fabrics: the same sg_dd runs
// on one disk exported over iSCSI and over tcm_loop at once, from a boot
// of the full guest (the minimal one has no iSCSI target or initiator).
func (rep *Report) transports(b *strings.Builder, exp string) {
	if exp != "sg-chaining" {
		return
	}
	b.WriteString("## iSCSI beside tcm_loop\n\n")
	if strings.TrimSpace(rep.Transports) == "" {
		b.WriteString("Not run with this report: the iSCSI side needs the full guest (bookworm), `deploy/vm/full/run --suite chaining`, which `deploy/vm/experiments/run sg-chaining` boots for the bookworm suite.\n\n")
		return
	}
	b.WriteString("The same `sg_dd ... blk_sgio=1 dio=1` reads (64 MiB per run) on one 4 GiB fake_rw disk exported over LIO's iSCSI fabric (open-iscsi logged in over 127.0.0.1) and over tcm_loop at once, in one boot of the full guest (bookworm). " +
		"The READ columns are vscsid's transfer-size histogram deltas per run, cumulative (≤ 8 MiB counts the smaller ones too): over iSCSI 2048 pages arrive as 8 MiB commands, over tcm_loop 512 and 2048 pages are refused in the kernel (sg_dd exit status 99, EINVAL) and nothing above 128 KiB reaches vscsid. " +
		"The lone READ ≤ 128 KiB in each large-page row is sg_dd's READ CAPACITY. The limit is each transport's, not vscsid's.\n\n")
	b.WriteString(strings.TrimSpace(rep.Transports))
	b.WriteString("\n\n")
}

func (rep *Report) runsTable(b *strings.Builder) {
	var extra []string
	seen := map[string]bool{}
	for _, r := range rep.Res.Runs {
		for _, k := range r.Extra {
			if !seen[k] {
				seen[k] = true
				extra = append(extra, k)
			}
		}
	}
	b.WriteString("## Runs\n\nMB/s is the bytes vscsid moved (metrics delta) over the guest's wall time for the run (10^6 bytes). vscsid µs/cmd is the mean time vscsid's handler spent per command (`vscsi_scsi_command_duration_seconds` sum over count; the rest of a command's round trip is kernel, ring and emulator). CPU is the share of both guest CPUs from /proc/stat: `sys` = system+irq+softirq, `busy` = all but idle and iowait; both include vscsid itself, which runs in the guest.\n\n")
	b.WriteString("| run | device |")
	for _, k := range extra {
		fmt.Fprintf(b, " %s |", k)
	}
	b.WriteString(" exit | wall s | MiB read | MiB written | MB/s | data cmds | avg KiB/cmd | misaligned | vscsid µs/cmd | sys % | busy % | tool says |\n|---|---|")
	for range extra {
		b.WriteString("---|")
	}
	b.WriteString("---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rep.Res.Runs {
		rd, wr := r.Bytes()
		wall := r.Wall()
		cmds := r.DataCommands("read") + r.DataCommands("write")
		fmt.Fprintf(b, "| %s | %s |", r.Name, r.KV["device"])
		for _, k := range extra {
			fmt.Fprintf(b, " %s |", cell(r.KV[k]))
		}
		mbs := "–"
		if wall > 0 {
			mbs = fmt.Sprintf("%.1f", (rd+wr)/wall/1e6)
		}
		avg := "–"
		if cmds > 0 {
			avg = fmt.Sprintf("%.1f", (rd+wr)/cmds/1024)
		}
		mis := r.delta("vscsi_disk_misaligned_commands_total", r.dev())
		svc := "–"
		if n := r.delta("vscsi_scsi_command_duration_seconds_count", r.dev()); n > 0 {
			svc = fmt.Sprintf("%.0f", r.delta("vscsi_scsi_command_duration_seconds_sum", r.dev())/n*1e6)
		}
		sys, busy, ok := r.CPU()
		cpu := "– | –"
		if ok {
			cpu = fmt.Sprintf("%.0f | %.0f", sys, busy)
		}
		fmt.Fprintf(b, " %s | %.2f | %.1f | %.1f | %s | %.0f | %s | %.0f | %s | %s | %s |\n",
			r.KV["rc"], wall, rd/(1<<20), wr/(1<<20), mbs, cmds, avg, mis, svc, cpu, cell(keyLine(r.Output, r.KV["rc"] != "0")))
	}
	b.WriteString("\n")
}

func (rep *Report) commandsTable(b *strings.Builder) {
	names := map[string]bool{}
	per := make([]map[string]float64, len(rep.Res.Runs))
	for i, r := range rep.Res.Runs {
		per[i] = r.Commands()
		for k, v := range per[i] {
			if v != 0 {
				names[k] = true
			}
		}
	}
	if len(names) == 0 {
		return
	}
	cols := sortedKeys(names)
	b.WriteString("## SCSI commands seen by vscsid (`vscsi_scsi_commands_total` delta)\n\n| run |")
	for _, c := range cols {
		fmt.Fprintf(b, " %s |", c)
	}
	b.WriteString("\n|---|")
	for range cols {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for i, r := range rep.Res.Runs {
		fmt.Fprintf(b, "| %s |", r.Name)
		for _, c := range cols {
			fmt.Fprintf(b, " %.0f |", per[i][c])
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// histTable writes one histogram: a table with a row per configuration
// (each bin's median count over the repetitions, and the commands'
// median and range) and a chart of each configuration's shares per bin.
// The bins are every bucket of the histogram from its first (512 B for
// transfer sizes: the commands merging is about) to the largest one any
// run used, empty ones included: an empty small bin is a result.
func (rep *Report) histTable(b *strings.Builder, title, name, dir, unit, file string) error {
	cfgs := rep.configs()
	hist := func(r *Run) []Bucket {
		want := r.dev()
		if dir != "" {
			want["direction"] = dir
		}
		return HistDelta(r.Before, r.After, name, want)
	}
	var les []float64
	seen := map[float64]bool{}
	hi := math.Inf(-1)
	for _, c := range cfgs {
		for _, r := range c.runs {
			for _, bk := range hist(r) {
				if !seen[bk.Le] {
					seen[bk.Le] = true
					les = append(les, bk.Le)
				}
				if bk.Count != 0 {
					hi = math.Max(hi, bk.Le)
				}
			}
		}
	}
	if math.IsInf(hi, -1) {
		return nil
	}
	sort.Float64s(les)
	les = slices.DeleteFunc(les, func(le float64) bool { return le > hi })
	fmt.Fprintf(b, "## %s\n\nCommands per bin, one row per configuration: the median over its repetitions (n); a column is the bin up to and including its bound, every bin of the histogram from its first to the largest used. The chart shows each row's shares.\n\n| configuration | n | commands |", title)
	for _, le := range les {
		fmt.Fprintf(b, " ≤ %s |", human(le, unit))
	}
	b.WriteString("\n|---|---:|---:|")
	for range les {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	labels := make([]string, len(les))
	for j, le := range les {
		labels[j] = "≤ " + human(le, unit)
	}
	var rows []chart.ShareRow
	for _, c := range cfgs {
		per := make([][]float64, len(les)) // bin → count per repetition
		var totals []float64
		for _, r := range c.runs {
			h := hist(r)
			total := 0.0
			for j, le := range les {
				n := 0.0
				for _, bk := range h {
					if bk.Le == le {
						n = bk.Count
					}
				}
				per[j] = append(per[j], n)
				total += n
			}
			totals = append(totals, total)
		}
		tm, tl, th := chart.MedianSpread(totals)
		if tm == 0 && th == 0 {
			continue
		}
		cmds := chart.Short(tm)
		if tl != th {
			cmds += fmt.Sprintf(" (%s–%s)", chart.Short(tl), chart.Short(th))
		}
		fmt.Fprintf(b, "| %s | %d | %s |", cell(c.words), len(c.runs), cmds)
		counts := make([]float64, len(les))
		for j := range les {
			counts[j], _, _ = chart.MedianSpread(per[j])
			fmt.Fprintf(b, " %s |", chart.Short(counts[j]))
		}
		b.WriteString("\n")
		noun := " commands"
		if cmds == "1" {
			noun = " command"
		}
		rows = append(rows, chart.ShareRow{Label: c.words, Counts: counts, Note: cmds + noun})
	}
	if err := os.WriteFile(filepath.Join(rep.Out, file), []byte(chart.Shares(strings.ReplaceAll(title, "`", ""), labels, rows)), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(b, "\n![%s](%s)\n\n", strings.ReplaceAll(title, "`", ""), file)
	return nil
}

func (rep *Report) outputs(b *strings.Builder) {
	b.WriteString("## Tool output per run\n\n")
	for _, r := range rep.Res.Runs {
		out := strings.TrimRight(r.Output, "\n")
		if len(out) > 1500 {
			out = "…" + out[len(out)-1500:]
		}
		fmt.Fprintf(b, "**%s** (exit %s)\n\n```\n%s\n```\n\n", r.Name, r.KV["rc"], out)
	}
}

func human(v float64, unit string) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	if unit != "bytes" {
		return fmt.Sprintf("%.0f", v)
	}
	switch {
	case v >= 1<<20 && math.Mod(v, 1<<20) == 0:
		return fmt.Sprintf("%.0f MiB", v/(1<<20))
	case v >= 1024 && math.Mod(v, 1024) == 0:
		return fmt.Sprintf("%.0f KiB", v/1024)
	}
	return fmt.Sprintf("%.0f B", v)
}

// keyLine picks the line of a tool's output worth a table cell: the first error
// line of a failed run, the throughput line of a good one, else the last line.
func keyLine(s string, failed bool) string {
	for _, l := range strings.Split(s, "\n") {
		ll := strings.ToLower(l)
		if failed && (strings.Contains(ll, "error") || strings.Contains(ll, "invalid") || strings.Contains(ll, "cannot")) {
			return strings.TrimSpace(l)
		}
		if !failed && (strings.Contains(ll, " copied, ") || strings.Contains(ll, "mb/sec")) {
			return strings.TrimSpace(l)
		}
	}
	return lastLine(s)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return strings.TrimSpace(lines[i])
		}
	}
	return ""
}

// cell makes a string safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

func sortedKeys(m map[string]bool) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

func readEnv(path string) map[string]string {
	m := map[string]string{}
	b, err := os.ReadFile(path)
	if err != nil {
		return m
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}
