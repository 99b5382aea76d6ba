# vm-timeout: 1500
# vm-test-all: no
# hosts-target: the target guest of the two-host scenario (guest/hosts.sh;
# vmtest.addr=A/N is this guest's address, vmtest.peer=A the initiator's).
hosts_target_run "$hosts_addr"
