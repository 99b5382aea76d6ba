# vm-timeout: 1500
# iscsi: iSCSI over 127.0.0.1 (guest/iscsi.sh): a disk and a drive
# exported with targetcli, logged into by open-iscsi, 8 MiB tape blocks,
# persistent reservations from two initiators, sg chaining.
iscsi_run
