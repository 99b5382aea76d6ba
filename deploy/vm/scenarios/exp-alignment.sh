# vm-timeout: 600
# vm-pack: ./deploy/vm/experiments/aligntest
# exp-alignment: experiment, not a regression test (deploy/vm/experiments).
# From the mailing-list thread "IO buffer alignment for block devices": direct transfers from
# and to user buffers placed 4096, 512, 8, 4 and 1 bytes past a page
# boundary, through sd (O_DIRECT), sg (SG_IO with SG_FLAG_DIRECT_IO: the
# reply says whether the kernel mapped the pages or copied) and st (plain
# read/write; st maps the pages itself when try_direct_io and the alignment
# allow). The test program, aligntest (deploy/vm/experiments/aligntest), is
# built on the host into the harness (the vm-pack header).

CMD_TIMEOUT=120
mkdir -p /etc/vscsid
cat >/etc/vscsid/exp-alignment.yaml <<'YAML'
cmd_time_out: 10
devices:
  - name: adisk
    type: vdisk
    config: "size=1GiB;lbs=512;mode=fake_rw"
  - name: atape
    type: vtape
    config: "personality=generic;memory=1;capacity=64M;barcode=ALIGN1"
YAML
artefact /etc/vscsid/exp-alignment.yaml vscsid.yaml

. /vmtest/exp.sh

exp_start exp-alignment

AT=/vmtest/bin/aligntest
require check aligntest-packed sh -c "$AT -h 2>&1 | grep -qi usage"

require wait_for adisk-attached 30 "dev_node block adisk && dev_node sg adisk"
require wait_for atape-attached 30 "dev_node tape atape"
sd=$(dev_block adisk)
sg=$(dev_sg adisk)
TD=/dev/n$(dev_tape atape)
q=/sys/block/$sd/queue
exp_info "sd=$sd" "sg=$sg" "st=$TD" "sd.logical_block_size=$(cat $q/logical_block_size)" \
	"sd.dma_alignment=$(cat $q/dma_alignment 2>/dev/null || echo not-in-sysfs)" \
	"st.try_direct_io=$(cat /sys/bus/scsi/drivers/st/try_direct_io 2>/dev/null)" \
	"sg.allow_dio=$(cat /sys/module/sg/parameters/allow_dio 2>/dev/null)"
[ -w /sys/module/sg/parameters/allow_dio ] && echo 1 >/sys/module/sg/parameters/allow_dio
exp_info "sg.allow_dio.set=$(cat /sys/module/sg/parameters/allow_dio 2>/dev/null)"
check atape-variable "$MT" -f "$TD" setblk 0

BS=65536
for a in 4096 512 8 4 1; do
	for op in read write; do
		exp_run "sd-$op-a$a" adisk path=sd "op=$op" "align=$a" -- $AT -path sd -op $op -align $a -bs $BS -count 4 /dev/$sd
		exp_run "sg-$op-a$a" adisk path=sg "op=$op" "align=$a" -- $AT -path sg -op $op -align $a -bs $BS -count 4 /dev/$sg
	done
	check "st-rewind-a$a" "$MT" -f "$TD" rewind
	exp_run "st-write-a$a" atape path=st op=write "align=$a" -- $AT -path st -op write -align $a -bs $BS -count 4 "$TD"
	check "st-rewind2-a$a" "$MT" -f "$TD" rewind
	exp_run "st-read-a$a" atape path=st op=read "align=$a" -- $AT -path st -op read -align $a -bs $BS -count 4 "$TD"
done

# Traced once: what reaches vscsid of a write from a buffer 1 byte past a
# page boundary through sd (refused in the kernel) and through sg (bounced),
# and from an aligned one.
exp_trace sd-write-a1 adisk -- $AT -path sd -op write -align 1 -bs $BS -count 2 /dev/$sd
exp_trace sg-write-a1 adisk -- $AT -path sg -op write -align 1 -bs $BS -count 2 /dev/$sg
exp_trace sg-write-a4096 adisk -- $AT -path sg -op write -align 4096 -bs $BS -count 2 /dev/$sg

vscsid_stop vscsid-stop
wait_for no-residue 15 "[ -z \"\$(configfs_residue)\" ]"
kernel_clean kernel-log-clean
