# vm-timeout: 1800
# vm-test-all: no
# chaining: the sg-chaining runs (iSCSI beside tcm_loop) of the
# sg-chaining experiment's report.
iscsi_chaining_run
